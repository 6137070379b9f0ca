'use strict';
// A throwaway project directory for tests that run code as a user would
// (not a test file itself: node --test runs *.test.js only).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');

/** A new directory whose node_modules has `@tidepool-rs/pool` (this repository) and its optional peer prom-client. */
function projectWithTidepool(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.mkdirSync(path.join(dir, 'node_modules', '@tidepool-rs'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', '@tidepool-rs', 'pool'), 'junction');
  fs.symlinkSync(
    path.join(ROOT, 'node_modules', 'prom-client'),
    path.join(dir, 'node_modules', 'prom-client'),
    'junction',
  );
  return dir;
}

/**
 * The flag that turns Node's permission model on: `--permission` where this
 * Node has it (22.13 on), `--experimental-permission` before (Node 24
 * refuses the old name).
 */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';

module.exports = { ROOT, projectWithTidepool, PERMISSION_FLAG };
