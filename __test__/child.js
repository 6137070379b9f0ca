'use strict';
// A script run in a Node process of its own, for tests that replace
// globals (Map.prototype.get, the Array iterator...) which the test runner
// itself uses.

const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

/**
 * Runs `script` with `node -e` from the repository's root (so that
 * `require('.')` is the package), with a minute as a hang guard; asserts it
 * exited with 0 and returns what it printed, trimmed.
 */
function runInChild(script) {
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim();
}

module.exports = { runInChild };
