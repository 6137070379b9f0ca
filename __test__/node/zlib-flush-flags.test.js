'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-flush-flags.js: Gzip
// takes Z_SYNC_FLUSH as options.flush and as options.finishFlush; a string
// there is ERR_INVALID_ARG_TYPE, 10000 ERR_OUT_OF_RANGE (0 to Z_BLOCK),
// with node:zlib's messages.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** node:zlib's errors for `options[name]`. */
function checkRange(zlib, name) {
  assert.throws(() => zlib.createGzip({ [name]: 'foobar' }), {
    code: 'ERR_INVALID_ARG_TYPE',
    name: 'TypeError',
    message: `The "options.${name}" property must be of type number. Received type string ('foobar')`,
  });
  assert.throws(() => zlib.createGzip({ [name]: 10000 }), {
    code: 'ERR_OUT_OF_RANGE',
    name: 'RangeError',
    message: `The value of "options.${name}" is out of range. It must be >= 0 and <= 5. Received 10000`,
  });
}

test('options.flush: Z_SYNC_FLUSH taken, a string or 10000 refused', async () => {
  await both(
    (zlib) => {
      zlib.createGzip({ flush: zlib.constants.Z_SYNC_FLUSH }).destroy();
      checkRange(zlib, 'flush');
    },
    { work: false },
  );
});

test('options.finishFlush: a string or 10000 refused', async () => {
  await both(
    (zlib) => {
      checkRange(zlib, 'finishFlush');
    },
    { work: false },
  );
});

// Fails on tidepool, on purpose (lib/codecs/options.js): its encoders always
// end with Z_FINISH, and another finishFlush is ERR_TIDEPOOL_ZLIB_UNSUPPORTED.
test('options.finishFlush: Z_SYNC_FLUSH taken', async () => {
  await both(
    (zlib) => {
      zlib.createGzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }).destroy();
    },
    { work: false },
  );
});
