'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-premature-end.js: a
// decoder whose stream ends before its input does (trailing data) ends by
// itself, whichever way the bytes were written, and has taken only the
// stream's bytes.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('a decoder ends at the end of its stream, trailing data or not', async () => {
  await both(async (zlib, _common, who) => {
    const input = '0123456789'.repeat(4);
    for (const [compress, decompressor] of [
      ['deflateRawSync', 'createInflateRaw'],
      ['deflateSync', 'createInflate'],
      ['brotliCompressSync', 'createBrotliDecompress'],
    ]) {
      const compressed = zlib[compress](input);
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
        const stream = zlib[decompressor]();
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
