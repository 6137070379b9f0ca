'use strict';
// node:zlib's options, read as node:zlib reads them (its checks, ranges,
// defaults and error messages) and turned into what a pool's codec stream
// or task takes: the kernel's `params`, the output limit, and the rest as
// the Transform's options. What node:zlib takes and a pool cannot do is a
// typed error (ERR_TIDEPOOL_ZLIB_UNSUPPORTED) naming the option, never a
// silent difference.
//
// As node:zlib, names it does not know are left alone (middleware hands
// its whole options object to createGzip()); unlike it, only own
// properties are read (see lib/options.js).

const { Buffer } = require('node:buffer');
const { types } = require('node:util');
const { constants, KEYED } = require('./constants');
const { invalidArgType, makeError, outOfRange } = require('../errors');

const hasOwn = Object.hasOwn;
// As node:zlib: the Buffer limit as this module found it when loaded.
const { kMaxLength } = require('node:buffer');

/** The codec families: their kernels, flush kinds and keyed parameters. */
const DEFLATE = 'deflate';
const BROTLI = 'brotli';
const ZSTD = 'zstd';

/** Per class: its kernel, family, and whether it decodes. */
const MODES = Object.freeze({
  __proto__: null,
  Gzip: { kernel: 'gzip', family: DEFLATE, decodes: false },
  Gunzip: { kernel: 'gunzip', family: DEFLATE, decodes: true },
  Deflate: { kernel: 'deflate', family: DEFLATE, decodes: false },
  Inflate: { kernel: 'inflate', family: DEFLATE, decodes: true },
  DeflateRaw: { kernel: 'deflateRaw', family: DEFLATE, decodes: false },
  InflateRaw: { kernel: 'inflateRaw', family: DEFLATE, decodes: true },
  Unzip: { kernel: 'unzip', family: DEFLATE, decodes: true },
  BrotliCompress: { kernel: 'brotliCompress', family: BROTLI, decodes: false },
  BrotliDecompress: { kernel: 'brotliDecompress', family: BROTLI, decodes: true },
  ZstdCompress: { kernel: 'zstdCompress', family: ZSTD, decodes: false },
  ZstdDecompress: { kernel: 'zstdDecompress', family: ZSTD, decodes: true },
});

/** The options node:zlib reads itself; the others go to the Transform. */
const ZLIB_NAMES = Object.freeze([
  'flush',
  'finishFlush',
  'chunkSize',
  'windowBits',
  'level',
  'memLevel',
  'strategy',
  'dictionary',
  'params',
  'maxOutputLength',
  'info',
  'pledgedSrcSize',
  // A Transform's own methods given as options would replace the stream's
  // (node:zlib's break too): not passed on.
  'transform',
  'flush',
  'final',
  'write',
  'writev',
  'read',
  'destroy',
  'construct',
]);

/** The largest key node:zlib takes as a brotli parameter (BROTLI_PARAM_NDIRECT). */
const MAX_BROTLI_PARAM = constants.BROTLI_PARAM_NDIRECT;

/** An option node:zlib takes that a pool's codec cannot honour. */
function unsupported(what, why) {
  return makeError(
    Error,
    'ERR_TIDEPOOL_ZLIB_UNSUPPORTED',
    `${what} is not supported by @tidepool-rs/pool/zlib: ${why}`,
  );
}

/**
 * node:zlib's checkFiniteNumber: false for undefined and NaN (the default
 * applies), true for a finite number; otherwise Node's error.
 */
function finite(value, name) {
  if (value === undefined) return false;
  if (Number.isFinite(value)) return true;
  if (Number.isNaN(value)) return false;
  if (typeof value !== 'number') throw invalidArgType(name, 'of type number', value);
  throw outOfRange(name, 'a finite number', value);
}

/**
 * node:zlib's ranges of the deflate family's numbers (windowBits: 0 is a
 * decoder's "the header's"; an encoder's start at 8, or 9 for gzip).
 */
const RANGES = Object.freeze({
  __proto__: null,
  level: [-1, 9],
  windowBits: [0, 15],
  memLevel: [1, 9],
  strategy: [0, 4],
  finishFlush: [0, 5],
});

/** node:zlib's checkRangesOrGetDefault. */
function rangeOr(value, name, lower, upper, fallback) {
  if (!finite(value, name)) return fallback;
  if (value < lower || value > upper) throw outOfRange(name, `>= ${lower} and <= ${upper}`, value);
  return value;
}

/** rangeOr(), then as node:zlib's binding reads it: an integer (2.5 is 2). */
function intOr(value, name, lower, upper, fallback) {
  const checked = rangeOr(value, name, lower, upper, fallback);
  return checked === undefined ? undefined : Math.trunc(checked);
}

/** Own properties of `options` (a non-object reads as none, as `opts.x` would be undefined). */
function own(options, name) {
  return options !== null &&
    (typeof options === 'object' || typeof options === 'function') &&
    hasOwn(options, name)
    ? options[name]
    : undefined;
}

/** `options.dictionary` as node:zlib takes it, as a view (undefined: none). */
function dictionaryOf(options) {
  const dictionary = own(options, 'dictionary');
  if (dictionary === undefined) return undefined;
  // As node:zlib: an empty dictionary (a detached buffer's is) is none.
  if (types.isArrayBufferView(dictionary))
    return dictionary.byteLength === 0 ? undefined : dictionary;
  if (types.isAnyArrayBuffer(dictionary))
    return dictionary.byteLength === 0 ? undefined : Buffer.from(dictionary);
  throw invalidArgType(
    'options.dictionary',
    'an instance of Buffer, TypedArray, DataView, or ArrayBuffer',
    dictionary,
  );
}

/**
 * A keyed parameter's value as node:zlib hands it to the library: brotli's
 * as a uint32 (NaN 0, 4.7 4, -1 2^32-1), then brotli's own clamps of the
 * quality and window (the values it refuses, the kernel refuses too:
 * ERR_ZLIB_INITIALIZATION_FAILED); zstd's as an int32.
 */
function keyedValue(brotli, name, value) {
  if (!brotli) return Number(value) | 0;
  const v = Number(value) >>> 0;
  switch (name) {
    case 'quality':
      return Math.min(v, 11);
    case 'lgwin':
      // Up to 24 unless largeWindow is given too (keyedParams).
      return Math.min(Math.max(v, 10), 30);
    case 'largeWindow':
      return v !== 0;
    case 'lgblock':
      return v === 0 ? 0 : Math.min(Math.max(v, 16), 24);
    case 'mode':
      // brotli reads a mode it does not know as the generic one.
      return v > 2 ? 0 : v;
    default:
      return v;
  }
}

/** The keyed `options.params` of brotli and zstd, as a pool kernel's named params. */
function keyedParams(options, mode) {
  const given = own(options, 'params');
  const params = { __proto__: null };
  if (given === undefined) return params;
  const brotli = mode.family === BROTLI;
  const names = KEYED[mode.kernel];
  if (given === null || typeof given !== 'object')
    throw invalidArgType('options.params', 'of type object', given);
  const seen = new Set();
  for (const origKey in given) {
    if (!hasOwn(given, origKey)) continue;
    const key = +origKey;
    // As node:zlib: '0' and '00' are one parameter, given twice.
    if (brotli && seen.has(key)) {
      throw makeError(
        RangeError,
        'ERR_BROTLI_INVALID_PARAM',
        `${origKey} is not a valid Brotli parameter`,
      );
    }
    seen.add(key);
    const value = given[origKey];
    if (brotli && (!Number.isInteger(key) || key < 0 || key > MAX_BROTLI_PARAM)) {
      throw makeError(
        RangeError,
        'ERR_BROTLI_INVALID_PARAM',
        `${origKey} is not a valid Brotli parameter`,
      );
    }
    if (!brotli && !Number.isInteger(key)) {
      throw makeError(
        RangeError,
        'ERR_ZSTD_INVALID_PARAM',
        `${origKey} is not a valid zstd parameter`,
      );
    }
    if (typeof value !== 'number' && typeof value !== 'boolean')
      throw invalidArgType('options.params[key]', 'of type number', value);
    // The brotli decoder's: how its ring buffer grows (memory only: taken
    // and left to the pool's decoder, whose ring buffer grows with its output).
    if (
      brotli &&
      mode.decodes &&
      key === constants.BROTLI_DECODER_PARAM_DISABLE_RING_BUFFER_REALLOCATION
    )
      continue;
    const name = names?.[key];
    if (name === undefined) {
      // The zstd decoder's parameters (its window limit) are the pool's
      // own: it follows the output limit.
      throw unsupported(
        `${brotli ? 'Brotli' : 'zstd'} parameter ${origKey}`,
        `the ${mode.kernel} kernel takes ${names === undefined ? 'no parameters' : `only ${Object.keys(names).join(', ')}`}`,
      );
    }
    params[name] = name === 'checksum' ? Boolean(value) : keyedValue(brotli, name, value);
  }
  // brotli's clamp: a window past 24 bits is a large window's.
  if (brotli && params.lgwin > 24 && params.largeWindow !== true) params.lgwin = 24;
  return params;
}

/**
 * Reads node:zlib's options for class `name` (MODES). Returns the kernel,
 * its params (or undefined), the stream's output limit, its flush kinds,
 * whether `info` was asked for, and the Transform's own options.
 */
function readOptions(name, options) {
  const mode = MODES[name];
  const family = mode.family;
  const out = {
    kernel: mode.kernel,
    params: undefined,
    maxOutputLength: kMaxLength,
    flush: 0,
    finishFlush: 0,
    chunkSize: constants.Z_DEFAULT_CHUNK,
    info: Boolean(own(options, 'info')),
    transform: { __proto__: null, autoDestroy: true },
  };
  // The ZlibBase checks, in node:zlib's order.
  const chunkSize = own(options, 'chunkSize');
  if (finite(chunkSize, 'options.chunkSize')) {
    if (chunkSize < constants.Z_MIN_CHUNK)
      throw outOfRange('options.chunkSize', `>= ${constants.Z_MIN_CHUNK}`, chunkSize);
    // node:zlib allocates its output buffer of that size at once.
    if (chunkSize > kMaxLength) throw outOfRange('size', `>= 0 && <= ${kMaxLength}`, chunkSize);
    out.chunkSize = Math.trunc(chunkSize);
  }
  let params;
  if (family === DEFLATE) {
    params = deflateParams(name, mode, options);
    out.flush = intOr(own(options, 'flush'), 'options.flush', 0, constants.Z_BLOCK, 0);
    if (out.flush === constants.Z_FINISH)
      throw unsupported('options.flush Z_FINISH', 'a write may flush, only the end finishes');
    out.finishFlush = intOr(
      own(options, 'finishFlush'),
      'options.finishFlush',
      0,
      constants.Z_BLOCK,
      constants.Z_FINISH,
    );
    // With another kind, the end only flushes (an encoder's stream is
    // left open; a decoder takes an input cut short).
    if (out.finishFlush !== constants.Z_FINISH) params.finishFlush = out.finishFlush;
  } else {
    params = keyedParams(options, mode);
    const [process, finish, last] =
      family === BROTLI
        ? [
            constants.BROTLI_OPERATION_PROCESS,
            constants.BROTLI_OPERATION_FINISH,
            constants.BROTLI_OPERATION_EMIT_METADATA,
          ]
        : [constants.ZSTD_e_continue, constants.ZSTD_e_end, constants.ZSTD_e_end];
    out.flush = intOr(own(options, 'flush'), 'options.flush', process, last, process);
    out.finishFlush = intOr(
      own(options, 'finishFlush'),
      'options.finishFlush',
      process,
      last,
      finish,
    );
    // A decoder told not to finish takes an input cut short (undici's
    // brotli responses); an encoder always finishes its stream.
    if (out.finishFlush !== finish) {
      if (!mode.decodes) {
        throw unsupported(
          `options.finishFlush ${out.finishFlush} on ${name}`,
          'the end is always a finish',
        );
      }
      params.finishFlush = out.finishFlush;
    }
    if (out.flush > constants.BROTLI_OPERATION_FLUSH)
      throw unsupported(`options.flush ${out.flush} on ${name}`, 'a write may only flush');
    // node:zlib's zstd takes a dictionary both ways (as its deflate does).
    if (family === ZSTD) {
      const dictionary = dictionaryOf(options);
      if (dictionary !== undefined) params.dictionary = dictionary;
    }
    const pledged = own(options, 'pledgedSrcSize');
    if (family === ZSTD && !mode.decodes && pledged !== undefined && pledged !== null) {
      if (typeof pledged !== 'number' || !Number.isSafeInteger(pledged) || pledged < 0)
        throw outOfRange('options.pledgedSrcSize', 'a non-negative integer', pledged);
    }
  }
  out.maxOutputLength = intOr(
    own(options, 'maxOutputLength'),
    'options.maxOutputLength',
    1,
    kMaxLength,
    kMaxLength,
  );
  out.params = Object.keys(params).length === 0 ? undefined : params;
  // The Transform's options: the caller's own, but node:zlib's.
  if (options !== null && typeof options === 'object') {
    for (const key in options) {
      if (hasOwn(options, key) && !ZLIB_NAMES.includes(key)) out.transform[key] = options[key];
    }
  }
  return out;
}

/** The deflate family's own options (Zlib's constructor in node:zlib). */
function deflateParams(name, mode, options) {
  const params = { __proto__: null };
  const windowBits = own(options, 'windowBits');
  const headed = mode.decodes && name !== 'InflateRaw';
  if (headed && (windowBits === undefined || windowBits === null || windowBits === 0)) {
    // 0: the header's (inflate, gunzip, unzip); a raw stream has none.
    params.windowBits = 0;
  } else {
    // As node:zlib: `{ windowBits: 8 }` is valid for deflate but not gzip.
    const min = constants.Z_MIN_WINDOWBITS + (name === 'Gzip' ? 1 : 0);
    const bits = intOr(
      windowBits,
      'options.windowBits',
      min,
      constants.Z_MAX_WINDOWBITS,
      undefined,
    );
    if (bits !== undefined) params.windowBits = bits;
  }
  const level = intOr(own(options, 'level'), 'options.level', ...RANGES.level, undefined);
  const memLevel = intOr(
    own(options, 'memLevel'),
    'options.memLevel',
    ...RANGES.memLevel,
    undefined,
  );
  const strategy = intOr(
    own(options, 'strategy'),
    'options.strategy',
    ...RANGES.strategy,
    undefined,
  );
  const dictionary = dictionaryOf(options);
  if (!mode.decodes) {
    if (level !== undefined) params.level = level;
    if (memLevel !== undefined) params.memLevel = memLevel;
    if (strategy !== undefined) params.strategy = strategy;
  }
  // node:zlib sets a dictionary on deflate, inflate (when asked), the raw
  // ones and unzip, never on gzip and gunzip (their format has none).
  if (dictionary !== undefined && name !== 'Gzip' && name !== 'Gunzip')
    params.dictionary = dictionary;
  return params;
}

/** The argument errors a kernel's check of brotli's or zstd's values gives. */
const VALUE_CODES = ['ERR_OUT_OF_RANGE', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_ARG_TYPE'];

/**
 * node:zlib checks brotli's and zstd's values in the library, which refuses
 * the whole stream: ERR_ZLIB_INITIALIZATION_FAILED for a kernel's refusal
 * of one. Other errors are as they are.
 */
function initError(err, kernel) {
  const family = MODES_BY_KERNEL[kernel]?.family;
  if (
    family === DEFLATE ||
    err === null ||
    typeof err !== 'object' ||
    !VALUE_CODES.includes(err.code)
  )
    return err;
  return makeError(Error, 'ERR_ZLIB_INITIALIZATION_FAILED', 'Initialization failed');
}

const MODES_BY_KERNEL = Object.fromEntries(Object.values(MODES).map((mode) => [mode.kernel, mode]));

module.exports = {
  readOptions,
  initError,
  rangeOr,
  intOr,
  RANGES,
  unsupported,
  MODES,
  DEFLATE,
  BROTLI,
  ZSTD,
};
