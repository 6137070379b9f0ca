'use strict';
// node:zlib's habits in the pool's own API: createGzip({ level: 9 }) as
// node:zlib takes it (the names beside `params`), and brotli's and zstd's
// parameters keyed by their constants (`{ [BROTLI_PARAM_QUALITY]: 4 }`) in
// `params`, for streams and for post().

const { KEYED } = require('./constants');
const { rangeOr, RANGES } = require('./options');
const { makeError } = require('../errors');

const hasOwn = Object.hasOwn;

/** node:zlib's names a pool codec stream takes beside `params`, per kernel. */
const DEFLATE_NAMES = Object.freeze([
  'level',
  'windowBits',
  'memLevel',
  'strategy',
  'dictionary',
  'finishFlush',
]);
const INFLATE_NAMES = Object.freeze(['windowBits', 'dictionary', 'finishFlush']);
const NAMES = Object.freeze({
  __proto__: null,
  gzip: DEFLATE_NAMES,
  deflate: DEFLATE_NAMES,
  deflateRaw: DEFLATE_NAMES,
  gunzip: INFLATE_NAMES,
  inflate: INFLATE_NAMES,
  inflateRaw: INFLATE_NAMES,
  unzip: INFLATE_NAMES,
  brotliDecompress: Object.freeze(['finishFlush']),
  zstdCompress: Object.freeze(['dictionary']),
  zstdDecompress: Object.freeze(['finishFlush', 'dictionary']),
});

/**
 * The kernel's name for a parameter given by its node:zlib key (a
 * numeric string of `KEYED`), or `name` itself.
 */
function keyedName(kernel, name) {
  const keys = KEYED[kernel];
  return keys === undefined ? name : (keys[name] ?? name);
}

/**
 * Splits a codec stream's options (`method`'s) into node:zlib's names
 * (checked as node:zlib checks them, as kernel params) and the rest.
 * `params` is undefined when none of those names is given.
 */
function zlibParams(kernel, options, method) {
  const names = NAMES[kernel];
  if (names === undefined || options === null || typeof options !== 'object')
    return { params: undefined, rest: options };
  let params;
  let rest = options;
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (!hasOwn(options, name)) continue;
    const value = options[name];
    if (rest === options) {
      rest = { ...options };
      params = { __proto__: null };
    }
    delete rest[name];
    if (value === undefined) continue;
    const given = options.params;
    if (given !== null && typeof given === 'object' && hasOwn(given, name)) {
      throw makeError(
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        `The property 'options.${name}' is given twice: beside params and in options.params (${method})`,
      );
    }
    const range = RANGES[name];
    params[name] =
      range === undefined
        ? value
        : rangeOr(value, `options.${name}`, range[0], range[1], undefined);
    if (params[name] === undefined) delete params[name];
  }
  return { params, rest };
}

module.exports = { zlibParams, keyedName };
