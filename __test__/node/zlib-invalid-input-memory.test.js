'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-invalid-input-memory.js
// (nodejs/node#22705): a stream whose codec failed (an Inflate given bytes
// that are not zlib's) can still be garbage-collected.
//
// Upstream runs with --expose-gc and watches the stream with test/common's
// onGC() (an async_hooks destroy hook). node --test gives a file no flags:
// here gc() is exposed at run time (v8.setFlagsFromString), and the
// stream is watched by a FinalizationRegistry, gc() called until it is
// collected, up to a deadline (waitFor).

const test = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('node:v8');
const vm = require('node:vm');
const { both } = require('./harness');
const { waitFor } = require('../wait');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

/**
 * An Inflate given 'foobar', watched by `registry`; resolves at its
 * 'error'. Nothing here keeps the stream once it is made.
 */
function failingInflate(zlib, common, registry) {
  const strm = zlib.createInflate();
  registry.register(strm, 'inflate');
  strm.end(Buffer.from('foobar'));
  return new Promise((resolve) => {
    strm.once(
      'error',
      common.mustCall((err) => {
        assert.ok(err);
        resolve();
      }),
    );
  });
}

test('a stream that failed can be garbage-collected', async () => {
  await both(
    async (zlib, common, who) => {
      let collected = false;
      const registry = new FinalizationRegistry(() => (collected = true));
      await failingInflate(zlib, common, registry);
      await waitFor(
        () => {
          gc();
          return collected;
        },
        { what: `${who}: the failed stream to be collected` },
      );
    },
    { work: 'any' },
  );
});
