'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-negative-zero.js:
// crc32() takes -0 as its running value, as 0.
//
// Before the fix (Node 20 and 22 here) node:zlib's crc32 does not throw
// on -0: its binding's check fails and the process aborts. So each run is
// a child process, and node:zlib's child tells whether this Node has the
// fix: where it does not (the child dies), the drop-in's run goes alone.
// The module's crc32 takes -0 as 0 before node:zlib's sees it
// (lib/zlib/index.js), so it holds on every line. Its work is in the
// child (no pool work here: `work: false`).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { both } = require('./harness');

/** The child: loads the module named by argv[1], prints whether crc32('', -0) is crc32('', 0). */
const CHILD = `
const zlib = require(process.argv[1]);
console.log(JSON.stringify(zlib.crc32('', -0) === zlib.crc32('', 0)));
`;

/** Runs CHILD on `module`: { code, signal, stdout }, whatever the child did. */
function runChild(module) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', CHILD, module], { timeout: 30_000 }, (err, stdout) => {
      resolve({ code: err ? err.code : 0, signal: err ? err.signal : null, stdout });
    });
  });
}

test('crc32() takes -0 as 0', async (t) => {
  // Whether node:zlib has the fix: its child runs to the end.
  const control = await runChild('node:zlib');
  const nodeHasFix = control.code === 0;
  if (!nodeHasFix)
    t.diagnostic(`node:zlib's crc32 aborts on -0 here (${control.signal}): the drop-in runs alone`);
  await both(
    async (_zlib, _common, who) => {
      if (who === 'node:zlib' && !nodeHasFix) return;
      const module = who === 'node:zlib' ? 'node:zlib' : require.resolve('@tidepool-rs/pool/zlib');
      const { code, signal, stdout } = who === 'node:zlib' ? control : await runChild(module);
      assert.equal(code, 0, `${who}: the child failed (signal ${signal})`);
      assert.equal(JSON.parse(stdout), true, who);
    },
    { work: false },
  );
});
