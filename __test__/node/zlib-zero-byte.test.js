'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zero-byte.js: an empty
// write then the end, on Gzip and BrotliCompress made without `new`: an
// empty gzip member is 20 bytes, an empty brotli stream 1; 'finish' and
// 'end' both come.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('an empty input compresses to an empty stream of the format', async () => {
  await both(async (zlib, common, who) => {
    for (const Compressor of [zlib.Gzip, zlib.BrotliCompress]) {
      const compressor = Compressor();
      let received = 0;
      compressor.on('data', (chunk) => (received += chunk.length));
      const ended = new Promise((resolve, reject) => {
        compressor.on('end', common.mustCall(resolve));
        compressor.on('error', reject);
      });
      compressor.on('finish', common.mustCall());
      compressor.write(Buffer.alloc(0));
      compressor.end();
      await ended;
      const expected = Compressor === zlib.Gzip ? 20 : 1;
      assert.equal(received, expected, `${who}: ${Compressor.name}`);
    }
  });
});
