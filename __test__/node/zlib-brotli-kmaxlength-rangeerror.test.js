'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-brotli-kmaxlength-rangeerror.js
// (nodejs/node#1811): when a decoded result would be larger than the
// largest Buffer, brotliDecompress() calls back with a RangeError and
// brotliDecompressSync() throws one.
//
// Upstream makes the limit small by setting `buffer.kMaxLength` to 64
// before node:zlib is first loaded (node:zlib reads it then). That needs a
// process where the module is not loaded yet: here a child process per
// run, loading node:zlib or `@tidepool-rs/pool/zlib` after the change (its
// pool work runs in the child, so the harness cannot count it: `work:
// false`). The first test asks for the same limit the documented way, with
// `maxOutputLength: 64`, in this process.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { both } = require('./harness');

/** 128 bytes once decoded. */
const encoded = Buffer.from('G38A+CXCIrFAIAM=', 'base64');

test('a result over maxOutputLength is a RangeError, async and sync', async () => {
  await both(
    async (zlib, common, who) => {
      const err = await new Promise((resolve) => {
        zlib.brotliDecompress(
          encoded,
          { maxOutputLength: 64 },
          common.mustCall((err, result) => {
            assert.equal(result, undefined, who);
            resolve(err);
          }),
        );
      });
      assert.ok(err instanceof RangeError, `${who}: ${err}`);
      assert.throws(() => zlib.brotliDecompressSync(encoded, { maxOutputLength: 64 }), RangeError);
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
try {
  zlib.brotliDecompressSync(encoded);
  out.sync = 'no error';
} catch (err) {
  out.sync = err instanceof RangeError ? 'RangeError' : String(err);
}
zlib.brotliDecompress(encoded, (err, result) => {
  out.async = err instanceof RangeError ? 'RangeError' : err ? String(err) : 'no error: ' + result.length + ' bytes';
  console.log(JSON.stringify(out));
  zlib.pool?.close();
});
`;

// Fails on tidepool: lib/codecs/options.js takes its default limit from
// buffer.constants.MAX_LENGTH, not from buffer.kMaxLength as node:zlib does
// when it loads. See the report of this adaptation.
test('a result over buffer.kMaxLength (set before the module loads) is a RangeError', async () => {
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
