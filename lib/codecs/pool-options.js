'use strict';
// node:zlib's habits in the pool's own API: createGzip({ level: 9 }) as
// node:zlib takes it (the names beside `params`), and brotli's and zstd's
// parameters keyed by their constants (`{ [BROTLI_PARAM_QUALITY]: 4 }`) in
// `params`, for streams and for post(). Which names and keys each kernel
// takes is the kernel's to say (its facts' `zlibNames` and `keyed`).

const { factsOf } = require('../addon/binding');
const { rangeOr, RANGES } = require('./options');
const { makeError } = require('../errors');

const hasOwn = Object.hasOwn;
const EMPTY = Object.freeze([]);

/**
 * The kernel's name for a parameter given by its node:zlib key (a
 * numeric string its facts' `keyed` has), or `name` itself.
 */
function keyedName(kernel, name) {
  const facts = factsOf(kernel);
  return facts === undefined ? name : (facts.keyed[name] ?? name);
}

/**
 * Splits a codec stream's options (`method`'s) into node:zlib's names
 * (checked as node:zlib checks them, as kernel params) and the rest.
 * `params` is undefined when none of those names is given.
 */
function zlibParams(kernel, options, method) {
  const facts = factsOf(kernel);
  const names = facts === undefined ? EMPTY : facts.zlibNames;
  if (names.length === 0 || options === null || typeof options !== 'object')
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
