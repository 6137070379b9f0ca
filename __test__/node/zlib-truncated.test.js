'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-truncated.js: each
// deflate-family format compressed by the async one-shot, then decoded
// whole (sync and async: the input back), cut in half (sync throws, async
// calls back "unexpected end of file"), and cut in half with `finishFlush:
// Z_SYNC_FLUSH` (sync and async: a prefix of the input, no error).

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

const inputString =
  'ΩΩLorem ipsum dolor sit amet, consectetur adipiscing elit. Morbi faucibus, purus at ' +
  'gravida dictum, libero arcu convallis lacus, in commodo libero metus eu nisi. Nullam ' +
  'commodo, neque nec porta placerat, nisi est fermentum augue, vitae gravida tellus ' +
  'sapien sit amet tellus. Aenean non diam orci. Proin quis elit turpis. Suspendisse non ' +
  'diam ipsum. Suspendisse nec ullamcorper odio. Vestibulum arcu mi, sodales non suscipit ' +
  'id, ultrices ut massa. Sed ac sem sit amet arcu malesuada fermentum. Nunc sed. ';

const errMessage = /unexpected end of file/;

/** `fn(...args, callback)` as a promise of the callback's [err, result]; it must come once. */
const call = (common, fn, ...args) =>
  new Promise((resolve) =>
    fn(
      ...args,
      common.mustCall((err, result) => resolve([err, result])),
    ),
  );

test('truncated input: an error, or a prefix with finishFlush Z_SYNC_FLUSH', async () => {
  await both(
    async (zlib, common, who) => {
      for (const [comp, decomp] of [
        ['gzip', 'gunzip'],
        ['gzip', 'unzip'],
        ['deflate', 'inflate'],
        ['deflateRaw', 'inflateRaw'],
      ]) {
        const what = `${who}: ${comp} -> ${decomp}`;
        const decompSync = zlib[`${decomp}Sync`];
        const [err, compressed] = await call(common, zlib[comp], inputString);
        assert.ifError(err);
        const truncated = compressed.subarray(0, compressed.length / 2);
        const toUTF8 = (buffer) => buffer.toString('utf-8');

        // Whole: sync and async.
        assert.equal(toUTF8(decompSync(compressed)), inputString, what);
        const [wholeErr, whole] = await call(common, zlib[decomp], compressed);
        assert.ifError(wholeErr);
        assert.equal(toUTF8(whole), inputString, what);

        // Truncated: sync and async.
        assert.throws(() => decompSync(truncated), errMessage, what);
        const [cutErr] = await call(common, zlib[decomp], truncated);
        assert.match(cutErr?.message, errMessage, what);

        // Truncated, finishFlush Z_SYNC_FLUSH: sync and async.
        const syncFlushOpt = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
        const result = toUTF8(decompSync(truncated, syncFlushOpt));
        assert.equal(result, inputString.substr(0, result.length), what);
        const [flushErr, flushed] = await call(common, zlib[decomp], truncated, syncFlushOpt);
        assert.ifError(flushErr);
        const asyncResult = toUTF8(flushed);
        assert.equal(asyncResult, inputString.substr(0, asyncResult.length), what);
      }
    },
    { work: 'any' },
  );
});
