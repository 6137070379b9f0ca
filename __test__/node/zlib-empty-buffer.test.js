'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-empty-buffer.js: an
// empty Buffer compressed and decompressed, sync and async (promisified),
// with deflateRaw, deflate, gzip and brotli, comes back as an empty Buffer.

const test = require('node:test');
const assert = require('node:assert/strict');
const { inspect, promisify } = require('node:util');
const { both } = require('./harness');

test('an empty Buffer round-trips', async () => {
  await both(async (zlib, _common, who) => {
    const emptyBuffer = Buffer.alloc(0);
    for (const [compress, decompress, method] of [
      [zlib.deflateRawSync, zlib.inflateRawSync, 'raw sync'],
      [zlib.deflateSync, zlib.inflateSync, 'deflate sync'],
      [zlib.gzipSync, zlib.gunzipSync, 'gzip sync'],
      [zlib.brotliCompressSync, zlib.brotliDecompressSync, 'br sync'],
      [promisify(zlib.deflateRaw), promisify(zlib.inflateRaw), 'raw'],
      [promisify(zlib.deflate), promisify(zlib.inflate), 'deflate'],
      [promisify(zlib.gzip), promisify(zlib.gunzip), 'gzip'],
      [promisify(zlib.brotliCompress), promisify(zlib.brotliDecompress), 'br'],
    ]) {
      const compressed = await compress(emptyBuffer);
      const decompressed = await decompress(compressed);
      assert.deepEqual(
        emptyBuffer,
        decompressed,
        `${who}: expected ${inspect(compressed)} to match ${inspect(decompressed)} for ${method}`,
      );
    }
  });
});
