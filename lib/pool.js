'use strict';
// The Pool: the public façade (index.js exports it). It reads and checks
// what each call is given, throws Node-style errors synchronously, and
// hands the rest to its engine (lib/engine/engine.js), which owns the
// native pool. Events come from the engine through the Pool's emit.

const { EventEmitter } = require('node:events');
const { syncKernels, kernelNames, KERNEL_FACTS } = require('./addon/binding');
const { DEFAULTS } = require('./args/defaults');
const { joinMachineBudget, budgetStats } = require('./engine/budget');
const { snapshot, isPlainArray, received } = require('./engine/binary');
const {
  invalidArgType,
  invalidArgValue,
  outOfRange,
  abortError,
  fsError,
  fileFailure,
} = require('./errors');
const { recordLengths } = require('./args/records');
const { ENCODINGS, resolvePoolOptions, resolveStatsOptions } = require('./args/options');
const { isAborted, signalReason } = require('./engine/signals');
const { NativePromise } = require('./base/intrinsics');
const { ownArray } = require('./base/own-array');
const { paramsHandle, checkDefaults } = require('./args/params');
const { loadKernels } = require('./args/kernels');
const { elementNamer } = require('./engine/batch');
const { MapIterator } = require('./map/iterator');
const { OPEN_CODEC, ONE_SHOT, POOL_SHAPE, METRICS_SOURCE } = require('./symbols');
const { filePath, absolute, accessDenied } = require('./args/files');
const { defaultSelect, kernelId, taskOptions } = require('./args/task-options');
const { Engine } = require('./engine/engine');
const { TaskOptions, taskExtra } = require('./engine/post');
const { MapPort } = require('./engine/ports');
const { StreamFactory } = require('./streams/factory');

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');
/**
 * Test-only option key (not part of the API): thread starts after this many
 * successful ones fail as if the OS refused them with EAGAIN.
 */
const kFailSpawnsAfter = Symbol.for('tidepool.test.failSpawnsAfter');
/**
 * Test-only option key: the machine budget's capacity for this process,
 * instead of its CPUs (so a test can contend on any machine).
 */
const kBudgetCapacity = Symbol.for('tidepool.test.budgetCapacity');

/**
 * A pool of native threads that run kernels (SHA-256, BLAKE3, ...) over
 * Buffers without copying them. See README.md for every option and event.
 */
class Pool extends EventEmitter {
  #engine;
  /** The pool's kernel, what it runs with (undefined, or { params }: its `params` option), maxThreads: what taskOptions() defaults to. */
  #defaults;
  /** What taskOptions() gives when a call passes no options. */
  #noOptions;
  #select;
  /** How errors name the input: 'message', or 'select(message)' with a custom select. */
  #inputName;
  /** What map()'s iterators ask of the engine (made on first use). */
  #mapPort = undefined;
  /** What makes the pool's streams (lib/streams/factory.js). */
  #factory;

  /** @param {import('../index').PoolOptions} [options] */
  constructor(options) {
    super();
    const resolved = resolvePoolOptions(
      options,
      DEFAULTS,
      kernelId,
      kFailSpawnsAfter,
      kBudgetCapacity,
    );
    const kernel = resolved.kernel;
    // Read once (by resolvePoolOptions): a getter must not answer differently the second time.
    const params = resolved.params;
    let extra;
    if (params !== undefined)
      extra = Object.freeze(
        taskExtra(paramsHandle(kernel, params, 'options.params', false), undefined),
      );
    else checkDefaults(kernel, 'options.params');
    this.#defaults = Object.freeze({ kernel, extra, maxThreads: resolved.native.maxThreads });
    this.#noOptions = Object.freeze(
      new TaskOptions(kernel, extra, undefined, undefined, undefined),
    );
    this.#select = resolved.select === undefined ? defaultSelect : resolved.select;
    this.#inputName = resolved.select === undefined ? 'message' : 'select(message)';
    if (resolved.native.machineBudget) resolved.native.machineBudget = joinMachineBudget();
    this.#engine = new Engine(this, {
      native: resolved.native,
      encoding: resolved.encoding,
      inputName: this.#inputName,
      maxQueue: resolved.maxQueue,
      queueFull: resolved.queueFull,
      maxInputBytes: resolved.maxInputBytes,
    });
    this.#factory = new StreamFactory(this.#engine, this.#defaults);
    process.nextTick(() => this.emit('online'));
  }

  /** Names of every available kernel: the built-ins, then the loaded ones. */
  static get kernels() {
    syncKernels();
    return kernelNames();
  }

  /**
   * Registers the kernels of a native kernel library for every pool of the
   * process, and returns their names. `source`: the library's path (a
   * string, resolved against the working directory, or a file: URL), or the
   * handle a kernel library's addon exports. See docs/writing-kernels.md.
   */
  static loadKernels(source) {
    return loadKernels(source);
  }

  /**
   * Runs the pool's kernel (or `options.kernel`) over the message's binary.
   * Resolves with `{ result, message }`, `message` being the very object posted.
   */
  post(message, options) {
    const o =
      options === undefined ? this.#noOptions : taskOptions(options, 'post', this.#defaults);
    return this.#engine.post(message, snapshot(this.#select(message), this.#inputName), o);
  }

  /**
   * The worker_threads-style API: the result arrives as a `'message'` event
   * `(result, message)`; a failed task emits `'error'` `(err, message)`.
   */
  postMessage(message) {
    this.#engine.postMessage(
      message,
      snapshot(this.#select(message), this.#inputName),
      this.#noOptions,
    );
  }

  /**
   * Runs a kernel over a file's bytes, read by a pool thread in 256 KiB
   * chunks: no JavaScript Buffer holds the file, and no libuv thread reads
   * it. `path`: a string, Buffer or file: URL, resolved against the working
   * directory now. Resolves with `{ result, path }` (`path` as given);
   * rejects with fs-style errors (`code` `'ENOENT'`, `syscall`, `path`,
   * `errno`). The file is opened with the process's permissions, as `fs`
   * opens it; under the permission model, `--allow-fs-read` must cover it.
   */
  postFile(path, options) {
    const { bytes: given, shown } = filePath(path);
    const { kernel, extra, signal, timeoutMs } =
      options === undefined ? this.#noOptions : taskOptions(options, 'postFile', this.#defaults);
    // What depends on the process's state (its working directory, the
    // permission model) rejects, as fs.promises would.
    let bytes;
    let refused;
    try {
      bytes = absolute(given);
      refused = accessDenied(bytes);
    } catch (err) {
      refused = err;
    }
    if (refused !== undefined) {
      this.#engine.countFailures(refused, 1);
      return NativePromise.reject(refused);
    }
    const file = taskExtra(extra?.params, extra?.maxOutputBytes, true);
    return this.#engine
      .post(undefined, bytes, new TaskOptions(kernel, file, signal, timeoutMs, undefined))
      .then(
        (settled) => ({ result: settled.result, path }),
        (err) => {
          // The native side knows the resolved path's bytes, not the caller's path.
          const failure = fileFailure(err);
          throw failure === undefined
            ? err
            : fsError(failure.syscall, failure.errno, failure.name, shown);
        },
      );
  }

  /**
   * Runs the kernel over every message of the Array `messages`, in chunks
   * of one native call each; resolves with the results in the order of the
   * messages. Every message is read and checked before anything is queued
   * (errors are thrown, naming `messages[i]`). If a task fails, the promise
   * rejects with its error (its `index` says which) and the batch's other
   * tasks are cancelled.
   */
  postMany(messages, options) {
    const o =
      options === undefined ? this.#noOptions : taskOptions(options, 'postMany', this.#defaults);
    if (!isPlainArray(messages))
      throw invalidArgType('messages', 'an instance of Array', messages, received(messages));
    const count = messages.length;
    const name = elementNamer('messages', this.#select !== defaultSelect);
    // Every message read once, `select` run once per message and the
    // snapshots taken: all the user code of this call runs in this loop.
    const datas = ownArray(count);
    for (let i = 0; i < count; i++) {
      name.at = i;
      datas[i] = this.#take(messages[i], name);
    }
    return this.#engine.postMany(datas, name, o);
  }

  /**
   * Runs the kernel over every record of one binary `data`, records that
   * lie back to back: `lengths` is every record's length, or each one's (an
   * Array or Uint32Array). Read in place, with no object per record;
   * resolves as postMany() does (with `packed`, a hash's results in one
   * Buffer).
   */
  postRecords(data, lengths, options) {
    const o =
      options === undefined ? this.#noOptions : taskOptions(options, 'postRecords', this.#defaults);
    const taken = snapshot(data, 'data');
    const cuts = recordLengths(lengths);
    // Packed results must have one length: the kernel's packing says so.
    if (o.packed && KERNEL_FACTS[o.kernel].packing !== 'equal') {
      throw invalidArgValue(
        'options.packed',
        `is for hash kernels, whose results have one length; kernel '${kernelNames()[o.kernel]}' gives results of their own lengths (leave packed out for an Array of them)`,
      );
    }
    return this.#engine.postRecords(taken, cuts, o);
  }

  /**
   * Runs the kernel over every message an iterable or async iterable
   * yields, with at most `concurrency` tasks in flight; an async iterable
   * of `{ result, message }` in the order of the messages. Breaking out of
   * the loop cancels the tasks in flight and closes the source.
   */
  map(iterable, options) {
    const o = taskOptions(options === undefined ? {} : options, 'map', this.#defaults);
    let source;
    let sync;
    if (iterable !== null && iterable !== undefined) {
      const asyncMethod = iterable[Symbol.asyncIterator];
      const syncMethod =
        asyncMethod === undefined || asyncMethod === null ? iterable[Symbol.iterator] : undefined;
      if (typeof asyncMethod === 'function') {
        source = asyncMethod.call(iterable);
        sync = false;
      } else if (typeof syncMethod === 'function' && typeof iterable !== 'string') {
        source = syncMethod.call(iterable);
        sync = true;
      }
    }
    if (source === undefined) {
      throw invalidArgType('iterable', 'an iterable or async iterable of messages', iterable);
    }
    if (source === null || typeof source !== 'object') {
      throw invalidArgType('iterable', 'an iterable whose iterator is an object', source);
    }
    if (o.signal !== undefined && isAborted(o.signal)) throw abortError(signalReason(o.signal));
    this.#mapPort ??= new MapPort(
      this.#engine,
      (message, name) => this.#take(message, name),
      this.#select !== defaultSelect,
    );
    return new MapIterator(this.#mapPort, source, sync, o);
  }

  /** What a task of a batch reads: `select(message)`, snapshot (user code runs here). */
  #take(message, name) {
    const select = this.#select;
    return snapshot(
      select === defaultSelect ? defaultSelect(message, name) : select(message),
      name,
    );
  }

  /**
   * An incremental hash whose chunks run on the pool's threads, in order,
   * the kernel's state kept in Rust between them (lib/streams/hash.js): update()
   * returns at once, digest() a Promise of the digest. A Transform whose
   * readable side gives the digest, as node:crypto's Hash.
   */
  createHash(kernel, options) {
    return this.#factory.hash(kernel, options);
  }

  /** node:crypto's createHmac(algorithm, key[, options]) on the pool's threads. */
  createHmac(algorithm, key, options) {
    return this.#factory.hmac(algorithm, key, options);
  }

  /** For lib/zlib/'s classes: a codec stream's port and native handle (see OPEN_CODEC). */
  [OPEN_CODEC](kernel, params) {
    return this.#factory.open(kernel, params);
  }

  /**
   * For lib/zlib/'s one-shots (see ONE_SHOT): a task of kernel `kernel` (a
   * codec's name) with `params` as the kernel takes them (undefined: its
   * defaults, never the pool's own `params`, as node:zlib's gzip(buffer)
   * is its defaults'), `maxOutputBytes` (node:zlib's maxOutputLength,
   * checked by lib/codecs/), over `data` (a view the one-shot made of its
   * input, checked by the engine as post()'s), stopped by `signal` (undefined: none). Not through post(): no
   * `select`, no task options read again.
   */
  [ONE_SHOT](kernel, params, maxOutputBytes, data, signal) {
    const id = kernelId(kernel, 'kernel');
    const handle =
      params === undefined ? undefined : paramsHandle(id, params, 'options.params', true);
    return this.#engine.oneShot(
      data,
      new TaskOptions(id, taskExtra(handle, maxOutputBytes), signal, undefined, undefined),
    );
  }

  /** For lib/zlib/'s install(): what turns a message into a result (see POOL_SHAPE). */
  get [POOL_SHAPE]() {
    return { encoding: this.#engine.encoding, select: this.#select !== defaultSelect };
  }

  /** node:zlib's createGzip(), on the pool's threads; `params` as for the `gzip` kernel. */
  createGzip(options) {
    return this.#factory.codec('gzip', options);
  }

  createGunzip(options) {
    return this.#factory.codec('gunzip', options);
  }

  createDeflate(options) {
    return this.#factory.codec('deflate', options);
  }

  createInflate(options) {
    return this.#factory.codec('inflate', options);
  }

  createDeflateRaw(options) {
    return this.#factory.codec('deflateRaw', options);
  }

  createInflateRaw(options) {
    return this.#factory.codec('inflateRaw', options);
  }

  createBrotliCompress(options) {
    return this.#factory.codec('brotliCompress', options);
  }

  createBrotliDecompress(options) {
    return this.#factory.codec('brotliDecompress', options);
  }

  /** node:zlib's createUnzip(): gzip or zlib, as the header says. */
  createUnzip(options) {
    return this.#factory.codec('unzip', options);
  }

  createZstdCompress(options) {
    return this.#factory.codec('zstdCompress', options);
  }

  createZstdDecompress(options) {
    return this.#factory.codec('zstdDecompress', options);
  }

  createLz4Compress(options) {
    return this.#factory.codec('lz4Compress', options);
  }

  createLz4Decompress(options) {
    return this.#factory.codec('lz4Decompress', options);
  }

  /**
   * True while the queue holds `maxQueue` tasks or posts wait for room; a
   * `'drain'` event follows when it falls back below.
   */
  get needsDrain() {
    return this.#engine.admission.needsDrain;
  }

  /**
   * A snapshot of the pool's threads, queue and counters. `waitTime` (queue
   * wait) and `runTime` (kernel time) cover every task since the pool was
   * created, or since the last `stats({ reset: true })`.
   */
  stats(options) {
    const engine = this.#engine;
    const s = engine.native.stats(resolveStatsOptions(options));
    return {
      threads: s.threads,
      idleThreads: s.idleThreads,
      busyThreads: s.busyThreads,
      queued: s.queued,
      oldestQueuedMs: s.oldestQueuedMs,
      pending: engine.pending + engine.admission.waitingCount,
      completed: engine.completed,
      failed: engine.failed,
      spawned: s.spawned,
      retired: s.retired,
      spawnErrors: s.spawnErrors,
      waitTime: s.waitTime,
      runTime: s.runTime,
      workingBytes: s.workingBytes,
      memoryWaiting: s.memoryWaiting,
      budget: s.budget === undefined || s.budget === null ? null : budgetStats(s.budget),
    };
  }

  /** True once close() or destroy() was called. */
  get closed() {
    return this.#engine.lifecycle.closed;
  }

  /** Stops accepting tasks, finishes the queued ones, joins the threads. */
  close() {
    return this.#engine.close();
  }

  /** Stops accepting tasks, rejects queued ones, cancels running ones, joins the threads. */
  destroy() {
    return this.#engine.destroy();
  }

  [asyncDispose]() {
    return this.close();
  }

  /**
   * What tidepool/metrics reads at a scrape (lib/metrics.js) from `pool`,
   * or undefined when it is not a Pool (a brand check: an object made from
   * Pool.prototype has none of its fields). Read from the engine, not
   * through methods a caller may have replaced.
   */
  static [METRICS_SOURCE](pool) {
    if (pool === null || typeof pool !== 'object' || !(#engine in pool)) return undefined;
    const engine = pool.#engine;
    const failures = { __proto__: null };
    for (const code in engine.failures) failures[code] = engine.failures[code];
    // One native call: the gauges, counters and histograms of one moment.
    const native = engine.native.metrics();
    return {
      threads: native.threads,
      busyThreads: native.busyThreads,
      queued: native.queued,
      oldestQueuedMs: native.oldestQueuedMs,
      completed: engine.completed,
      retired: native.retired,
      spawnErrors: native.spawnErrors,
      closed: engine.lifecycle.closed,
      failures,
      native,
    };
  }
}

/**
 * The input of the `spin` and `sleep` kernels: a 4-byte Buffer holding
 * `us` microseconds as a little-endian uint32.
 */
function micros(us) {
  if (typeof us !== 'number') throw invalidArgType('us', 'of type number', us);
  if (!Number.isInteger(us) || us < 0 || us > 0xffffffff)
    throw outOfRange('us', 'an integer >= 0 and <= 4294967295', us);
  const buf = Buffer.allocUnsafe(4);
  buf.writeUInt32LE(us, 0);
  return buf;
}

module.exports = { Pool, ENCODINGS, micros };
