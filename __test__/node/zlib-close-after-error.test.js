'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-close-after-error.js
// (nodejs/node#6034): a decoder given bad input emits 'error' once, closed
// by then, and close() from the error handler is harmless.
//
// Upstream reads node:zlib's `_closed` (its own bookkeeping, undocumented,
// which code written for node:zlib may read): it is checked in both runs,
// and so is the public `destroyed`. (Upstream's `createGunzip(15)` is
// kept: a number where the options go is ignored.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('close() in the error handler of a failed decoder', async () => {
  await both(
    async (zlib, common, who) => {
      const decompress = zlib.createGunzip(15);
      const closed = new Promise((resolve) => decompress.on('close', common.mustCall(resolve)));
      let atError;
      decompress.on(
        'error',
        common.mustCall((err) => {
          atError = { err, destroyed: decompress.destroyed, _closed: decompress._closed };
          decompress.close();
        }),
      );
      assert.equal(decompress.destroyed, false, who);
      assert.equal(decompress._closed, false, `${who}: _closed`);
      decompress.write('something invalid');
      await closed;
      assert.equal(atError.err.code, 'Z_DATA_ERROR', who);
      assert.equal(atError.destroyed, true, who);
      assert.equal(atError._closed, true, `${who}: _closed at 'error'`);
    },
    { work: 'any' },
  );
});
