'use strict';
// `@tidepool-rs/pool/password`: hash a password into the string it is
// stored as, and verify a password against such a string, on a tidepool.
// Argon2id by default (the `argon2id` kernel, a PHC string); bcrypt on
// request (the `bcrypt` kernel, a modular crypt string). Strings of the
// `argon2`, `@node-rs/argon2`, `bcrypt` and `bcryptjs` packages verify
// here, and strings made here verify there. The work runs on
// @tidepool-rs/pool/crypto's pool unless a call names its own.

const { randomBytes, timingSafeEqual } = require('node:crypto');
const { invalidArgType, invalidArgValue, makeError } = require('../errors');
const { secretOf } = require('../crypto/args');
const { runPlan } = require('../crypto/derive');
const { hashOptions, verifyOptions, DEFAULTS } = require('./options');
const formats = require('./formats');

/** @tidepool-rs/pool/crypto's pool (its own, or install()'s). */
function cryptoPool() {
  return require('../crypto').pool;
}

/** The password's bytes, copied (to wipe), or a typed error. */
function passwordOf(password) {
  const secret = secretOf(password);
  if (secret === undefined)
    throw invalidArgType(
      'password',
      'of type string or an instance of Buffer, TypedArray, DataView or ArrayBuffer',
      password,
    );
  return secret;
}

/**
 * The Argon2 kernel's parameters from a string's (or hash()'s) costs.
 * @param {{ parallelism: number, memory: number, passes: number, version?: number }} costs
 */
function argon2Params({ parallelism, memory, passes, version }, salt, tagLength, o) {
  const params = { nonce: salt, parallelism, tagLength, memory, passes, version };
  if (o.secret !== undefined) params.secret = o.secret;
  if (o.associatedData !== undefined) params.associatedData = o.associatedData;
  return params;
}

/**
 * The string `password` is stored as: Argon2's PHC string (argon2id with
 * 19 MiB, two passes and one lane unless `options` says otherwise), or
 * bcrypt's (`{ algorithm: 'bcrypt' }`, cost 10), with a new random salt.
 */
async function hash(password, options) {
  const o = hashOptions(options, cryptoPool);
  let secret;
  try {
    secret = passwordOf(password);
  } catch (err) {
    wipe(o.scratch ?? []);
    throw err;
  }
  if (o.algorithm === 'bcrypt') {
    const params = { cost: o.cost, salt: randomBytes(16), version: o.version };
    const out = await runPlan(o.pool, { kernel: 'bcrypt', secret, params }, o.signal);
    return out.toString('latin1');
  }
  const salt = randomBytes(o.saltLength);
  const costs = { parallelism: o.parallelism, memory: o.memoryCost, passes: o.timeCost };
  const params = argon2Params(costs, salt, o.hashLength, o);
  const plan = { kernel: o.algorithm, secret, params, scratch: o.scratch };
  const tag = await runPlan(o.pool, plan, o.signal);
  return formats.formatArgon2({
    algorithm: o.algorithm,
    ...costs,
    associatedData: o.associatedData,
    salt,
    hash: tag,
  });
}

/** Constant-time equality of two byte strings (false for unequal lengths). */
function same(a, b) {
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}

/**
 * Whether `password` is the one `encoded` (an Argon2 PHC string or a
 * bcrypt string) was made from; the comparison takes the same time
 * wherever the hashes differ. A string that is neither throws
 * ERR_INVALID_ARG_VALUE; one of a kind not supported (bcrypt's $2x$, an
 * Argon2 `keyid`) ERR_TIDEPOOL_PASSWORD_UNSUPPORTED.
 */
async function verify(encoded, password, options) {
  if (typeof encoded !== 'string') throw invalidArgType('encoded', 'of type string', encoded);
  const o = verifyOptions(options, cryptoPool);
  const { limits } = o;
  const bcrypt = formats.parseBcrypt(encoded);
  if (bcrypt !== undefined) {
    if (o.secret !== undefined) {
      wipe(o.scratch);
      throw invalidArgValue(
        'options.secret',
        'is not taken by bcrypt strings (bcrypt has no secret)',
      );
    }
    if (bcrypt.cost < 4 || bcrypt.cost > limits.cost)
      throw unsupported(encoded, `bcrypt cost ${bcrypt.cost} (limits.cost ${limits.cost})`);
    const secret = passwordOf(password);
    const params = { cost: bcrypt.cost, salt: bcrypt.salt, version: bcrypt.version };
    const out = await runPlan(o.pool, { kernel: 'bcrypt', secret, params }, o.signal);
    const made = formats.parseBcrypt(out.toString('latin1'));
    return same(made.hash, bcrypt.hash);
  }
  const argon2 = formats.parseArgon2(encoded);
  if (argon2 === undefined) {
    wipe(o.scratch);
    const kind = formats.unsupportedKind(encoded);
    if (kind !== undefined) throw unsupported(encoded, kind);
    throw invalidArgValue(
      'encoded',
      'is not an Argon2 PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash) nor a bcrypt string ($2b$10$...)',
    );
  }
  const { memory, parallelism, passes, salt, hash: expected } = argon2;
  const refused =
    argon2.keyid !== undefined
      ? 'an Argon2 keyid'
      : argon2.version !== 19 && argon2.version !== 16
        ? `Argon2 version ${argon2.version}`
        : parallelism > limits.parallelism ||
            memory > limits.memoryCost ||
            passes > limits.timeCost ||
            memory < 8 * parallelism
          ? `Argon2 costs m=${memory},t=${passes},p=${parallelism} (limits: memoryCost ${limits.memoryCost}, timeCost ${limits.timeCost}, parallelism ${limits.parallelism})`
          : salt.byteLength < 8 ||
              expected.byteLength < 4 ||
              (argon2.associatedData?.byteLength ?? 0) > 32
            ? 'an Argon2 salt, hash or data past their limits'
            : undefined;
  if (refused !== undefined) {
    wipe(o.scratch);
    throw unsupported(encoded, refused);
  }
  const secret = passwordOf(password);
  const params = argon2Params(argon2, salt, expected.byteLength, {
    secret: o.secret,
    associatedData: argon2.associatedData,
  });
  const plan = { kernel: argon2.algorithm, secret, params, scratch: o.scratch };
  const tag = await runPlan(o.pool, plan, o.signal);
  const equal = same(tag, expected);
  tag.fill(0);
  return equal;
}

/** Wipes the bytes made of secret strings (a call that ends before its task). */
function wipe(scratch) {
  for (const bytes of scratch) bytes.fill(0);
}

/** The error of a well-formed string of a kind verify() does not take. */
function unsupported(encoded, what) {
  // The scheme and its parameters, not the salt or hash.
  const scheme = encoded.split('$').slice(0, 3).join('$');
  return makeError(
    Error,
    'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED',
    `verify() does not take ${what} (${scheme}$...)`,
  );
}

/**
 * Whether `encoded` was made with other settings than `options` (hash()'s,
 * defaults filled in) would make it with: a string to hash anew at the
 * next login. False for a string of the same algorithm and costs.
 */
function needsRehash(encoded, options) {
  if (typeof encoded !== 'string') throw invalidArgType('encoded', 'of type string', encoded);
  const o = hashOptions(options, () => undefined);
  const bcrypt = formats.parseBcrypt(encoded);
  if (bcrypt !== undefined) return o.algorithm !== 'bcrypt' || bcrypt.cost !== o.cost;
  const argon2 = formats.parseArgon2(encoded);
  if (argon2 === undefined) return true;
  return (
    argon2.algorithm !== o.algorithm ||
    argon2.version !== 19 ||
    argon2.memory !== o.memoryCost ||
    argon2.passes !== o.timeCost ||
    argon2.parallelism !== o.parallelism ||
    argon2.hash.byteLength !== o.hashLength
  );
}

module.exports = { hash, verify, needsRehash, defaults: DEFAULTS };
