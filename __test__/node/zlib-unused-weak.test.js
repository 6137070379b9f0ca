'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-unused-weak.js: streams
// that are made and never used do not keep themselves alive: garbage
// collection takes them, and the native memory they hold.
//
// Upstream runs with --expose-gc --no-concurrent-array-buffer-sweeping:
// node --test gives a file no flags, so both are set at run time
// (v8.setFlagsFromString). Its check, that after gc() less than 5 % of
// the external memory 100 new Gzip streams took is left, is kept for
// node:zlib only: its handles report their zlib state to V8 as external
// memory, a pool stream's state (in Rust) is not reported, so its ratio is
// 0/0 (noise). For both, each of 100 unused streams, held only by a
// WeakRef, is collected (gc() called until they are, up to a deadline).

const test = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('node:v8');
const vm = require('node:vm');
const { both } = require('./harness');
const { waitFor } = require('../wait');

v8.setFlagsFromString('--expose-gc');
v8.setFlagsFromString('--no-concurrent-array-buffer-sweeping');
const gc = vm.runInNewContext('gc');

/** 100 unused Gzip streams, each held only by the WeakRef returned. */
function unusedStreams(zlib) {
  const refs = [];
  for (let i = 0; i < 100; ++i) refs.push(new WeakRef(zlib.createGzip()));
  return refs;
}

test('unused streams are garbage-collected', async () => {
  await both(
    async (zlib, _common, who) => {
      gc();
      const before = process.memoryUsage().external;
      for (let i = 0; i < 100; ++i) zlib.createGzip();
      const afterCreation = process.memoryUsage().external;
      gc();
      const afterGC = process.memoryUsage().external;
      if (who === 'node:zlib') {
        assert.ok(
          (afterGC - before) / (afterCreation - before) <= 0.05,
          `Expected after-GC delta ${afterGC - before} to be less than 5 % ` +
            `of before-GC delta ${afterCreation - before}`,
        );
      }

      const refs = unusedStreams(zlib);
      // A WeakRef keeps its target for the rest of the job it was made in.
      await new Promise((resolve) => setImmediate(resolve));
      await waitFor(
        () => {
          gc();
          return refs.every((ref) => ref.deref() === undefined);
        },
        {
          what: `${who}: 100 unused streams to be collected`,
          state: () => `${refs.filter((ref) => ref.deref() !== undefined).length} alive`,
        },
      );
    },
    { work: false },
  );
});
