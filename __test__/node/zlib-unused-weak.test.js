'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-unused-weak.js: streams
// that are made and never used do not keep themselves alive: garbage
// collection takes them, and the native memory they hold.
//
// Upstream runs with --expose-gc --no-concurrent-array-buffer-sweeping:
// node --test gives a file no flags, so both are set at run time
// (v8.setFlagsFromString). Its check, that after gc() at most 5 % of the
// external memory 100 new Gzip streams took is left, holds for both, each
// read where its memory is counted: node:zlib's in
// process.memoryUsage().external (its unused streams' output buffers, as
// upstream reads it; its zlib state is made at the first write), a pool
// stream's in V8's count of reported native memory (its codec's state, in
// Rust, reported with napi_adjust_external_memory, which
// process.memoryUsage() does not show: the addon's externalMemory() reads
// it). A pool stream gives its memory back when its handle's finalizer
// runs, which Node defers past gc(): that is waited for. Also for both,
// each of 100 unused streams, held only by a WeakRef, is collected (gc()
// called until they are, up to a deadline).

const test = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('node:v8');
const vm = require('node:vm');
const { both } = require('./harness');
const { waitFor } = require('../wait');
const { binding } = require('../../lib/addon/binding');

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
      const external =
        who === 'node:zlib' ? () => process.memoryUsage().external : () => binding.externalMemory();
      gc();
      const before = external();
      for (let i = 0; i < 100; ++i) zlib.createGzip();
      const afterCreation = external();
      assert.ok(afterCreation > before, `${who}: 100 new streams took no external memory`);
      const ratio = () => (external() - before) / (afterCreation - before);
      await waitFor(
        () => {
          gc();
          return ratio() <= 0.05;
        },
        {
          what: `${who}: the after-GC delta to be at most 5 % of the before-GC delta ${afterCreation - before}`,
          state: () => `after-GC delta ${external() - before}`,
        },
      );

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
