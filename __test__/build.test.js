'use strict';
// The install hook builds once and then leaves an up-to-date addon alone.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
// A whole cargo build, when the sources changed, takes minutes on a busy machine.
const build = () =>
  spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 900_000,
  });

test('a second install does not rebuild the addon', () => {
  const first = build(); // builds only if the sources changed since the last build
  assert.equal(first.status, 0, first.stderr);
  const addon = path.join(ROOT, 'tidepool.node');
  const before = fs.statSync(addon).mtimeMs;
  const second = build();
  assert.equal(second.status, 0, second.stderr);
  assert.match(second.stdout, /up to date, not rebuilding/);
  assert.equal(fs.statSync(addon).mtimeMs, before, 'tidepool.node was not rewritten');
});
