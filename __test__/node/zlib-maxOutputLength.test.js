'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-maxOutputLength.js:
// a brotli input of 128 bytes decoded: with `maxOutputLength: 64`
// brotliDecompress() calls back with ERR_BUFFER_TOO_LARGE (and Node's
// message) and brotliDecompressSync() throws a RangeError; with 256 both
// succeed.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** Brotli of 128 bytes. */
const encoded = Buffer.from('G38A+CXCIrFAIAM=', 'base64');

test('maxOutputLength: over it an error, under it the result', async () => {
  await both(
    async (zlib, common) => {
      await new Promise((resolve) => {
        zlib.brotliDecompress(
          encoded,
          { maxOutputLength: 64 },
          common.mustCall((err) => {
            common.expectsError({
              code: 'ERR_BUFFER_TOO_LARGE',
              message: 'Cannot create a Buffer larger than 64 bytes',
            })(err);
            resolve();
          }),
        );
      });
      assert.throws(() => zlib.brotliDecompressSync(encoded, { maxOutputLength: 64 }), RangeError);

      await new Promise((resolve) => {
        zlib.brotliDecompress(
          encoded,
          { maxOutputLength: 256 },
          common.mustCall((err) => {
            assert.equal(err, null);
            resolve();
          }),
        );
      });
      zlib.brotliDecompressSync(encoded, { maxOutputLength: 256 });
    },
    { work: 'any' },
  );
});
