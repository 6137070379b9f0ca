'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd-kmaxlength-rangeerror.js
// (nodejs/node#1811): when a decoded result would be larger than the
// largest Buffer, zstdDecompress() calls back with a RangeError and
// zstdDecompressSync() throws one.
//
// Upstream makes the limit small by setting `buffer.kMaxLength` to 64
// before node:zlib is first loaded (node:zlib reads it then). That needs a
// process where the module is not loaded yet: here a child process per
// run, loading node:zlib or `@tidepool-rs/pool/zlib` after the change (its
// pool work runs in the child, so the harness cannot count it: `work:
// false`). The first test asks for the same limit the documented way, with
// `maxOutputLength: 64`, in this process. zstd is node:zlib's from Node
// 22.15 and 23.8: before, the drop-in's run goes alone, its sync check
// made only where the module has a zstdDecompressSync.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

/** 'a' 128 times, by zstd. */
const encoded = Buffer.from('KLUv/SCARQAAEGFhAQA7BVg=', 'base64');

test('a result over maxOutputLength is a RangeError, async and sync', async (t) => {
  if (!NODE_HAS_ZSTD) t.diagnostic('node:zlib has no zstd here: the drop-in runs alone');
  await both(
    async (zlib, common, who) => {
      if (zlib === nodeZlib && !NODE_HAS_ZSTD) return;
      const err = await new Promise((resolve) => {
        zlib.zstdDecompress(
          encoded,
          { maxOutputLength: 64 },
          common.mustCall((err, result) => {
            assert.equal(result, undefined, who);
            resolve(err);
          }),
        );
      });
      assert.ok(err instanceof RangeError, `${who}: ${err}`);
      if (typeof zlib.zstdDecompressSync === 'function') {
        assert.throws(
          () => zlib.zstdDecompressSync(encoded, { maxOutputLength: 64 }),
          RangeError,
          who,
        );
      }
    },
    { work: 'any' },
  );
});

/** The child: sets buffer.kMaxLength to 64, loads the module, prints what both calls did. */
const CHILD = `
const buffer = require('node:buffer');
const oldkMaxLength = buffer.kMaxLength;
buffer.kMaxLength = 64;
const zlib = require(process.argv[1]);
buffer.kMaxLength = oldkMaxLength;
const encoded = Buffer.from(process.argv[2], 'base64');
const out = {};
if (typeof zlib.zstdDecompressSync === 'function') {
  try {
    zlib.zstdDecompressSync(encoded);
    out.sync = 'no error';
  } catch (err) {
    out.sync = err instanceof RangeError ? 'RangeError' : String(err);
  }
}
zlib.zstdDecompress(encoded, (err, result) => {
  out.async = err instanceof RangeError ? 'RangeError' : err ? String(err) : 'no error: ' + result.length + ' bytes';
  console.log(JSON.stringify(out));
  zlib.pool?.close();
});
`;

test('a result over buffer.kMaxLength (set before the module loads) is a RangeError', async () => {
  await both(
    async (zlib, _common, who) => {
      if (who === 'node:zlib' && !NODE_HAS_ZSTD) return;
      const module = who === 'node:zlib' ? 'node:zlib' : require.resolve('@tidepool-rs/pool/zlib');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['-e', CHILD, module, encoded.toString('base64')],
        { timeout: 30_000 },
      );
      // The child checks the sync function where the module has one.
      const expected =
        typeof zlib.zstdDecompressSync === 'function'
          ? { sync: 'RangeError', async: 'RangeError' }
          : { async: 'RangeError' };
      assert.deepEqual(JSON.parse(stdout), expected, who);
    },
    { work: false },
  );
});
