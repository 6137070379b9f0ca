'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-premature-end.js: a
// decoder whose stream ends before its input does (trailing data) ends by
// itself, whichever way the bytes were written, and has taken only the
// stream's bytes.

const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const { both } = require('./adapter');

test('a decoder ends at the end of its stream, trailing data or not', async () => {
  await both(async (z, who) => {
    const input = '0123456789'.repeat(4);
    for (const [compress, decompressor] of [
      [zlib.deflateRawSync, 'createInflateRaw'],
      [zlib.deflateSync, 'createInflate'],
      [zlib.brotliCompressSync, 'createBrotliDecompress'],
    ]) {
      const compressed = compress(input);
      const trailingData = Buffer.from('not valid compressed data');
      for (const variant of [
        (stream) => stream.end(compressed),
        (stream) => {
          stream.write(compressed);
          stream.write(trailingData);
        },
        (stream) => {
          stream.write(compressed);
          stream.end(trailingData);
        },
        (stream) => stream.write(Buffer.concat([compressed, trailingData])),
        (stream) => stream.end(Buffer.concat([compressed, trailingData])),
      ]) {
        let output = '';
        const stream = z[decompressor]();
        stream.setEncoding('utf8');
        stream.on('data', (chunk) => (output += chunk));
        const ended = new Promise((resolve, reject) => {
          stream.on('end', resolve);
          stream.on('error', reject);
        });
        variant(stream);
        await ended;
        assert.equal(output, input, `${who} ${decompressor}`);
        assert.equal(
          stream.bytesWritten,
          compressed.length,
          `${who} ${decompressor}: bytesWritten`,
        );
      }
    }
  });
});
