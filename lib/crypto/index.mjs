// `import ... from '@tidepool-rs/pool/crypto'`: the CommonJS module
// (./index.js) with its names as ESM named exports, listed (Node's
// detection of a CommonJS module's names does not read a getter).

import { createRequire } from 'node:module';

// Required, not imported: every runtime loads the very CommonJS module.
const require = createRequire(import.meta.url);
const crypto = require('./index.js');
const symbols = require('../symbols.js');

export default crypto;

export const {
  pbkdf2,
  pbkdf2Sync,
  scrypt,
  scryptSync,
  hkdf,
  hkdfSync,
  // Undefined where node:crypto has none (before Node 24.7).
  argon2,
  argon2Sync,
  install,
  uninstall,
} = crypto;

/**
 * The pool this module's work runs on: a live binding, as the CommonJS
 * getter (the module's own pool, made here if not yet, or install()'s).
 */
export let pool = crypto.pool;
crypto[symbols.WATCH_POOL]((current) => {
  pool = current;
});
