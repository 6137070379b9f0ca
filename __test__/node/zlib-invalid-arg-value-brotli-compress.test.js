'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-invalid-arg-value-brotli-compress.js:
// BrotliCompress(), called without `new`, throws ERR_INVALID_ARG_TYPE when
// a value of `options.params` is neither a number nor a boolean. (No
// compression runs: `work: false`.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('a brotli parameter that is a string is ERR_INVALID_ARG_TYPE', async () => {
  await both(
    (zlib) => {
      const options = { params: { [zlib.constants.BROTLI_PARAM_MODE]: 'lol' } };
      assert.throws(() => zlib.BrotliCompress(options), { code: 'ERR_INVALID_ARG_TYPE' });
    },
    { work: false },
  );
});
