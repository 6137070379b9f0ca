'use strict';
// Which calls of node:crypto's key derivations the pool takes. Each
// check here accepts a subset of what node:crypto accepts, with the same
// meaning; a call outside it (a wrong argument, a hash the kernels do not
// have, a KeyObject, costs OpenSSL refuses) is passed to node:crypto's own
// function, which throws its own error on this Node line or, for a valid
// call, does the work itself. So no message here can drift from Node's.
// A plan is `{ kernel, secret, params, scratch? }`: the secret a copy of
// the caller's bytes (node:crypto copies at the call too), wiped once the
// task is over; the rest as the kernel takes them; `scratch` the bytes
// made here of a secret parameter, wiped once native code copied them.

const { types } = require('node:util');
const { mapGet, setHas } = require('../base/collections');
const { fixedBytes, isDetachedBinary } = require('../engine/binary');

const { isAnyArrayBuffer } = types;
const isView = ArrayBuffer.isView;
const isInteger = Number.isInteger;

/** OpenSSL's signed int: the most bytes, iterations or key bytes it takes. */
const INT32_MAX = 2 ** 31 - 1;

/**
 * The hash names of node:crypto the kernels have, lower-case (OpenSSL
 * reads them so), with the kernel's name for each. Aliases not here
 * ('RSA-SHA256', 'sha2-256'...) stay node:crypto's.
 */
const HASHES = new Map([
  ['md5', 'md5'],
  ['sha1', 'sha1'],
  ['sha-1', 'sha1'],
  ['sha224', 'sha224'],
  ['sha-224', 'sha224'],
  ['sha256', 'sha256'],
  ['sha-256', 'sha256'],
  ['sha384', 'sha384'],
  ['sha-384', 'sha384'],
  ['sha512', 'sha512'],
  ['sha-512', 'sha512'],
  ['sha512-224', 'sha512-224'],
  ['sha-512/224', 'sha512-224'],
  ['sha512-256', 'sha512-256'],
  ['sha-512/256', 'sha512-256'],
]);

/** Each hash's digest length, for HKDF's 255 blocks. */
const DIGEST_BYTES = {
  __proto__: null,
  md5: 16,
  sha1: 20,
  sha224: 28,
  sha256: 32,
  sha384: 48,
  sha512: 64,
  'sha512-224': 28,
  'sha512-256': 32,
};

/** The kernel's name of node:crypto's hash `name`, or undefined. */
function hashOf(name) {
  return typeof name === 'string' ? mapGet(HASHES, name.toLowerCase()) : undefined;
}

/**
 * The bytes of `value` as node:crypto reads a password, salt or key (a
 * string as UTF-8, any binary as its bytes now), or undefined for a value
 * it reads otherwise or refuses. A string's bytes are made here (a Buffer
 * that may share Buffer's pool: wipe what is secret, `wipeLater`).
 */
function bytesOf(value) {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return readable(value) ? binaryBytes(value) : undefined;
}

/** True for what bytesOf() reads, without making a string's bytes. */
function readable(value) {
  if (typeof value === 'string') return true;
  if (!isView(value) && !isAnyArrayBuffer(value)) return false;
  return !isDetachedBinary(value) && binaryBytes(value).byteLength <= INT32_MAX;
}

function binaryBytes(value) {
  return isView(value) ? fixedBytes(value) : new Uint8Array(value);
}

/**
 * True when a binary's `byteLength`, read as Node 20's hkdf and Node 24's
 * argon2 read it (a property a caller may have replaced), is its length:
 * otherwise node:crypto's checks see another length than its work does,
 * and the call is left to it.
 */
function honestLength(value) {
  return typeof value === 'string' || value.byteLength === binaryBytes(value).byteLength;
}

/** A copy of `value`'s bytes in memory of its own (to wipe), or undefined. */
function secretOf(value) {
  const bytes = bytesOf(value);
  if (bytes === undefined) return undefined;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  // A string's bytes were made here: wiped as soon as copied.
  if (typeof value === 'string') bytes.fill(0);
  return copy;
}

/**
 * The bytes of a secret parameter (a pepper) as bytesOf() gives them, a
 * string's being put in `scratch` to wipe once the parameters were copied.
 */
function secretParam(value, scratch) {
  const bytes = bytesOf(value);
  if (bytes !== undefined && typeof value === 'string') scratch.push(bytes);
  return bytes;
}

/**
 * An integer in [min, max], as node's validateInt32/validateInteger take
 * it. A key of 0 bytes is never the pool's: node:crypto gives an empty
 * one on Node 20 and fails the call ("Deriving bits failed") from 22 on.
 */
function isIn(value, min, max) {
  return typeof value === 'number' && isInteger(value) && value >= min && value <= max;
}

/** pbkdf2(password, salt, iterations, keylen, digest, callback). */
function pbkdf2Plan(password, salt, iterations, keylen, digest, callback) {
  const hash = hashOf(digest);
  if (hash === undefined || typeof callback !== 'function') return undefined;
  if (!isIn(iterations, 1, INT32_MAX) || !isIn(keylen, 1, INT32_MAX)) return undefined;
  const saltBytes = bytesOf(salt);
  if (saltBytes === undefined) return undefined;
  const secret = secretOf(password);
  if (secret === undefined) return undefined;
  return {
    kernel: 'pbkdf2',
    secret,
    params: { digest: hash, salt: saltBytes, iterations, keylen },
  };
}

/** node:crypto's scrypt defaults. */
const SCRYPT = Object.freeze({ N: 16384, r: 8, p: 1, maxmem: 32 << 20 });
/** OpenSSL's bound on r × p. */
const SCRYPT_PR_MAX = 2 ** 30 - 1;

/**
 * scrypt's options as node:crypto reads them (inherited ones included),
 * in its order, each checked as it is read: the costs, or undefined when
 * the pool does not take them (node:crypto then reads them again, and
 * throws its own error for the first it refuses).
 */
function scryptCosts(options) {
  let { N, r, p, maxmem } = SCRYPT;
  if (options) {
    if (typeof options !== 'object') return undefined;
    const costs = [];
    for (const [name, alias] of SCRYPT_NAMES) {
      let value = options[name];
      const named = value !== undefined;
      if (named && !isIn(value, 0, 2 ** 32 - 1)) return undefined;
      const aliased = options[alias];
      if (aliased !== undefined) {
        // Both names of one cost: node:crypto's error.
        if (named || !isIn(aliased, 0, 2 ** 32 - 1)) return undefined;
        value = aliased;
      }
      costs.push(value);
    }
    const given = options.maxmem;
    if (given !== undefined && !isIn(given, 0, Number.MAX_SAFE_INTEGER)) return undefined;
    if (costs[0]) N = costs[0];
    if (costs[1]) r = costs[1];
    if (costs[2]) p = costs[2];
    if (given) maxmem = given;
  }
  // OpenSSL's rules (EVP_PBE_scrypt_ex): N a power of 2 above 1, below
  // 2^(16 r); r × p at most 2^30 - 1; B (128 r p) within an int; B and V
  // (128 r (N + 2)) within maxmem.
  if (N < 2 || (N & (N - 1)) !== 0) return undefined;
  if (16 * r <= 63 && N >= 2 ** (16 * r)) return undefined;
  if (p > Math.floor(SCRYPT_PR_MAX / r)) return undefined;
  const b = 128 * r * p;
  if (b > INT32_MAX || b + 128 * r * (N + 2) > maxmem) return undefined;
  return { N, r, p };
}

/** scrypt's costs by their two names each, in the order node:crypto reads them. */
const SCRYPT_NAMES = [
  ['N', 'cost'],
  ['r', 'blockSize'],
  ['p', 'parallelization'],
];

/** scrypt(password, salt, keylen[, options], callback), as the arguments arrive. */
function scryptPlan(password, salt, keylen, options, callback) {
  // node:crypto's order: the password, salt and keylen before the options.
  if (typeof callback !== 'function' || !isIn(keylen, 1, INT32_MAX)) return undefined;
  if (!readable(salt) || !readable(password)) return undefined;
  const costs = scryptCosts(options);
  if (costs === undefined) return undefined;
  const secret = secretOf(password);
  return { kernel: 'scrypt', secret, params: { salt: bytesOf(salt), ...costs, keylen } };
}

/** hkdf(digest, ikm, salt, info, keylen, callback). */
function hkdfPlan(digest, ikm, salt, info, keylen, callback) {
  const hash = hashOf(digest);
  if (hash === undefined || typeof callback !== 'function') return undefined;
  if (!isIn(keylen, 1, 255 * DIGEST_BYTES[hash])) return undefined;
  const saltBytes = bytesOf(salt);
  const infoBytes = bytesOf(info);
  if (saltBytes === undefined || infoBytes === undefined || infoBytes.byteLength > 1024)
    return undefined;
  if (!honestLength(info)) return undefined;
  const secret = secretOf(ikm);
  if (secret === undefined) return undefined;
  return {
    kernel: 'hkdf',
    secret,
    params: { digest: hash, salt: saltBytes, info: infoBytes, keylen },
  };
}

/** node:crypto's argon2 variants, each a kernel of the same name. */
const ARGON2 = new Set(['argon2d', 'argon2i', 'argon2id']);
/** The parameters of argon2(), in the order node:crypto reads them. */
const ARGON2_NAMES = [
  'parallelism',
  'tagLength',
  'memory',
  'passes',
  'message',
  'nonce',
  'secret',
  'associatedData',
];

/**
 * argon2(algorithm, parameters, callback) of Node 24.7+. `read` gets the
 * parameters read (each once), to pass on.
 */
function argon2Plan(algorithm, parameters, callback, read) {
  if (typeof callback !== 'function' || !setHas(ARGON2, algorithm)) return undefined;
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters))
    return undefined;
  for (const name of ARGON2_NAMES) read[name] = parameters[name];
  const { parallelism, tagLength, memory, passes } = read;
  if (!isIn(parallelism, 1, 2 ** 24 - 1) || !isIn(tagLength, 4, INT32_MAX)) return undefined;
  if (!isIn(memory, 8 * parallelism, 2 ** 32 - 1) || !isIn(passes, 1, 2 ** 32 - 1))
    return undefined;
  for (const name of ['message', 'nonce', 'secret', 'associatedData']) {
    const value = read[name];
    if (value !== undefined && (!readable(value) || !honestLength(value))) return undefined;
  }
  const nonce = bytesOf(read.nonce);
  if (nonce === undefined || nonce.byteLength < 8) return undefined;
  const scratch = [];
  const params = { nonce, parallelism, tagLength, memory, passes };
  if (read.secret !== undefined) params.secret = secretParam(read.secret, scratch);
  if (read.associatedData !== undefined) {
    params.associatedData = bytesOf(read.associatedData);
    if (params.associatedData === undefined) return undefined;
  }
  const secret = secretOf(read.message);
  if (secret === undefined) return undefined;
  return { kernel: algorithm, secret, params, scratch };
}

module.exports = {
  pbkdf2Plan,
  scryptPlan,
  hkdfPlan,
  argon2Plan,
  bytesOf,
  secretOf,
  secretParam,
};
