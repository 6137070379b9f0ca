'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd-pledged-src-size.js:
// a ZstdCompress told `pledgedSrcSize` finishes only when that many bytes
// were written; a different number (more or fewer, or none for a pledge of
// some) fails the stream with ZSTD_error_srcSize_wrong. Each case writes
// 'x' repeated, ends the stream from the write's callback, and reads it.
// zstd is node:zlib's from Node 22.15 and 23.8: before, the drop-in's run
// goes alone.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

/** [pledgedSrcSize, bytes written], as upstream's six cases. */
const CASES = [
  [0, 0],
  [0, 42],
  [13, 42],
  [42, 0],
  [42, 13],
  [42, 42],
];

/** Compresses `actual` bytes with `pledged`; resolves with the stream's error, or null at 'end'. */
function compressWithPledge(zlib, pledged, actual) {
  return new Promise((resolve) => {
    const compressor = zlib.createZstdCompress({ pledgedSrcSize: pledged });
    compressor.on('error', resolve);
    compressor.on('end', () => resolve(null));
    compressor.write('x'.repeat(actual), () => {
      compressor.end();
      compressor.resume();
    });
  });
}

test('pledgedSrcSize: the stream finishes only when it was kept', async (t) => {
  if (!NODE_HAS_ZSTD) t.diagnostic('node:zlib has no zstd here: the drop-in runs alone');
  await both(
    async (zlib, _common, who) => {
      if (zlib === nodeZlib && !NODE_HAS_ZSTD) return;
      const errors = await Promise.all(
        CASES.map(([pledged, actual]) => compressWithPledge(zlib, pledged, actual)),
      );
      for (const [i, [pledged, actual]] of CASES.entries()) {
        const what = `${who}: pledgedSrcSize ${pledged}, ${actual} bytes written`;
        if (pledged === actual) {
          assert.equal(errors[i], null, `${what}: ${errors[i]?.stack}`);
        } else {
          assert.ok(errors[i] !== null, `${what}: no error`);
          assert.equal(errors[i].code, 'ZSTD_error_srcSize_wrong', `${what}: ${errors[i].stack}`);
        }
      }
    },
    { work: 'any' },
  );
});
