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
// properties are read (see lib/args/options.js).
//
// The folder: node:zlib's option dialect, used by the pool's own codec
// streams and by the drop-in (lib/zlib/) alike.
//   options.js       this file: node:zlib's options, as it reads them
//   keyed.js         brotli's and zstd's `params`, dictionaries, pledged sizes
//   lines.js         where the Node lines differ, found by trying node:zlib
//   constants.js     node:zlib's constants, zstd's where a Node has none
//   pool-options.js  node:zlib's habits in the pool's own API

const { Buffer } = require('node:buffer');
const { types } = require('node:util');
const { constants } = require('./constants');
const { invalidArgType, makeError, outOfRange } = require('../errors');
const { keyedParams, unsupported } = require('./keyed');
const { garbageRule } = require('./lines');
const { ownRecord } = require('../base/own-record');

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
  'rejectGarbageAfterEnd',
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
    // As given: node:zlib's ERR_BUFFER_TOO_LARGE names it so (1.5, not 1).
    maxOutputGiven: kMaxLength,
    flush: 0,
    finishFlush: 0,
    chunkSize: constants.Z_DEFAULT_CHUNK,
    info: Boolean(own(options, 'info')),
    transform: undefined,
  };
  // In node:zlib's order: the family's own options (its constructor's),
  // then ZlibBase's.
  /** @type {any} */
  const params = family === DEFLATE ? new DeflateParams() : ownRecord();
  if (family === DEFLATE) deflateParams(name, mode, options, params);
  else keyedParams(options, mode, params, own);
  const kinds = FLUSH_KINDS[family];
  const process = kinds[0];
  const finish = kinds[1];
  const last = kinds[2];
  const chunkSize = own(options, 'chunkSize');
  if (finite(chunkSize, 'options.chunkSize')) {
    if (chunkSize < constants.Z_MIN_CHUNK)
      throw outOfRange('options.chunkSize', `>= ${constants.Z_MIN_CHUNK}`, chunkSize);
    // node:zlib allocates its output buffer of that size at once.
    if (chunkSize > kMaxLength) throw outOfRange('size', `>= 0 && <= ${kMaxLength}`, chunkSize);
    out.chunkSize = Math.trunc(chunkSize);
  }
  out.flush = intOr(own(options, 'flush'), 'options.flush', process, last, process);
  out.finishFlush = intOr(
    own(options, 'finishFlush'),
    'options.finishFlush',
    process,
    last,
    finish,
  );
  const maxOutput = own(options, 'maxOutputLength');
  out.maxOutputLength = intOr(maxOutput, 'options.maxOutputLength', 1, kMaxLength, kMaxLength);
  if (out.maxOutputLength !== kMaxLength) out.maxOutputGiven = maxOutput;
  garbageOption(own(options, 'rejectGarbageAfterEnd'), mode, params);
  // Where a decoder's result depends on its output buffer (zstd's; zlib's
  // with a window smaller than 32 KiB), it is given node:zlib's.
  const small = family === DEFLATE && params.windowBits >= 8 && params.windowBits < 15;
  if (mode.decodes && (family === ZSTD || small)) params.chunkSize = out.chunkSize;
  // What node:zlib takes and a pool's stream cannot do, once node:zlib's own checks passed.
  supportedFlushes(name, mode, out, finish);
  // With another kind, the end only flushes (an encoder's stream is left
  // open; a decoder takes an input cut short: undici's brotli responses).
  if (out.finishFlush !== finish) params.finishFlush = out.finishFlush;
  out.params = anyGiven(params) ? params : undefined;
  out.transform = transformOptions(options);
  return out;
}

/**
 * A deflate-family stream's params, each undefined until set (paramsHandle
 * skips those): one shape for every stream, every name an own field, so
 * that no read of one consults a prototype.
 */
class DeflateParams {
  windowBits = undefined;
  level = undefined;
  memLevel = undefined;
  strategy = undefined;
  dictionary = undefined;
  chunkSize = undefined;
  finishFlush = undefined;
  rejectGarbage = undefined;
}

/** Whether `params` has an own property that is not undefined. */
function anyGiven(params) {
  for (const name in params) if (hasOwn(params, name) && params[name] !== undefined) return true;
  return false;
}

/** Per family: the flush kinds' least, the finishing one and the greatest. */
const FLUSH_KINDS = Object.freeze({
  [DEFLATE]: [constants.Z_NO_FLUSH, constants.Z_FINISH, constants.Z_BLOCK],
  [BROTLI]: [
    constants.BROTLI_OPERATION_PROCESS,
    constants.BROTLI_OPERATION_FINISH,
    constants.BROTLI_OPERATION_EMIT_METADATA,
  ],
  [ZSTD]: [constants.ZSTD_e_continue, constants.ZSTD_e_end, constants.ZSTD_e_end],
});

/** Refuses the flush kinds node:zlib takes that a pool's stream cannot honour. */
function supportedFlushes(name, mode, out, finish) {
  if (mode.family === DEFLATE) {
    if (out.flush === constants.Z_FINISH)
      throw unsupported('options.flush Z_FINISH', 'a write may flush, only the end finishes');
    // node:zlib's decoder stops at the first block's end and drops the
    // rest of its input, or of its write (a stream may then fail with
    // ERR_STREAM_PUSH_AFTER_EOF).
    if (out.flush === constants.Z_BLOCK && mode.decodes)
      throw unsupported('options.flush Z_BLOCK on a decoder', 'a write may flush, not stop');
    return;
  }
  if (out.finishFlush !== finish && !mode.decodes) {
    throw unsupported(
      `options.finishFlush ${out.finishFlush} on ${name}`,
      'the end is always a finish',
    );
  }
  if (out.flush > constants.BROTLI_OPERATION_FLUSH)
    throw unsupported(`options.flush ${out.flush} on ${name}`, 'a write may only flush');
}

/**
 * `rejectGarbageAfterEnd`, where node:zlib of this Node has it
 * (./lines.js): a decoder then fails with ERR_TRAILING_JUNK_AFTER_STREAM_END
 * on input after its stream's end, instead of ignoring it.
 */
function garbageOption(value, mode, params) {
  const rule = garbageRule();
  if (rule === 'none') return;
  if (rule === 'checked' && value !== undefined && typeof value !== 'boolean')
    throw invalidArgType('options.rejectGarbageAfterEnd', 'of type boolean', value);
  if (value !== true || !mode.decodes) return;
  // 'checked' (Node 24+): a gzip input is then one member; 'stream' (Node
  // 22): the members are read, and what follows the last one refused.
  if (mode.family === DEFLATE) params.rejectGarbage = rule === 'checked' ? 2 : 1;
  else params.rejectGarbage = true;
}

/**
 * The Transform's options: the caller's own but node:zlib's, with what
 * node:zlib overrides (its streams take and give bytes: no encoding, no
 * object mode, strings decoded).
 */
function transformOptions(options) {
  const transform = ownRecord();
  transform.autoDestroy = true;
  if (options === null || typeof options !== 'object') return transform;
  for (const key in options) {
    if (hasOwn(options, key) && !ZLIB_NAMES.includes(key)) transform[key] = options[key];
  }
  transform.encoding = null;
  transform.objectMode = false;
  transform.writableObjectMode = false;
  // Node 26 sets it; before, node:zlib took `false` and aborted the process
  // on a string written.
  transform.decodeStrings = true;
  return transform;
}

/** The deflate family's own options (Zlib's constructor in node:zlib). */
function deflateParams(name, mode, options, params) {
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
  const level = intOr(
    own(options, 'level'),
    'options.level',
    RANGES.level[0],
    RANGES.level[1],
    undefined,
  );
  const memLevel = intOr(
    own(options, 'memLevel'),
    'options.memLevel',
    RANGES.memLevel[0],
    RANGES.memLevel[1],
    undefined,
  );
  const strategy = intOr(
    own(options, 'strategy'),
    'options.strategy',
    RANGES.strategy[0],
    RANGES.strategy[1],
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
}

/** The argument errors a kernel's check of brotli's or zstd's values gives. */
const VALUE_CODES = ['ERR_OUT_OF_RANGE', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_ARG_TYPE'];

/**
 * node:zlib checks brotli's and zstd's values in the library, which refuses
 * the whole stream: ERR_ZLIB_INITIALIZATION_FAILED for a kernel's refusal
 * of one, in node:zlib's words (zstd's binding says which step failed).
 * Other errors are as they are.
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
  const message = family === ZSTD ? 'Setting parameter failed' : 'Initialization failed';
  return makeError(Error, 'ERR_ZLIB_INITIALIZATION_FAILED', message);
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
