'use strict';
// The options of one call: a task's (post(), postMany(), postRecords(), map(), postFile())
// and a stream's (createHash(), createGzip()...), read once, checked, and
// turned into what the engine takes. Pool-wide options are lib/args/options.js's.

const { KERNELS, KERNEL_FACTS, kernelIdOf, syncKernels } = require('../addon/binding');
const { isBinaryInput, received, BINARY_TYPES } = require('../engine/binary');
const { makeError, invalidArgType, outOfRange, closestKernel } = require('../errors');
const {
  checkTaskKeys,
  misplacedHint,
  ownOptions,
  concurrencyOption,
  TASK_OPTION,
} = require('./options');
const { isAborted } = require('../engine/signals');
const { paramsHandle, checkDefaults } = require('./params');
const { TaskOptions, taskExtra } = require('../engine/post');

const BUFFER_MAX_LENGTH = require('node:buffer').constants.MAX_LENGTH;

/** map()'s default `concurrency`, per thread of `maxThreads`. */
const MAP_CONCURRENCY_PER_THREAD = 4;

/**
 * The default `select`: the message if it is binary (or an Array), else
 * `message.data`. `name` says how errors name the message (see label()).
 */
function defaultSelect(message, name = 'message') {
  if (isBinaryInput(message)) return message;
  if (message !== null && typeof message === 'object' && 'data' in message) return message.data;
  throw invalidArgType(
    name,
    `${BINARY_TYPES}, or an object with such a "data" property`,
    message,
    withoutData(message),
  );
}

/**
 * received(), and for an object without "data" its keys and the two ways
 * out: what someone porting tasks of another shape (piscina's) meets first.
 */
function withoutData(message) {
  if (message === null || typeof message !== 'object' || isBinaryInput(message))
    return received(message);
  const keys = Object.keys(message);
  const shown = keys.length > 8 ? `${keys.slice(0, 8).join(', ')}, …` : keys.join(', ');
  // The key of a binary value, read without running a getter; else a name.
  const binaryKey = keys.find((k) =>
    isBinaryInput(Object.getOwnPropertyDescriptor(message, k)?.value),
  );
  const example = `(m) => m.${binaryKey ?? 'bytes'}`;
  return (
    `${received(message)} with ${keys.length ? `the keys ${shown}` : 'no keys'} and no "data": ` +
    `put the bytes in "data", or give the pool a select function that finds them ` +
    `(new Pool({ select: ${example} }))`
  );
}

/**
 * The kernels an unknown name's error lists: not those for tests and
 * benchmarks (they take a duration, echo, or panic), usable by name but
 * no answer to an unknown one.
 */
function knownKernels() {
  const out = [];
  for (let id = 0; id < KERNELS.length; id++)
    if (KERNEL_FACTS[id].kind !== 'test') out[out.length] = KERNELS[id];
  return out;
}

/** The id of kernel `name` (`argName` names it in errors). */
function kernelId(name, argName) {
  if (typeof name !== 'string') throw invalidArgType(argName, 'of type string', name);
  let id = kernelIdOf(name);
  // Another realm of this process (a worker thread) may have loaded it.
  if (id === undefined && syncKernels()) id = kernelIdOf(name);
  if (id === undefined) {
    const known = knownKernels();
    const near = closestKernel(name, known);
    const hint = near === undefined ? '' : ` Did you mean '${near}'?`;
    throw makeError(
      TypeError,
      'ERR_TIDEPOOL_UNKNOWN_KERNEL',
      `Unknown kernel ${JSON.stringify(name)}.${hint} Known kernels: ${known.join(', ')}`,
    );
  }
  return id;
}

/** `options.maxOutputBytes` (undefined, or an integer from 1 to `max`), checked. */
function checkOutputLimit(value, max) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number')
    throw invalidArgType('options.maxOutputBytes', 'of type number', value);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw outOfRange('options.maxOutputBytes', `an integer >= 1 and <= ${max}`, value);
  }
  return value;
}

/**
 * Reads the options of post(), postMany(), postRecords(), postFile() and map() (`method`):
 * the kernel and what it runs with (`extra`: undefined, or `{ params,
 * maxOutputBytes }`), the signal, the run-time limit (undefined: none),
 * for map() `concurrency` and for postMany() and postRecords() `packed`. A post's own params serve its one task
 * (its key is let go once the task is queued); a batch's serve them all.
 * `pool`: the pool's kernel, its `extra` and maxThreads.
 */
function taskOptions(options, method, pool) {
  if (options === null || typeof options !== 'object')
    throw invalidArgType('options', 'of type object', options);
  // Only the options given as own properties are read (lib/args/options.js).
  const given = checkTaskKeys(options, method);
  let kernel = pool.kernel;
  let extra = pool.extra;
  const name = (given & TASK_OPTION.kernel) !== 0 ? options.kernel : undefined;
  if (name !== undefined) {
    kernel = kernelId(name, 'options.kernel');
    // The pool's params are for the pool's kernel.
    if (kernel !== pool.kernel) extra = undefined;
  }
  const signal = (given & TASK_OPTION.signal) !== 0 ? options.signal : undefined;
  if (signal !== undefined && (signal === null || typeof signal !== 'object')) {
    throw invalidArgType('options.signal', 'an instance of AbortSignal', signal);
  }
  let timeoutMs = (given & TASK_OPTION.timeoutMs) !== 0 ? options.timeoutMs : undefined;
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number')
      throw invalidArgType('options.timeoutMs', 'of type number', timeoutMs);
    if (!(timeoutMs > 0) || (timeoutMs > 2 ** 31 && timeoutMs !== Infinity)) {
      throw outOfRange('options.timeoutMs', 'a number > 0 and <= 2^31, or Infinity', timeoutMs);
    }
    if (timeoutMs === Infinity) timeoutMs = undefined;
  }
  const maxOutputBytes = checkOutputLimit(
    (given & TASK_OPTION.maxOutputBytes) !== 0 ? options.maxOutputBytes : undefined,
    BUFFER_MAX_LENGTH,
  );
  const concurrency =
    method === 'map'
      ? concurrencyOption(
          (given & TASK_OPTION.concurrency) !== 0 ? options.concurrency : undefined,
          pool.maxThreads * MAP_CONCURRENCY_PER_THREAD,
        )
      : undefined;
  const params = (given & TASK_OPTION.params) !== 0 ? options.params : undefined;
  if (params !== undefined) {
    extra = taskExtra(
      paramsHandle(kernel, params, 'options.params', method === 'post'),
      maxOutputBytes,
    );
  } else {
    if (extra === undefined && kernel !== pool.kernel) checkDefaults(kernel, 'options.params');
    if (maxOutputBytes !== undefined)
      extra = taskExtra(extra === undefined ? undefined : extra.params, maxOutputBytes);
  }
  const packed = (given & TASK_OPTION.packed) !== 0 ? options.packed : undefined;
  if (packed !== undefined && typeof packed !== 'boolean')
    throw invalidArgType('options.packed', 'of type boolean', packed);
  return new TaskOptions(kernel, extra, signal, timeoutMs, concurrency, packed === true);
}

const HASH_OPTIONS = Object.freeze(['params', 'signal', 'highWaterMark']);
const HMAC_OPTIONS = Object.freeze(['signal', 'highWaterMark']);
const CODEC_STREAM_OPTIONS = Object.freeze(['params', 'maxOutputBytes', 'highWaterMark', 'signal']);

/**
 * The options of a stream (createHash, createGzip...): only the names in
 * `known`, each read once if given as an own property. (An aborted signal
 * destroys the stream at once, as node:zlib's does: see engine/aborts.js.)
 */
function streamOptions(options, known, method) {
  const out = {
    __proto__: null,
    params: undefined,
    signal: undefined,
    maxOutputBytes: undefined,
    highWaterMark: undefined,
  };
  if (options === undefined) return out;
  if (options === null || typeof options !== 'object')
    throw invalidArgType('options', 'of type object', options);
  const call = method === 'createHash' ? `${method}(kernel, %)` : `${method}(%)`;
  const given = ownOptions(options, known, 'options', (key) => misplacedHint(key, call));
  for (let i = 0; i < known.length; i++) out[known[i]] = given[known[i]];
  const signal = out.signal;
  if (signal !== undefined) {
    if (signal === null || typeof signal !== 'object')
      throw invalidArgType('options.signal', 'an instance of AbortSignal', signal);
    isAborted(signal); // throws for what is not an AbortSignal
  }
  const highWaterMark = out.highWaterMark;
  if (
    highWaterMark !== undefined &&
    (typeof highWaterMark !== 'number' || !(highWaterMark >= 0) || !Number.isFinite(highWaterMark))
  ) {
    throw outOfRange('options.highWaterMark', 'a finite number >= 0', highWaterMark);
  }
  return out;
}

/**
 * The writable side's highWaterMark of a pool stream given none: a write
 * waits for a task on another thread, and the writes queued behind it
 * meanwhile are the next task's input (one task for many writes). At
 * Node's 16 KiB, a producer of 64 KiB chunks would have one in flight and
 * none queued, and the thread would idle between tasks. Node emits
 * 'drain' only once every write (the one in flight too) was called back,
 * so a piped producer refills the buffer from empty after each drain and
 * its first write goes alone: at H bytes, tasks alternate one chunk and
 * H minus a chunk, and the round trips between them cost most at small H
 * (docs/benchmarks-history.md, "Streams: what keeping Node's contracts
 * costs").
 */
const STREAM_WRITE_AHEAD = 2 << 20;

/**
 * A stream's Transform options (without a prototype: Node reads inherited
 * options): `highWaterMark` for both sides when given, else Node's default
 * for the readable side and STREAM_WRITE_AHEAD for the writable one.
 */
function streamBuffers(highWaterMark) {
  if (highWaterMark !== undefined) return { __proto__: null, highWaterMark };
  return { __proto__: null, writableHighWaterMark: STREAM_WRITE_AHEAD };
}

module.exports = {
  defaultSelect,
  kernelId,
  checkOutputLimit,
  taskOptions,
  HASH_OPTIONS,
  HMAC_OPTIONS,
  CODEC_STREAM_OPTIONS,
  streamOptions,
  streamBuffers,
  STREAM_WRITE_AHEAD,
};
