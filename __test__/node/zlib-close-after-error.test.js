'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-close-after-error.js
// (nodejs/node#6034): a decoder given bad input emits 'error' once, closed
// by then, and close() from the error handler is harmless.
//
// Deviation: upstream reads node:zlib's `_closed` (its own bookkeeping,
// undocumented; a pool stream has none). The same is checked with the
// public `destroyed` in both runs; `_closed` only in node:zlib's, to show
// that it says the same there. (Upstream's `createGunzip(15)` is kept: a
// number where the options go is ignored.)

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
      if (who === 'node:zlib') assert.equal(decompress._closed, false);
      decompress.write('something invalid');
      await closed;
      assert.equal(atError.err.code, 'Z_DATA_ERROR', who);
      assert.equal(atError.destroyed, true, who);
      if (who === 'node:zlib') assert.equal(atError._closed, true);
    },
    { work: 'any' },
  );
});
