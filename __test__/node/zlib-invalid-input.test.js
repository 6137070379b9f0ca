'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-invalid-input.js:
// gunzip() of a non-string, non-buffer throws ERR_INVALID_ARG_TYPE; each
// decoder (made without `new`) given bytes that are not its format emits
// 'error', and never 'end'.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both, event } = require('./harness');

test('invalid input: gunzip() throws, the decoders emit an error and no end', async () => {
  await both(
    async (zlib, common, who) => {
      const nonStringInputs = [1, true, { a: 1 }, ['a']];
      const threw = common.mustCall(() => {}, nonStringInputs.length);
      for (const input of nonStringInputs) {
        assert.throws(() => zlib.gunzip(input), {
          name: 'TypeError',
          code: 'ERR_INVALID_ARG_TYPE',
        });
        threw();
      }

      const decoders = [
        zlib.Unzip(),
        zlib.Gunzip(),
        zlib.Inflate(),
        zlib.InflateRaw(),
        zlib.BrotliDecompress(),
      ];
      const errors = [];
      for (const decoder of decoders) {
        errors.push(event(decoder, 'error'));
        decoder.on('error', common.mustCall());
        decoder.on('end', common.mustNotCall(`${who}: 'end' of ${decoder.constructor.name}`));
        decoder.write('this is not valid compressed data.');
      }
      await Promise.all(errors);
      // An 'end' after the error would come by the next turn.
      await new Promise((resolve) => setImmediate(resolve));
    },
    { work: 'any' },
  );
});
