'use strict';
// brotli's and zstd's own options, read as node:zlib of this Node reads
// them (./lines.js says where its lines differ): `params` keyed by the
// libraries' constants, `dictionary`, and zstd's `pledgedSrcSize`; turned
// into the pool kernels' params.
//
// node:zlib stores `params` in a Uint32Array filled with -1 and hands the
// library every slot that is not -1, in key order: the same array here
// gives the same conversions (true is 1, 4.7 is 4, -5 is 2^32-5), the
// same duplicates (`1` and `'01'`), and -1 as "not given".

const { Buffer } = require('node:buffer');
const { types } = require('node:util');
const { constants } = require('./constants');
const { invalidArgType, makeError } = require('../errors');
const lines = require('./lines');

const UNSET = 0xffffffff;

/** The highest key of the constants whose names start with `prefix` (node:zlib's bound). */
function highest(prefix) {
  let max = 0;
  for (const name of Object.keys(constants))
    if (name.startsWith(prefix)) max = Math.max(max, constants[name]);
  return max;
}

const MAX_BROTLI = highest('BROTLI_PARAM_');
const MAX_ZSTD_C = highest('ZSTD_c_');
const MAX_ZSTD_D = highest('ZSTD_d_');

/** node:zlib's error for a key it does not take. */
function invalidParam(brotli, key) {
  return brotli
    ? makeError(RangeError, 'ERR_BROTLI_INVALID_PARAM', `${key} is not a valid Brotli parameter`)
    : makeError(RangeError, 'ERR_ZSTD_INVALID_PARAM', `${key} is not a valid zstd parameter`);
}

/** An option node:zlib takes that a pool's codec cannot honour. */
function unsupported(what, why) {
  return makeError(
    Error,
    'ERR_TIDEPOOL_ZLIB_UNSUPPORTED',
    `${what} is not supported by @tidepool-rs/pool/zlib: ${why}`,
  );
}

/** What the library refuses when the stream is made: node:zlib's words for it. */
function initFailed(message) {
  return makeError(Error, 'ERR_ZLIB_INITIALIZATION_FAILED', message);
}

/**
 * `options.params` as node:zlib reads it: `[key, value]` pairs, values as
 * uint32, in key order. A falsy `params` (null, 0, false, '') is none; a
 * truthy primitive's own keys are read, as `Object.keys()` reads them.
 */
function paramPairs(given, max, brotli) {
  if (!given) return [];
  const slots = new Uint32Array(max + 1).fill(UNSET);
  for (const origKey of Object.keys(given)) {
    const key = +origKey;
    if (Number.isNaN(key) || key < 0 || key > max || (slots[key] | 0) !== -1)
      throw invalidParam(brotli, origKey);
    const value = given[origKey];
    if (typeof value !== 'number' && typeof value !== 'boolean')
      throw invalidArgType('options.params[key]', 'of type number', value);
    // As the typed array stores it (true is 1).
    slots[key] = Number(value);
  }
  const pairs = [];
  for (let key = 0; key <= max; key++) if (slots[key] !== UNSET) pairs.push([key, slots[key]]);
  return pairs;
}

const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);

/**
 * The brotli encoder's parameters as brotli makes them of what it is set
 * (encode.c: ints clamped, flags as booleans, a distance shape it cannot
 * use dropped), by the kernel's names.
 */
function brotliEncoderParams(pairs, params) {
  const c = constants;
  let npostfix = 0;
  let ndirect = 0;
  for (const [key, value] of pairs) {
    const int = value | 0;
    switch (key) {
      case c.BROTLI_PARAM_MODE:
        // brotli reads a mode it does not know as the generic one.
        params.mode = value > 2 ? 0 : value;
        break;
      case c.BROTLI_PARAM_QUALITY:
        params.quality = clamp(int, 0, 11);
        break;
      case c.BROTLI_PARAM_LGWIN:
        params.lgwin = int;
        break;
      case c.BROTLI_PARAM_LGBLOCK:
        params.lgblock = int === 0 ? 0 : clamp(int, 16, 24);
        break;
      case c.BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING:
        // The one value BrotliEncoderSetParameter checks.
        if (value > 1) throw initFailed('Initialization failed');
        params.disableLiteralContextModeling = value;
        break;
      case c.BROTLI_PARAM_SIZE_HINT:
        params.sizeHint = value;
        break;
      case c.BROTLI_PARAM_LARGE_WINDOW:
        params.largeWindow = value !== 0;
        break;
      case c.BROTLI_PARAM_NPOSTFIX:
        npostfix = value;
        break;
      case c.BROTLI_PARAM_NDIRECT:
        ndirect = value;
        break;
    }
  }
  if (params.lgwin !== undefined)
    params.lgwin = clamp(params.lgwin, 10, params.largeWindow === true ? 30 : 24);
  // brotli's ChooseDistanceParams: a shape past its bounds, or whose direct
  // codes are not a multiple of 2^npostfix (at most 15 of them), is 0 and 0.
  const fits =
    npostfix <= 3 && ndirect <= 120 && ((ndirect >>> npostfix) & 0x0f) << npostfix === ndirect;
  if (fits && (npostfix !== 0 || ndirect !== 0)) {
    params.npostfix = npostfix;
    params.ndirect = ndirect;
  }
}

/** The brotli decoder's: its large window; its ring buffer's way of growing is the pool's. */
function brotliDecoderParams(pairs, params) {
  for (const [key, value] of pairs) {
    if (key === constants.BROTLI_DECODER_PARAM_LARGE_WINDOW) params.largeWindow = value !== 0;
    // BrotliDecoderSetParameter refuses any other key: so does node:zlib.
    else if (key !== constants.BROTLI_DECODER_PARAM_DISABLE_RING_BUFFER_REALLOCATION)
      throw initFailed('Initialization failed');
  }
}

/**
 * `options.dictionary` as node:zlib's brotli and zstd take it (undefined:
 * none). zstd on Node 22 ignores what is not a view; brotli before Node 24
 * takes no dictionary at all.
 */
function keyedDictionary(dictionary, brotli) {
  if (dictionary === undefined) return undefined;
  const checked = brotli ? lines.brotliDictionary() : lines.zstdDictionaryChecked();
  if (brotli && !checked) return undefined;
  if (!checked) return types.isArrayBufferView(dictionary) ? dictionary : undefined;
  if (types.isArrayBufferView(dictionary)) return dictionary;
  if (types.isAnyArrayBuffer(dictionary)) return Buffer.from(dictionary);
  throw invalidArgType(
    'options.dictionary',
    'an instance of Buffer, TypedArray, DataView, or ArrayBuffer',
    dictionary,
  );
}

/**
 * zstd's `pledgedSrcSize`, checked as node:zlib's binding checks it (the
 * zstd encoder honours it; the decoder only checks it): undefined for
 * none, else the size.
 */
function pledgedSize(value) {
  if (lines.pledgedChecks() === 'negative') {
    // Node 22: a number is read as an integer, anything else ignored.
    if (typeof value !== 'number') return undefined;
    const size = Number.isNaN(value) ? 0 : Math.trunc(value);
    if (size < 0) {
      throw makeError(TypeError, 'ERR_INVALID_ARG_VALUE', 'pledgedSrcSize may not be negative');
    }
    return Math.min(size, Number.MAX_SAFE_INTEGER);
  }
  if (value === undefined) return undefined;
  if (typeof value !== 'number')
    throw makeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'pledgedSrcSize must be a number');
  if (!Number.isSafeInteger(value))
    throw makeError(RangeError, 'ERR_OUT_OF_RANGE', 'pledgedSrcSize must be a safe integer');
  if (value < 0)
    throw makeError(RangeError, 'ERR_OUT_OF_RANGE', 'pledgedSrcSize must be non-negative');
  return value;
}

/**
 * brotli's or zstd's options (`params`, `dictionary`, zstd's
 * `pledgedSrcSize`) of `options` for class `mode` (./options.js MODES),
 * added to the kernel's `params`.
 */
function keyedParams(options, mode, params, own) {
  const brotli = mode.family === 'brotli';
  const max = brotli ? MAX_BROTLI : mode.decodes ? MAX_ZSTD_D : MAX_ZSTD_C;
  const pairs = paramPairs(own(options, 'params'), max, brotli);
  if (brotli) {
    if (mode.decodes) brotliDecoderParams(pairs, params);
    else brotliEncoderParams(pairs, params);
  } else if (pairs.length > 0) {
    // zstd's, handed to zstd in key order as int32 [key, value] pairs: the
    // kernel refuses what zstd refuses (ERR_ZLIB_INITIALIZATION_FAILED).
    params.parameters = Buffer.from(new Int32Array(pairs.flat()).buffer);
  }
  const dictionary = keyedDictionary(own(options, 'dictionary'), brotli);
  if (dictionary !== undefined && dictionary.byteLength > 0) {
    // node:zlib's brotli (Node 24+) takes a raw dictionary; the pool's
    // brotli kernels take none.
    if (brotli) throw unsupported('options.dictionary on brotli', 'its kernels take no dictionary');
    params.dictionary = dictionary;
  }
  if (!brotli) {
    const pledged = pledgedSize(own(options, 'pledgedSrcSize'));
    if (pledged !== undefined && !mode.decodes) params.pledgedSrcSize = pledged;
    // What follows a frame: the frames after it (Node 24+), or, on Node 22,
    // nothing of the same write.
    if (mode.decodes) params.trailing = lines.zstdFrames() ? 2 : 1;
    // Node 22's zstd decoder takes an input cut short as if told not to finish.
    if (mode.decodes && !lines.zstdCutRefused()) params.finishFlush = constants.ZSTD_e_flush;
  }
}

module.exports = { keyedParams, unsupported };
