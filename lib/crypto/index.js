'use strict';
// `@tidepool-rs/pool/crypto`: node:crypto's key derivations, `pbkdf2`,
// `scrypt`, `hkdf` and (Node 24.7+) `argon2`, with node:crypto's signatures, checks, errors and
// results, their work on a tidepool instead of libuv's four threads
// (shared with fs, dns.lookup() and zlib). A call the kernels do not take
// (./args.js: another hash, a KeyObject, arguments node:crypto refuses) is
// node:crypto's own, on this Node line. The *Sync forms are node:crypto's
// own (they run on the calling thread by definition). install() routes
// node:crypto itself here for the whole process (../dropin/routing.js).

const crypto = require('node:crypto');
const { pbkdf2Plan, scryptPlan, hkdfPlan, argon2Plan } = require('./args');
const { derive, asBuffer, asArrayBuffer } = require('./derive');
const { Routing } = require('../dropin/routing');
const { PoolSource } = require('../dropin/pool-source');
const { dropInExports } = require('../dropin/exports');

/** node:crypto's own functions, as they were when this module loaded. */
const own = {
  pbkdf2: crypto.pbkdf2,
  scrypt: crypto.scrypt,
  hkdf: crypto.hkdf,
  // Node 24.7 and later (@types/node 20 does not know it).
  argon2: /** @type {any} */ (crypto).argon2,
};

const routing = new Routing({
  target: crypto,
  label: 'node:crypto',
  entry: '@tidepool-rs/pool/crypto',
  family: 'CRYPTO',
  names: ['pbkdf2', 'scrypt', 'hkdf', 'argon2'],
});
const pools = new PoolSource(routing);

/** node:crypto's scrypt() default `options`, told apart from a given one. */
const DEFAULTS = Object.freeze({ __proto__: null });

/**
 * -0 made 0 before node:crypto sees it: Node 20 and 22's pbkdf2, scrypt
 * and hkdf abort the process on a keylen of -0 (Node 24 makes it 0 itself).
 */
function plusZero(keylen) {
  return keylen === 0 ? 0 : keylen;
}

function pbkdf2(password, salt, iterations, keylen, digest, callback) {
  const plan = pbkdf2Plan(password, salt, iterations, keylen, digest, callback);
  if (plan === undefined)
    return Reflect.apply(own.pbkdf2, crypto, [
      password,
      salt,
      iterations,
      plusZero(keylen),
      digest,
      callback,
    ]);
  derive(pools.current(), plan, callback, asBuffer);
}

function scrypt(password, salt, keylen, options, callback = DEFAULTS) {
  const given = callback !== DEFAULTS;
  if (!given) {
    callback = options;
    options = undefined;
  }
  const plan = scryptPlan(password, salt, keylen, options, callback);
  if (plan !== undefined) return derive(pools.current(), plan, callback, asBuffer);
  keylen = plusZero(keylen);
  const args = given
    ? [password, salt, keylen, options, callback]
    : [password, salt, keylen, callback];
  return Reflect.apply(own.scrypt, crypto, args);
}

function hkdf(digest, ikm, salt, info, keylen, callback) {
  const plan = hkdfPlan(digest, ikm, salt, info, keylen, callback);
  if (plan === undefined)
    return Reflect.apply(own.hkdf, crypto, [digest, ikm, salt, info, plusZero(keylen), callback]);
  derive(pools.current(), plan, callback, asArrayBuffer);
}

function argon2(algorithm, parameters, callback) {
  const read = {};
  const plan = argon2Plan(algorithm, parameters, callback, read);
  if (plan !== undefined) return derive(pools.current(), plan, callback, asBuffer);
  // The parameters as read (their getters ran once), or as given when
  // they were not read.
  const passed = Object.keys(read).length > 0 ? read : parameters;
  return Reflect.apply(own.argon2, crypto, [algorithm, passed, callback]);
}

module.exports = dropInExports(
  {
    pbkdf2,
    pbkdf2Sync: crypto.pbkdf2Sync,
    scrypt,
    scryptSync: crypto.scryptSync,
    hkdf,
    hkdfSync: crypto.hkdfSync,
    // Where node:crypto has argon2 (Node 24.7+); undefined elsewhere, as
    // node:crypto's is (password hashing on every line: ../password/).
    argon2: typeof own.argon2 === 'function' ? argon2 : undefined,
    argon2Sync: /** @type {any} */ (crypto).argon2Sync,
  },
  routing,
  pools,
);
