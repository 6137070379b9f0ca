'use strict';
// What the drop-ins' tests (zlib-module, crypto-module) check alike:
// install() and uninstall() round trips, install()'s argument errors, and
// a child Node run in the repository. Not a test file itself.

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { Pool } = require('..');

const root = path.join(__dirname, '..');

/**
 * A child `node args`, run in the repository (so the package resolves by
 * its name); asserts it exited 0 and returns its stdout, trimmed.
 */
function childOutput(args) {
  const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim();
}

/**
 * `dropin.install({ pool })` on a new pool: again with the same pool it
 * changes nothing, with another it throws `installedCode`; `routed(pool)`
 * runs while installed. Then uninstall() must put back exactly the
 * descriptors `names` had on `nodeModule`, and install()'s arguments are
 * checked as node's are.
 */
async function installRoundTrip({ nodeModule, dropin, names, installedCode, routed }) {
  const before = names.map((name) => Object.getOwnPropertyDescriptor(nodeModule, name));
  const pool = new Pool();
  try {
    dropin.install({ pool });
    dropin.install({ pool }); // again, the same pool: nothing changes
    assert.throws(() => dropin.install({ pool: new Pool() }), { code: installedCode });
    assert.equal(dropin.pool, pool);
    await routed(pool);
  } finally {
    dropin.uninstall();
    await pool.close();
  }
  const after = names.map((name) => Object.getOwnPropertyDescriptor(nodeModule, name));
  assert.deepEqual(after, before);
  assert.throws(() => dropin.install({ pool: 'no' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => dropin.install({ pol: 1 }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => dropin.install({ pool: new Pool({ encoding: 'hex' }) }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
}

module.exports = { childOutput, installRoundTrip };
