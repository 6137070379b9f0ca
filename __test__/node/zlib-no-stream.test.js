'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-no-stream.js
// (nodejs/node#36615): gzipSync() works in a process that has loaded
// nothing but the module, no stream module first.
//
// Upstream is a file that loads no test helper (they load node:stream);
// node --test has loaded node:stream long before a test runs, so each run
// is a fresh child process (`node -e`) that loads node:zlib or
// `@tidepool-rs/pool/zlib` and nothing else, gzips, and prints the result
// (checked here: it gunzips to the input). The module's gzipSync is
// node:zlib's own (no pool work: `work: false`); the child must also exit
// by itself once done (the module starts no pool for it).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

/** The child: loads the module named by argv[1] only, prints gzipSync('fooobar') in base64. */
const CHILD = `
const { gzipSync } = require(process.argv[1]);
process.stdout.write(gzipSync('fooobar').toString('base64'));
`;

test('gzipSync() in a process that loaded nothing else', async () => {
  await both(
    async (_zlib, _common, who) => {
      const module = who === 'node:zlib' ? 'node:zlib' : require.resolve('@tidepool-rs/pool/zlib');
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['-e', CHILD, module],
        { timeout: 30_000 },
      );
      assert.equal(stderr, '', who);
      assert.equal(nodeZlib.gunzipSync(Buffer.from(stdout, 'base64')).toString(), 'fooobar', who);
    },
    { work: false },
  );
});
