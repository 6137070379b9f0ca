'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-kmaxlength-rangeerror.js
// (nodejs/node#1811): when a gunzipped result would be larger than the
// largest Buffer, gunzip() calls back with a RangeError and gunzipSync()
// throws one.
//
// Upstream makes the limit small by setting `buffer.kMaxLength` to 64
// before node:zlib is first loaded (node:zlib reads it then). That needs a
// process where the module is not loaded yet: here a child process per
// run, loading node:zlib or `@tidepool-rs/pool/zlib` after the change (its
// pool work runs in the child, so the harness cannot count it: `work:
// false`). The first test asks for the same limit the documented way,
// with `maxOutputLength: 64`, in this process.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { both } = require('./harness');

/** Gzip of 128 bytes ('a' x 128). */
const encoded = Buffer.from('H4sIAAAAAAAAA0tMHFgAAIw2K/GAAAAA', 'base64');

test('a gunzipped result over maxOutputLength is a RangeError, async and sync', async () => {
  await both(
    async (zlib, common, who) => {
      const err = await new Promise((resolve) => {
        zlib.gunzip(
          encoded,
          { maxOutputLength: 64 },
          common.mustCall((err) => resolve(err)),
        );
      });
      assert.ok(err instanceof RangeError, `${who}: ${err}`);
      assert.throws(() => zlib.gunzipSync(encoded, { maxOutputLength: 64 }), RangeError);
    },
    { work: 'any' },
  );
});

/** The child: sets buffer.kMaxLength to 64, loads the module, prints what both calls did. */
const CHILD = `
const buffer = require('node:buffer');
const saved = buffer.kMaxLength;
buffer.kMaxLength = 64;
const zlib = require(process.argv[1]);
buffer.kMaxLength = saved;
const encoded = Buffer.from(process.argv[2], 'base64');
const what = (err) => (err instanceof RangeError ? 'RangeError' : String(err));
const out = {};
try {
  zlib.gunzipSync(encoded);
  out.sync = 'no error';
} catch (err) {
  out.sync = what(err);
}
zlib.gunzip(encoded, (err, result) => {
  out.async = err ? what(err) : 'no error: ' + result.length + ' bytes';
  console.log(JSON.stringify(out));
  zlib.pool?.close();
});
`;

// Fails on tidepool: lib/codecs/options.js takes its default limit from
// buffer.constants.MAX_LENGTH, not from buffer.kMaxLength as node:zlib
// does when it loads. See the report of this adaptation.
test('a gunzipped result over buffer.kMaxLength (set before the module loads) is a RangeError', async () => {
  await both(
    async (_zlib, _common, who) => {
      const module = who === 'node:zlib' ? 'node:zlib' : require.resolve('@tidepool-rs/pool/zlib');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['-e', CHILD, module, encoded.toString('base64')],
        { timeout: 30_000 },
      );
      assert.deepEqual(JSON.parse(stdout), { sync: 'RangeError', async: 'RangeError' }, who);
    },
    { work: false },
  );
});
