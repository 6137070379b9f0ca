'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-not-string-or-buffer.js:
// deflateSync() of something that is neither a string nor binary data is
// ERR_INVALID_ARG_TYPE, with Node's message. (The module's *Sync functions
// are node:zlib's own, run on the calling thread: no pool work, `work:
// false`; the test keeps them so.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('deflateSync() of a non-string, non-buffer is ERR_INVALID_ARG_TYPE', async () => {
  await both(
    (zlib, common) => {
      for (const input of [undefined, null, true, false, 0, 1, [1, 2, 3], { foo: 'bar' }]) {
        assert.throws(() => zlib.deflateSync(input), {
          code: 'ERR_INVALID_ARG_TYPE',
          name: 'TypeError',
          message:
            'The "buffer" argument must be of type string or an instance of Buffer, ' +
            'TypedArray, DataView, or ArrayBuffer.' +
            common.invalidArgTypeHelper(input),
        });
      }
    },
    { work: false },
  );
});
