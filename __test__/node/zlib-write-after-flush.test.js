'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-write-after-flush.js:
// a flush() before any write, then a write and the end, piped into the
// decoder (gzip and brotli): no failure, and the line comes out whole.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('flush() then write(): the data comes out whole', async () => {
  await both(async (zlib, common, who) => {
    for (const [createCompress, createDecompress] of [
      [zlib.createGzip, zlib.createGunzip],
      [zlib.createBrotliCompress, zlib.createBrotliDecompress],
    ]) {
      const compress = createCompress();
      const decompress = createDecompress();
      compress.pipe(decompress);

      let output = '';
      const input = 'A line of data\n';
      decompress.setEncoding('utf8');
      decompress.on('data', (chunk) => (output += chunk));
      const ended = new Promise((resolve, reject) => {
        decompress.on('end', common.mustCall(resolve));
        compress.on('error', reject);
        decompress.on('error', reject);
      });

      compress.flush();
      compress.write(input);
      compress.end();
      decompress.read(0);
      await ended;
      assert.equal(output, input, `${who}: ${createCompress.name}`);
    }
  });
});
