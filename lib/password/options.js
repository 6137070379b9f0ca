'use strict';
// The options of hash() and verify(), read once (own properties only) and
// checked, with today's recommended defaults: OWASP's for Argon2id (19 MiB,
// two passes, one lane) and bcrypt (cost 10).

const { invalidArgType, outOfRange, makeError, unknownOption } = require('../errors');
const { ownOptions, integerOption, oneOfOption } = require('../args/options');
const { isAborted } = require('../engine/signals');
const { bytesOf, secretParam } = require('../crypto/args');
const { POOL_SHAPE } = require('../symbols');

const ALGORITHMS = ['argon2id', 'argon2i', 'argon2d', 'bcrypt'];

const DEFAULTS = Object.freeze({
  algorithm: 'argon2id',
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
  hashLength: 32,
  saltLength: 16,
  cost: 10,
  version: '2b',
});

const COMMON = ['pool', 'signal', 'secret'];
const VERIFY_OPTIONS = [...COMMON, 'limits'];
/**
 * The highest costs verify() runs by default: a stored string is data,
 * and one with absurd costs would hold a thread for hours (a running hash
 * cannot be stopped). `limits` raises or lowers them.
 */
const LIMITS = Object.freeze({
  // 4 GiB, 16 passes, 64 lanes; bcrypt 2^20 rounds (about a minute here).
  memoryCost: 4 * 1024 * 1024,
  timeCost: 16,
  parallelism: 64,
  cost: 20,
});
const ARGON2_OPTIONS = [
  'algorithm',
  'memoryCost',
  'timeCost',
  'parallelism',
  'hashLength',
  'saltLength',
  'associatedData',
  ...COMMON,
];
const BCRYPT_OPTIONS = ['algorithm', 'cost', 'version', 'pool', 'signal'];
const ALL_OPTIONS = [...new Set([...ARGON2_OPTIONS, ...BCRYPT_OPTIONS])];

/** The pool a call runs on: its own option's, else `fallback()`'s. */
function poolOf(given, fallback) {
  if (given === undefined) return fallback();
  const { Pool } = require('../pool');
  if (!(given instanceof Pool)) throw invalidArgType('options.pool', 'an instance of Pool', given);
  const shape = given[POOL_SHAPE];
  if (shape.encoding !== 'buffer' || shape.select)
    throw makeError(
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      "The property 'options.pool' must give Buffers (no select, encoding 'buffer')",
    );
  return given;
}

/** An optional AbortSignal (throws ERR_INVALID_ARG_TYPE for anything else). */
function signalOf(signal) {
  if (signal !== undefined) isAborted(signal);
  return signal;
}

/**
 * An optional string or binary, at most `max` bytes; a string's bytes,
 * made here, are put in `scratch` (to wipe once they were copied) when given.
 */
function bytesOption(value, name, max, scratch) {
  if (value === undefined) return undefined;
  const bytes = scratch === undefined ? bytesOf(value) : secretParam(value, scratch);
  if (bytes === undefined)
    throw invalidArgType(
      `options.${name}`,
      'of type string or an instance of Buffer, TypedArray, DataView or ArrayBuffer',
      value,
    );
  if (bytes.byteLength > max)
    throw outOfRange(`options.${name}.byteLength`, `<= ${max}`, bytes.byteLength);
  return bytes;
}

/** hash()'s options, checked, with the defaults filled in. */
function hashOptions(options, fallbackPool) {
  if (options === undefined) options = {};
  else if (options === null || typeof options !== 'object')
    throw invalidArgType('options', 'of type object', options);
  // Every name either algorithm takes, read once; then what the chosen one
  // does not take is refused by name.
  const o = ownOptions(options, ALL_OPTIONS, 'options');
  const algorithm = oneOfOption(o, 'algorithm', ALGORITHMS, DEFAULTS.algorithm);
  const allowed = algorithm === 'bcrypt' ? BCRYPT_OPTIONS : ARGON2_OPTIONS;
  for (const key of ALL_OPTIONS) {
    if (o[key] !== undefined && !allowed.includes(key))
      throw unknownOption('options', key, allowed, `${algorithm} takes no ${key}`);
  }
  if (algorithm === 'bcrypt') {
    return {
      algorithm,
      cost: integerOption(o, 'cost', 4, 31, DEFAULTS.cost),
      version: oneOfOption(o, 'version', ['2a', '2b', '2y'], DEFAULTS.version),
      pool: poolOf(o.pool, fallbackPool),
      signal: signalOf(o.signal),
    };
  }
  const parallelism = integerOption(o, 'parallelism', 1, 2 ** 24 - 1, DEFAULTS.parallelism);
  const scratch = [];
  return {
    algorithm,
    memoryCost: integerOption(o, 'memoryCost', 8 * parallelism, 2 ** 32 - 1, DEFAULTS.memoryCost),
    timeCost: integerOption(o, 'timeCost', 1, 2 ** 32 - 1, DEFAULTS.timeCost),
    parallelism,
    hashLength: integerOption(o, 'hashLength', 4, 2 ** 31 - 1, DEFAULTS.hashLength),
    saltLength: integerOption(o, 'saltLength', 8, 1024, DEFAULTS.saltLength),
    secret: bytesOption(o.secret, 'secret', 2 ** 32 - 1, scratch),
    associatedData: bytesOption(o.associatedData, 'associatedData', 32),
    pool: poolOf(o.pool, fallbackPool),
    signal: signalOf(o.signal),
    scratch,
  };
}

/** verify()'s options. */
function verifyOptions(options, fallbackPool) {
  if (options === undefined) options = {};
  else if (options === null || typeof options !== 'object')
    throw invalidArgType('options', 'of type object', options);
  const o = ownOptions(options, VERIFY_OPTIONS, 'options');
  const scratch = [];
  return {
    secret: bytesOption(o.secret, 'secret', 2 ** 32 - 1, scratch),
    pool: poolOf(o.pool, fallbackPool),
    signal: signalOf(o.signal),
    limits: limitsOf(o.limits),
    scratch,
  };
}

/** verify()'s `limits`: LIMITS, with what the caller gave (own properties) instead. */
function limitsOf(given) {
  if (given === undefined) return LIMITS;
  if (given === null || typeof given !== 'object')
    throw invalidArgType('options.limits', 'of type object', given);
  const o = ownOptions(given, Object.keys(LIMITS), 'options.limits');
  const limit = (name, max) =>
    integerOption({ [`limits.${name}`]: o[name] }, `limits.${name}`, 1, max, LIMITS[name]);
  return {
    memoryCost: limit('memoryCost', 2 ** 32 - 1),
    timeCost: limit('timeCost', 2 ** 32 - 1),
    parallelism: limit('parallelism', 2 ** 24 - 1),
    cost: limit('cost', 31),
  };
}

module.exports = { hashOptions, verifyOptions, DEFAULTS, LIMITS };
