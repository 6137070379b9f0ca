'use strict';
// The Pool: the JavaScript face of the native pool (index.js exports it).
//
// This file does what must happen on the JS thread and nothing more:
//   * take what a post reads, once, when post() is called (binary.js),
//     validate it and throw Node-style errors synchronously;
//   * keep every posted message (and the snapshot of its binaries) reachable
//     until its task settles, since Rust threads read that memory in place;
//   * settle a whole batch of finished tasks per call from native code
//     (`#onBatch`), reading results from memory shared with Rust.

const { EventEmitter } = require('node:events');
const {
  binding,
  KERNELS,
  kernelIdOf,
  MIN_INPUT_BYTES,
  syncKernels,
  kernelNames,
  BATCH_CAPACITY,
  SLAB_BYTES,
  LARGE_CODE,
  TASK_CODES,
} = require('./binding');
const { snapshot, readableBytes, checkResizable, isBinaryInput, isPlainArray, received, BINARY_TYPES } = require('./binary');
const {
  makeError,
  invalidArgType,
  outOfRange,
  closedError,
  abortError,
  queueFullError,
  droppedError,
  destroyedError,
  taskError,
  throwLater,
  invalidArgValue,
  fsError,
  fileFailure,
  countedCode,
  closestKernel,
} = require('./errors');
const {
  ENCODINGS,
  checkTaskKeys,
  misplacedHint,
  ownOptions,
  resolvePoolOptions,
  resolveStatsOptions,
  concurrencyOption,
  TASK_OPTION,
} = require('./options');
const { Watches, isAborted, signalReason } = require('./signals');
const { WaitQueue } = require('./wait-queue');
const { NativePromise } = require('./intrinsics');
const { ownArray, grown, asPlainArray } = require('./own-array');
const { paramsHandle, checkDefaults } = require('./params');
const { loadKernels } = require('./kernels');
const { Batch, AllResults, elementNamer } = require('./batch');
const { MapIterator } = require('./map');
const { Hash } = require('./hash');
const { CodecStream } = require('./codec-stream');
const { ABORT, WHEN_OVER } = require('./stream-tasks');
const { filePath, absolute, accessDenied } = require('./files');
const { METRICS_SOURCE } = require('./metrics-source');

const BUFFER_MAX_LENGTH = require('node:buffer').constants.MAX_LENGTH;

const DEFAULTS = Object.freeze({
  kernel: 'sha256',
  encoding: 'buffer',
  minThreads: 1,
  maxThreads: binding.availableParallelism(),
  spawnDelayMs: 1,
  idleTimeoutMs: 250,
  checkIntervalMs: 1,
  scaleRule: 'demand',
  maxQueue: Infinity,
  queueFull: 'reject',
  maxQueueAgeMs: Infinity,
  maxInputBytes: Infinity,
  // The largest Buffer this Node can make (4 GiB on Node 20, 64-bit).
  maxOutputBytes: BUFFER_MAX_LENGTH,
  // What a decoder (gunzip, inflate...) may produce unless maxOutputBytes is
  // given: 256 MiB, so a 256 KiB gzip bomb cannot claim 4 GiB per thread
  // (README, "Compression").
  maxExpandedBytes: Math.min(256 * 1024 * 1024, BUFFER_MAX_LENGTH),
  niceIncrement: binding.defaultNiceIncrement(),
});

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');
/**
 * Test-only option key (not part of the API): thread starts after this many
 * successful ones fail as if the OS refused them with EAGAIN.
 */
const kFailSpawnsAfter = Symbol.for('tidepool.test.failSpawnsAfter');
const applyFunction = Reflect.apply;
const defineProperty = Reflect.defineProperty;
const setPrototypeOf = Reflect.setPrototypeOf;
/**
 * setImmediate as Node has it at load: a test's fake timers (or an
 * environment without the global) must not hold back delivery.
 */
const { setImmediate: scheduleImmediate } = require('node:timers');

/**
 * The default `select`: the message if it is binary (or an Array), else
 * `message.data`. `name` says how errors name the message (see label()).
 */
function defaultSelect(message, name = 'message') {
  if (isBinaryInput(message)) return message;
  if (message !== null && typeof message === 'object' && 'data' in message) return message.data;
  throw invalidArgType(name, `${BINARY_TYPES}, or an object with such a "data" property`, message, received(message));
}

/**
 * The tasks of a postMany() or map() go to the native side a chunk per
 * call: the threads start on a chunk as soon as it is in. A chunk's tasks
 * have consecutive slots, `BATCH_SLOT | id << CHUNK_BITS | i`, so nothing
 * is stored per task: the chunk (`#chunks[id]`) knows the batch, where its
 * tasks' indices start and how many are still out.
 */
const CHUNK_BITS = 10;
const CHUNK = 1 << CHUNK_BITS;
const BATCH_SLOT = 2 ** 31;
/** What #submitBatch did: queued everything, stopped at its chunk budget, found the queue full, or failed the batch. */
const FEED = Object.freeze({ done: 0, more: 1, full: 2, failed: 3 });
/** Chunk ids fit the 21 bits between BATCH_SLOT and a task's place in its chunk. */
const MAX_CHUNKS = 2 ** (31 - CHUNK_BITS);

/** Data fed to a batch while it still had some to submit (see #feedBatch). */
class Segment {
  datas;
  base;
  count;
  constructor(datas, base, count) {
    this.datas = datas;
    this.base = base;
    this.count = count;
  }
}

/** Makes a batch's next segment its current data; false if it has none. */
function nextSegment(batch) {
  const segments = batch.segments;
  if (segments === undefined || segments.empty) return false;
  const segment = segments.peek();
  segments.shift();
  batch.segmentTasks -= segment.count;
  batch.datas = segment.datas;
  batch.base = segment.base;
  batch.next = 0;
  batch.end = segment.count;
  return true;
}

/**
 * What a task runs with besides its kernel and input (undefined when it is
 * nothing): a params handle, an output limit; for a step of a stream's
 * chunk (lib/stream-tasks.js) the stream's handle, what follows the chunk
 * (0, a flush kind, or LAST), the output after which the step stops, the
 * chunk's number, and whether a closed pool still takes it (the stream's
 * end was asked for before close()); for postFile(), `file` (the input is
 * the path). One shape for all, so that #trySubmit reads them with one
 * hidden class.
 */
function taskExtra(params, maxOutputBytes, stream = undefined, end = 0, budget = 0, seq = 0, file = false, accepted = false) {
  return { params, maxOutputBytes, stream, end, budget, seq, file, accepted };
}

/**
 * The message of a stream's task: its result is the kernel's bytes,
 * whatever the pool's encoding (#onBatch looks for it).
 */
const STREAM_STEP = Object.freeze({ __proto__: null });

/** `options.maxOutputBytes` (undefined, or an integer from 1 to `max`), checked. */
function checkOutputLimit(value, max) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') throw invalidArgType('options.maxOutputBytes', 'of type number', value);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw outOfRange('options.maxOutputBytes', `an integer >= 1 and <= ${max}`, value);
  }
  return value;
}

/** The error code a task cancelled with its batch counts under, when the batch has no error (tidepool/metrics). */
const CANCELLED = Object.freeze({ code: 'ERR_TIDEPOOL_CANCELLED' });

/** The kernels createHash() takes besides loaded ones: their output comes at the end. */
const HASH_KERNELS = new Set(['sha256', 'sha384', 'sha512', 'sha1', 'md5', 'hmac', 'blake3', 'xxh3', 'xxh64', 'crc32', 'crc32c']);
const HASH_OPTIONS = Object.freeze(['params', 'signal', 'highWaterMark']);
const CODEC_STREAM_OPTIONS = Object.freeze(['params', 'maxOutputBytes', 'highWaterMark', 'signal']);

/**
 * The options of a stream (createHash, createGzip...): only the names in
 * `known`, each read once if given as an own property. (An aborted signal
 * destroys the stream at once, as node:zlib's does: see #watchStream.)
 */
function streamOptions(options, known, method) {
  const out = { __proto__: null, params: undefined, signal: undefined, maxOutputBytes: undefined, highWaterMark: undefined };
  if (options === undefined) return out;
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options);
  const call = method === 'createHash' ? `${method}(kernel, %)` : `${method}(%)`;
  const given = ownOptions(options, known, 'options', (key) => misplacedHint(key, call));
  for (let i = 0; i < known.length; i++) out[known[i]] = given[known[i]];
  const signal = out.signal;
  if (signal !== undefined) {
    if (signal === null || typeof signal !== 'object') throw invalidArgType('options.signal', 'an instance of AbortSignal', signal);
    isAborted(signal); // throws for what is not an AbortSignal
  }
  const highWaterMark = out.highWaterMark;
  if (highWaterMark !== undefined && (typeof highWaterMark !== 'number' || !(highWaterMark >= 0) || !Number.isFinite(highWaterMark))) {
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
 * (BENCHMARKS.md, "Streams: what keeping Node's contracts costs").
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

/** A stream step's output: the settled task's result. */
function resultOf(settled) {
  return settled.result;
}

/** A chunk of a batch in flight (see CHUNK). */
class Chunk {
  batch;
  /** Index (in the batch) of the chunk's first task. */
  base;
  /** Holds the snapshots native code reads until the chunk's last task settles. */
  datas;
  /** Tasks not yet settled. */
  remaining;
  constructor(batch, base, datas, remaining) {
    this.batch = batch;
    this.base = base;
    this.datas = datas;
    this.remaining = remaining;
  }
}
/** map()'s default `concurrency`, per thread of `maxThreads`. */
const MAP_CONCURRENCY_PER_THREAD = 4;

function kernelId(name, argName) {
  if (typeof name !== 'string') throw invalidArgType(argName, 'of type string', name);
  let id = kernelIdOf(name);
  // Another realm of this process (a worker thread) may have loaded it.
  if (id === undefined && syncKernels()) id = kernelIdOf(name);
  if (id === undefined) {
    const near = closestKernel(name, KERNELS);
    const hint = near === undefined ? '' : ` Did you mean '${near}'?`;
    throw makeError(
      TypeError,
      'ERR_TIDEPOOL_UNKNOWN_KERNEL',
      `Unknown kernel ${JSON.stringify(name)}.${hint} Known kernels: ${KERNELS.join(', ')}`,
    );
  }
  return id;
}

let capturedResolve;
let capturedReject;
/** Promise executor that hands its resolvers over through two variables. */
function captureResolvers(resolve, reject) {
  capturedResolve = resolve;
  capturedReject = reject;
}

/**
 * A pool of native threads that run kernels (SHA-256, BLAKE3, ...) over
 * Buffers without copying them. See README.md for every option and event.
 */
class Pool extends EventEmitter {
  #native;
  #nativeSubmit;
  #nativeSubmitMany;
  #nativeSubmitChunk;
  #maxThreads;
  #onBatchCallback;
  /** Asks the native side for the rest of a batch it held back (see #onBatch). */
  #deliverLater = () => {
    this.#native.deliver();
  };
  #kernel;
  /** What the pool's kernel runs with: undefined, or { params } (its `params` option). */
  #extra;
  #noOptions;
  #encoding;
  #select;
  /** How errors name the input: 'message', or 'select(message)' with a custom select. */
  #inputName;
  #maxQueue;
  #queueFull;
  #maxInputBytes;
  /** Posts waiting for room in a full queue (queueFull: 'wait'), and batches behind them. */
  #waiting = new WaitQueue();
  /** Batches whose chunks go in one per turn of the event loop (see #feedBatch). */
  #feeding = new WaitQueue();
  #feedScheduled = false;
  #pumpScheduled = false;
  /** Of those, the ones not yet settled (an abort settles one in place). */
  #waitingCount = 0;
  #needsDrain = false;
  /** close() was called while posts were still waiting for room. */
  #closeDeferred = false;
  // AbortSignal bookkeeping, used only while #signalsInUse > 0: the signal
  // of each slot, and per signal one Watch (one shared 'abort' listener).
  #signalsInUse = 0;
  #signals = ownArray(0);
  #watches = new Watches((signal, watch) => this.#onAbort(signal, watch));
  /**
   * The running task in this slot was told to stop because its signal fired:
   * the AbortError it settles with (one per abort, shared by its tasks).
   */
  #aborted = ownArray(0);
  /** Shared with Rust: [slot, code << 24 | length] per finished task. */
  #meta = new Uint32Array(BATCH_CAPACITY * 2);
  /** Shared with Rust: result bytes of one batch chunk, back to back. */
  #slab = Buffer.alloc(SLAB_BYTES);
  // Per-slot task state. A slot is reused once its task settled. `#data`
  // holds the snapshot the native side reads: it must stay reachable until
  // the task settles. Every table is an own-element Array (lib/own-array.js)
  // of `#capacity` entries, grown together.
  #capacity = 0;
  #messages = ownArray(0);
  #data = ownArray(0);
  #resolves = ownArray(0);
  #rejects = ownArray(0);
  /** A stack of `#freeCount` slots free for reuse. */
  #freeSlots = ownArray(0);
  #freeCount = 0;
  /** The chunks of batches in flight, by id (see CHUNK), and a stack of free ids. */
  #chunks = ownArray(0);
  #freeChunks = ownArray(0);
  #freeChunkCount = 0;
  /** What map()'s iterators ask of the pool (made on first use). */
  #mapPort = undefined;
  /** What streams ask of the pool (made on first use; see lib/stream-tasks.js). */
  #streamPort = undefined;
  /**
   * Streams with work given while the pool was open (writes, updates, an
   * end) not yet done: close() waits for them (lib/stream-tasks.js).
   */
  #streamsOwed = 0;
  /** Those of them collected first: close() waits for them no longer. */
  #abandoned = new FinalizationRegistry(() => {
    this.#streamsOwed--;
    this.#closeIfIdle();
  });
  #nextSlot = 0;
  #pending = 0;
  #completed = 0;
  #failed = 0;
  /** Failed tasks by their error's code (what tidepool/metrics reports). */
  #failures = { __proto__: null };
  #closed = false;
  #destroyed = false;
  #terminated = false;
  #terminationPromise = null;
  #resolveTermination = null;

  /** @param {import('./index').PoolOptions} [options] */
  constructor(options) {
    super();
    const resolved = resolvePoolOptions(options, DEFAULTS, kernelId, kFailSpawnsAfter);
    this.#kernel = resolved.kernel;
    // Read once (by resolvePoolOptions): a getter must not answer differently the second time.
    const params = resolved.params;
    if (params !== undefined) {
      this.#extra = Object.freeze(taskExtra(paramsHandle(resolved.kernel, params, 'options.params', false), undefined));
    } else {
      checkDefaults(resolved.kernel, 'options.params');
    }
    // What #taskOptions gives when a post passes no options.
    this.#noOptions = Object.freeze({
      kernel: this.#kernel,
      extra: this.#extra,
      signal: undefined,
      timeoutMs: undefined,
      concurrency: undefined,
    });
    this.#encoding = resolved.encoding;
    this.#select = resolved.select === undefined ? defaultSelect : resolved.select;
    this.#inputName = resolved.select === undefined ? 'message' : 'select(message)';
    this.#maxQueue = resolved.maxQueue;
    this.#queueFull = resolved.queueFull;
    this.#maxInputBytes = resolved.maxInputBytes;
    // The native side holds this callback only weakly while the pool is idle
    // (so an idle pool can be garbage-collected) and strongly while tasks are
    // pending; this field is what keeps it alive as long as the pool is.
    this.#onBatchCallback = (count, events, terminated, large, later) => this.#onBatch(count, events, terminated, large, later);
    try {
      this.#native = new binding.NativePool(resolved.native, this.#onBatchCallback, this.#meta, this.#slab);
    } catch (err) {
      // The only runtime failure here: the OS refused to start the threads.
      throw makeError(Error, 'ERR_TIDEPOOL_SPAWN_FAILED', `Could not start the pool: ${err.message}`, { cause: err });
    }
    this.#nativeSubmit = this.#native.submitter();
    this.#nativeSubmitMany = this.#native.batchSubmitter();
    this.#nativeSubmitChunk = this.#native.chunkSubmitter();
    this.#maxThreads = resolved.native.maxThreads;
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
    const { kernel, extra, signal, timeoutMs } = options === undefined ? this.#noOptions : this.#taskOptions(options, 'post');
    return this.#postData(message, snapshot(this.#select(message), this.#inputName), kernel, extra, signal, timeoutMs);
  }

  /** post() once the message is read: `data` its snapshot. */
  #postData(message, data, kernel, extra, signal, timeoutMs) {
    const watch = signal === undefined ? undefined : this.#pinSignal(signal);
    try {
      // One shared executor instead of a closure per task: less garbage.
      // Made before the check below, so that no user code (a promise hook)
      // runs between the check and the native side reading what was checked.
      const promise = new NativePromise(captureResolvers);
      const resolve = capturedResolve;
      const reject = capturedReject;
      // A stream's chunks were checked when written; they go together in one
      // task, which maxInputBytes does not bound (lib/stream-tasks.js). A
      // file's path is no input either.
      const chunk = extra !== undefined && (extra.stream !== undefined || extra.file);
      if (chunk) readableBytes(data, 'data');
      else this.#checkInput(data, kernel);
      // A closed pool still runs the streams whose end was asked for before.
      const refused = this.#closed && !(chunk && extra.accepted);
      if (refused && chunk) {
        const err = this.#destroyed ? destroyedError() : closedError();
        this.#countFailures(err, 1);
        reject(err);
      } else if (refused) this.#rejectClosed(data, kernel, reject);
      else if (signal !== undefined && isAborted(signal))
        reject(abortError(signalReason(signal))); // by a promise hook
      else this.#enqueue(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch);
      return promise;
    } finally {
      if (watch !== undefined) this.#unpinSignal(signal, watch);
    }
  }

  /**
   * The worker_threads-style API: the result arrives as a `'message'` event
   * `(result, message)`; a failed task emits `'error'` `(err, message)`.
   */
  postMessage(message) {
    const data = snapshot(this.#select(message), this.#inputName);
    this.#checkInput(data, this.#kernel);
    if (this.#closed) {
      this.#rejectClosed(data, this.#kernel, (err) => process.nextTick(() => this.emit('error', err, message)));
      return;
    }
    this.#enqueue(message, data, this.#kernel, this.#extra, null, null, undefined, undefined, undefined);
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
    const { kernel, extra, signal, timeoutMs } = options === undefined ? this.#noOptions : this.#taskOptions(options, 'postFile');
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
      this.#countFailures(refused, 1);
      return NativePromise.reject(refused);
    }
    const file = taskExtra(extra?.params, extra?.maxOutputBytes, undefined, 0, 0, 0, true);
    return this.#postData(undefined, bytes, kernel, file, signal, timeoutMs).then(
      (settled) => ({ result: settled.result, path }),
      (err) => {
        // The native side knows the resolved path's bytes, not the caller's path.
        const failure = fileFailure(err);
        throw failure === undefined ? err : fsError(failure.syscall, failure.errno, failure.name, shown);
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
    const { kernel, extra, signal, timeoutMs } = options === undefined ? this.#noOptions : this.#taskOptions(options, 'postMany');
    if (!isPlainArray(messages)) throw invalidArgType('messages', 'an instance of Array', messages, received(messages));
    const count = messages.length;
    const name = elementNamer('messages', this.#select !== defaultSelect);
    // Every message read once, `select` run once per message and the
    // snapshots taken: all the user code of this call runs in this loop.
    const datas = ownArray(count);
    for (let i = 0; i < count; i++) {
      name.at = i;
      datas[i] = this.#take(messages[i], name);
    }
    const watch = signal === undefined ? undefined : this.#pinSignal(signal);
    try {
      const promise = new NativePromise(captureResolvers);
      const resolve = capturedResolve;
      const reject = capturedReject;
      // No user code from here to the native side's reading (see post()).
      // Lengths included: a binary of a later chunk is read after earlier
      // chunks are queued, when throwing is too late.
      for (let i = 0; i < count; i++) {
        name.at = i;
        this.#checkLengths(datas[i], kernel, name);
      }
      if (this.#closed) {
        const err = closedError();
        this.#countFailures(err, count);
        reject(err);
      } else if (signal !== undefined && isAborted(signal)) {
        const err = abortError(signalReason(signal));
        this.#countFailures(err, count);
        reject(err);
      } else if (count === 0) {
        resolve(asPlainArray(ownArray(0)));
      } else {
        const batch = this.#openBatch(kernel, extra, timeoutMs, signal, new AllResults(count, resolve, reject), 'messages');
        if (watch !== undefined) this.#watchBatch(batch, watch);
        batch.complete = true;
        this.#feedBatch(batch, datas, 0, count);
      }
      return promise;
    } finally {
      if (watch !== undefined) this.#unpinSignal(signal, watch);
    }
  }

  /**
   * Runs the kernel over every message an iterable or async iterable
   * yields, with at most `concurrency` tasks in flight; an async iterable
   * of `{ result, message }` in the order of the messages. Breaking out of
   * the loop cancels the tasks in flight and closes the source.
   */
  map(iterable, options) {
    const o = this.#taskOptions(options === undefined ? {} : options, 'map');
    let source;
    let sync;
    if (iterable !== null && iterable !== undefined) {
      const asyncMethod = iterable[Symbol.asyncIterator];
      const syncMethod = asyncMethod === undefined || asyncMethod === null ? iterable[Symbol.iterator] : undefined;
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
    this.#mapPort ??= {
      open: (kernel, extra, timeoutMs, signal, sink) => {
        // Checked here, when the iteration starts: a listener added to a
        // fired signal would never run.
        if (signal !== undefined && isAborted(signal)) throw abortError(signalReason(signal));
        const batch = this.#openBatch(kernel, extra, timeoutMs, signal, sink, 'iterable');
        if (signal !== undefined) this.#watchBatch(batch, this.#watches.of(signal));
        return batch;
      },
      take: (message, name) => this.#take(message, name),
      check: (data, kernel, name) => this.#checkLengths(data, kernel, name),
      feed: (batch, datas, base, count) => this.#feedBatch(batch, datas, base, count),
      finish: (batch) => this.#endFeeding(batch),
      cancel: (batch, error) => this.#failBatch(batch, -1, error),
      whenStopped: (batch, fn) => this.#whenBatchStopped(batch, fn),
      closed: () => this.#closed,
      selected: this.#select !== defaultSelect,
    };
    return new MapIterator(this.#mapPort, source, sync, o);
  }

  /**
   * An incremental hash whose chunks run on the pool's threads, in order,
   * the kernel's state kept in Rust between them (lib/hash.js): update()
   * returns at once, digest() a Promise of the digest. A Transform whose
   * readable side gives the digest, as node:crypto's Hash.
   */
  createHash(kernel, options) {
    if (typeof kernel !== 'string') throw invalidArgType('kernel', 'of type string', kernel);
    const id = kernelId(kernel, 'kernel');
    if (!HASH_KERNELS.has(kernel) && !kernel.includes('/')) {
      throw invalidArgValue(
        'kernel',
        `is not a hash kernel ('${kernel}'; the hashes: ${[...HASH_KERNELS].join(', ')}, or a loaded kernel)`,
      );
    }
    const o = streamOptions(options, HASH_OPTIONS, 'createHash');
    const hash = new Hash(this.#streams(), this.#newStream(id, o.params, undefined), streamBuffers(o.highWaterMark));
    if (o.signal !== undefined) this.#watchStream(o.signal, hash);
    return hash;
  }

  /** A stream's native handle: its kernel, params (checked here, once) and output limit. */
  #newStream(id, params, maxOutputBytes) {
    let handle;
    if (params !== undefined) handle = paramsHandle(id, params, 'options.params', false);
    else if (id === this.#kernel && this.#extra !== undefined) handle = this.#extra.params;
    else checkDefaults(id, 'options.params');
    return this.#native.newStream(id, handle, maxOutputBytes);
  }

  /**
   * What a stream's tasks (lib/stream-tasks.js) ask of the pool: a step of
   * a chunk (a Promise of its output bytes), what the step did, the inline
   * run of a hash's update(), and whether close() waits for the stream.
   */
  #streams() {
    this.#streamPort ??= {
      step: (signal, accepted, handle, data, end, budget, seq) => {
        const extra = taskExtra(undefined, undefined, handle, end, budget, seq, false, accepted);
        return this.#postData(STREAM_STEP, data, 0, extra, signal, undefined).then(resultOf);
      },
      report: (handle) => this.#native.streamReport(handle),
      inline: (handle, seq, inFlight, rest) => this.#native.streamInline(handle, seq, inFlight, rest),
      inlineError: (text) => {
        const space = text.indexOf(' ');
        return taskError(Number(text.slice(0, space)), text.slice(space + 1), this.#destroyed);
      },
      open: () => !this.#closed,
      hold: (tasks) => {
        this.#streamsOwed++;
        // A stream dropped with work it was given (nobody read it, nobody
        // destroyed it) must not hold close() forever.
        this.#abandoned.register(tasks, undefined, tasks);
      },
      release: (tasks) => {
        this.#abandoned.unregister(tasks);
        this.#streamsOwed--;
        this.#closeIfIdle();
      },
    };
    return this.#streamPort;
  }

  /**
   * A stream with a `signal`: stopped with an AbortError when it fires (at
   * once if it has; a codec stream is destroyed with it, as node:zlib's
   * are); one listener per signal, however many streams and posts share it.
   */
  #watchStream(signal, stream) {
    if (isAborted(signal)) {
      stream[ABORT](abortError(signalReason(signal)));
      return;
    }
    const watch = this.#watches.of(signal);
    watch.streams.add(stream);
    let watched = true;
    const forget = () => {
      if (!watched) return;
      watched = false;
      watch.streams.delete(stream);
      this.#watches.releaseIfUnused(signal, watch);
    };
    // Whichever comes first: a hash used through digest() alone never closes.
    stream[WHEN_OVER](forget);
    stream.once('close', forget);
  }

  /**
   * A Transform stream that runs `kernel` (a codec) over what is written,
   * on the pool's threads, one chunk at a time and in order, the codec's
   * state kept in Rust between chunks (lib/codec-stream.js). Behind
   * createGzip() and the others, named as in node:zlib.
   */
  #createCodecStream(kernel, options) {
    const o = streamOptions(options, CODEC_STREAM_OPTIONS, `create${kernel[0].toUpperCase()}${kernel.slice(1)}`);
    // A stream's limit counts its whole output, not one Buffer: it may pass buffer.constants.MAX_LENGTH.
    const maxOutputBytes = checkOutputLimit(o.maxOutputBytes, Number.MAX_SAFE_INTEGER);
    const handle = this.#newStream(kernelId(kernel, 'kernel'), o.params, maxOutputBytes);
    const stream = new CodecStream(this.#streams(), handle, kernel, streamBuffers(o.highWaterMark));
    if (o.signal !== undefined) this.#watchStream(o.signal, stream);
    return stream;
  }

  /** node:zlib's createGzip(), on the pool's threads; `params` as for the `gzip` kernel. */
  createGzip(options) {
    return this.#createCodecStream('gzip', options);
  }

  createGunzip(options) {
    return this.#createCodecStream('gunzip', options);
  }

  createDeflate(options) {
    return this.#createCodecStream('deflate', options);
  }

  createInflate(options) {
    return this.#createCodecStream('inflate', options);
  }

  createDeflateRaw(options) {
    return this.#createCodecStream('deflateRaw', options);
  }

  createInflateRaw(options) {
    return this.#createCodecStream('inflateRaw', options);
  }

  createBrotliCompress(options) {
    return this.#createCodecStream('brotliCompress', options);
  }

  createBrotliDecompress(options) {
    return this.#createCodecStream('brotliDecompress', options);
  }

  createZstdCompress(options) {
    return this.#createCodecStream('zstdCompress', options);
  }

  createZstdDecompress(options) {
    return this.#createCodecStream('zstdDecompress', options);
  }

  createLz4Compress(options) {
    return this.#createCodecStream('lz4Compress', options);
  }

  createLz4Decompress(options) {
    return this.#createCodecStream('lz4Decompress', options);
  }

  /**
   * True while the queue holds `maxQueue` tasks or posts wait for room; a
   * `'drain'` event follows when it falls back below.
   */
  get needsDrain() {
    return this.#needsDrain;
  }

  /**
   * A snapshot of the pool's threads, queue and counters. `waitTime` (queue
   * wait) and `runTime` (kernel time) cover every task since the pool was
   * created, or since the last `stats({ reset: true })`.
   */
  stats(options) {
    const s = this.#native.stats(resolveStatsOptions(options));
    return {
      threads: s.threads,
      idleThreads: s.idleThreads,
      busyThreads: s.busyThreads,
      queued: s.queued,
      oldestQueuedMs: s.oldestQueuedMs,
      pending: this.#pending + this.#waitingCount,
      completed: this.#completed,
      failed: this.#failed,
      spawned: s.spawned,
      retired: s.retired,
      spawnErrors: s.spawnErrors,
      waitTime: s.waitTime,
      runTime: s.runTime,
    };
  }

  /** True once close() or destroy() was called. */
  get closed() {
    return this.#closed;
  }

  /** Stops accepting tasks, finishes the queued ones, joins the threads. */
  close() {
    if (!this.#closed) {
      this.#closed = true;
      // Posts still waiting for room, and batches being fed, were accepted:
      // queue them first.
      if (!this.#nobodyWaits() || !this.#feeding.empty || this.#streamsOwed !== 0) this.#closeDeferred = true;
      else this.#native.close();
    }
    return this.#whenTerminated();
  }

  /** Stops accepting tasks, rejects queued ones, cancels running ones, joins the threads. */
  destroy() {
    if (this.#terminated) return this.#whenTerminated();
    this.#closed = true;
    if (!this.#destroyed) {
      this.#destroyed = true;
      const slots = this.#native.destroy();
      const errors = ownArray(0);
      // Batches being fed and posts waiting for room never (wholly) reached
      // the queue: reject them too.
      const feeding = this.#feeding.takeAll();
      for (let i = 0; i < feeding.length; i++) {
        const batch = feeding[i];
        this.#failBatch(batch, batch.base + batch.next, destroyedError());
      }
      const waiting = this.#waiting.takeAll();
      this.#closeDeferred = false;
      for (let i = 0; i < waiting.length; i++) {
        const w = waiting[i];
        if (w.settled) continue; // aborted while waiting: already settled
        if (w.batch !== undefined) {
          this.#failBatch(w.batch, w.batch.base + w.batch.next, destroyedError());
          continue;
        }
        this.#leaveWaiting(w);
        const err = this.#fail(w.message, w.reject, destroyedError());
        if (err !== undefined) errors[errors.length] = err;
      }
      for (let i = 0; i < slots.length; i++) {
        const err = this.#settle(slots[i], false, this.#wantsError(slots[i]) ? destroyedError() : undefined);
        if (err !== undefined) errors[errors.length] = err;
      }
      throwLater(errors);
    }
    return this.#whenTerminated();
  }

  [asyncDispose]() {
    return this.close();
  }

  /**
   * The Watch of a post's signal, pinned while the post is made. An
   * already-aborted signal is an early error: thrown, like bad arguments.
   * The listener is added first (Node's EventTarget may run user code),
   * the input checked after: nothing the caller does can come between the
   * check and the queue.
   */
  #pinSignal(signal) {
    if (isAborted(signal)) throw abortError(signalReason(signal));
    const watch = this.#watches.of(signal);
    watch.pins++;
    return watch;
  }

  #unpinSignal(signal, watch) {
    watch.pins--;
    this.#watches.releaseIfUnused(signal, watch);
  }

  /** What a task of a batch reads: `select(message)`, snapshot (user code runs here). */
  #take(message, name) {
    const select = this.#select;
    return snapshot(select === defaultSelect ? defaultSelect(message, name) : select(message), name);
  }

  /** A new batch with its own cancel flag; `extra` as #taskOptions gives it. */
  #openBatch(kernel, extra, timeoutMs, signal, sink, what) {
    return new Batch(
      what,
      kernel,
      extra === undefined ? undefined : extra.params,
      extra === undefined ? undefined : extra.maxOutputBytes,
      timeoutMs ?? 0,
      this.#native.batchFlag(),
      signal,
      sink,
    );
  }

  /** The batch fails when `watch`'s signal fires (until it ends). */
  #watchBatch(batch, watch) {
    batch.watch = watch;
    watch.batches.add(batch);
  }

  /** The batch is over for its signal (it ended or failed). */
  #forgetBatchSignal(batch) {
    const watch = batch.watch;
    if (watch === undefined) return;
    batch.watch = undefined;
    watch.batches.delete(batch);
    this.#watches.releaseIfUnused(batch.signal, watch);
  }

  /** map()'s source is exhausted: nothing more will be fed to `batch`. */
  #endFeeding(batch) {
    batch.complete = true;
    if (batch.outstanding === 0 && batch.unsubmitted === 0) this.#forgetBatchSignal(batch);
  }

  /**
   * Hands the batch `count` checked snapshots, task indices `base...`, and
   * queues its first chunk now; the others follow, a chunk per turn of the
   * event loop (#feedLater), so that a large batch never holds the loop
   * for more than its reading and one chunk. The queueFull policy applies
   * to what does not fit.
   */
  #feedBatch(batch, datas, base, count) {
    if (batch.unsubmitted !== 0) {
      // The batch is still being fed, or waits for room (map() pulled more
      // meanwhile): this data follows what it has.
      (batch.segments ??= new WaitQueue()).push(new Segment(datas, base, count));
      batch.segmentTasks += count;
      if (batch.parked) this.#waitingCount += count;
      if (this.#closed) this.#failBatch(batch, batch.base + batch.next, closedError());
      return;
    }
    batch.datas = datas;
    batch.base = base;
    batch.next = 0;
    batch.end = count;
    if (this.#closed) {
      this.#failBatch(batch, base, closedError());
      return;
    }
    // Posts already wait for room (queueFull: 'wait'): the batch waits behind them.
    if (!this.#nobodyWaits()) {
      this.#waitBatch(batch);
      return;
    }
    this.#afterSubmit(batch, this.#submitBatch(batch, 1));
  }

  /** What follows a #submitBatch that did not queue everything (see FEED). */
  #afterSubmit(batch, outcome) {
    if (outcome === FEED.more) {
      batch.parked = true;
      this.#waitingCount += batch.unsubmitted;
      this.#feeding.push(batch);
      if (!this.#feedScheduled) {
        this.#feedScheduled = true;
        scheduleImmediate(this.#feedLater);
      }
    } else if (outcome === FEED.full) {
      if (this.#queueFull === 'wait') this.#waitBatch(batch);
      else if (this.#queueFull === 'drop-oldest') this.#dropForBatch(batch);
      else this.#failBatch(batch, batch.base + batch.next, queueFullError());
    }
  }

  /** Queues the next chunk of the oldest batch still being fed (one per turn). */
  #feedLater = () => {
    this.#feedScheduled = false;
    const feeding = this.#feeding;
    while (!feeding.empty && feeding.peek().unsubmitted === 0) feeding.shift(); // failed meanwhile
    if (!feeding.empty) {
      const batch = feeding.peek();
      const outcome = this.#submitBatch(batch, 1);
      if (outcome !== FEED.more) {
        feeding.shift();
        if (batch.parked) {
          batch.parked = false;
          this.#waitingCount -= batch.unsubmitted;
        }
        this.#afterSubmit(batch, outcome);
      }
    }
    while (!feeding.empty && feeding.peek().unsubmitted === 0) feeding.shift();
    if (!feeding.empty) {
      this.#feedScheduled = true;
      scheduleImmediate(this.#feedLater);
    } else {
      this.#closeIfIdle();
    }
  };

  /**
   * A close() deferred while accepted work was still coming (posts waiting
   * for room, batches being fed, streams ended before it) goes on once
   * none is left.
   */
  #closeIfIdle() {
    if (this.#closeDeferred && this.#feeding.empty && this.#streamsOwed === 0 && this.#nobodyWaits()) {
      this.#closeDeferred = false;
      this.#native.close();
    }
  }

  /**
   * Submits up to `chunks` chunks of the batch's unsubmitted snapshots, one
   * native call each (Infinity: all). Returns a FEED outcome.
   */
  #submitBatch(batch, chunks) {
    for (let n = 0; ; n++) {
      if (batch.next === batch.end && !nextSegment(batch)) break;
      if (n === chunks) return FEED.more;
      const start = batch.next;
      const count = Math.min(CHUNK, batch.end - start);
      const id = this.#chunkId();
      if (id < 0) {
        this.#failBatch(
          batch,
          batch.base + start,
          makeError(Error, 'ERR_TIDEPOOL_QUEUE_FULL', `More than ${MAX_CHUNKS} chunks of batches are in flight`),
        );
        return FEED.failed;
      }
      const datas = batch.datas;
      // The binaries go as arguments (see src/batch.rs), in an Array without
      // holes or prototype, which V8 spreads fastest.
      const args = [];
      setPrototypeOf(args, null);
      args[0] = batch.kernel;
      args[1] = BATCH_SLOT + id * CHUNK;
      args[2] = batch.timeoutMs;
      args[3] = batch.flag;
      args[4] = batch.params;
      args[5] = batch.maxOutputBytes;
      for (let i = 0; i < count; i++) args[6 + i] = datas[start + i];
      let queued;
      try {
        queued = applyFunction(this.#nativeSubmitMany, undefined, args);
      } catch (err) {
        this.#freeChunks[this.#freeChunkCount++] = id;
        this.#refuseChunk(batch, start, count, err);
        return FEED.failed;
      }
      if (queued !== 0) this.#chunks[id] = new Chunk(batch, batch.base + start, datas, queued);
      else this.#freeChunks[this.#freeChunkCount++] = id;
      this.#pending += queued;
      batch.outstanding += queued;
      batch.next = start + queued;
      if (batch.parked) this.#waitingCount -= queued;
      if (queued < count) {
        this.#needsDrain = true;
        return FEED.full;
      }
    }
    batch.datas = undefined;
    if (this.#maxQueue !== Infinity && this.#native.queued() >= this.#maxQueue) this.#needsDrain = true;
    return FEED.done;
  }

  /** A free chunk id (-1 when all MAX_CHUNKS are in use); the table grows (by doubling) when none is. */
  #chunkId() {
    if (this.#freeChunkCount !== 0) return this.#freeChunks[--this.#freeChunkCount];
    const used = this.#chunks.length;
    if (used === MAX_CHUNKS) return -1;
    const capacity = Math.min(MAX_CHUNKS, Math.max(16, used * 2));
    this.#chunks = grown(this.#chunks, capacity);
    this.#freeChunks = grown(this.#freeChunks, capacity);
    // The new ids, the lowest on top.
    for (let id = capacity - 1; id > used; id--) this.#freeChunks[this.#freeChunkCount++] = id;
    return used;
  }

  /** The chunk of a batch's task (its slot is BATCH_SLOT or above). */
  #chunkOf(slot) {
    return this.#chunks[(slot >>> CHUNK_BITS) & (MAX_CHUNKS - 1)];
  }

  /**
   * The native side refused a chunk (nothing of it was queued): a binary
   * was detached after it was checked, or the environment is going away.
   * The batch fails with the error a post would have, naming the element.
   */
  #refuseChunk(batch, start, count, err) {
    let error = err;
    let index = batch.base + start;
    if (err !== null && typeof err === 'object' && err.code === 'ERR_INVALID_STATE') {
      const name = elementNamer(batch.what, false);
      for (let i = 0; i < count; i++) {
        name.at = batch.base + start + i;
        try {
          readableBytes(batch.datas[start + i], name);
        } catch (found) {
          error = found;
          index = name.at;
          break;
        }
      }
    }
    this.#failBatch(batch, index, error);
  }

  /** The rest of a batch waits for room (queueFull: 'wait'), or behind posts that do. */
  #waitBatch(batch) {
    const entry = {
      message: undefined,
      data: undefined,
      kernel: 0,
      extra: undefined,
      resolve: null,
      reject: null,
      signal: undefined,
      timeoutMs: undefined,
      watch: undefined,
      batch,
      settled: false,
    };
    batch.waiting = entry;
    batch.parked = true;
    this.#waitingCount += batch.unsubmitted;
    this.#waiting.push(entry);
    this.#needsDrain = true;
  }

  /**
   * queueFull: 'drop-oldest' for a batch: the oldest queued task makes
   * room for each of the batch's tasks that does not fit (one of the
   * batch's own, when it is larger than the queue: it then fails with
   * ERR_TIDEPOOL_DROPPED). The dropped tasks settle after the batch is in.
   */
  #dropForBatch(batch) {
    const dropped = ownArray(0);
    while (batch.unsubmitted !== 0) {
      // (-1: the threads emptied the queue meanwhile; the submit below fits.)
      const slot = this.#native.dropOldest();
      if (slot >= 0) {
        dropped[dropped.length] = slot;
        if (slot >= BATCH_SLOT && this.#chunkOf(slot).batch === batch) break;
      }
      if (this.#submitBatch(batch, Infinity) === FEED.failed) break;
    }
    const errors = ownArray(0);
    for (let i = 0; i < dropped.length; i++) {
      const slot = dropped[i];
      const err = this.#settle(slot, false, this.#wantsError(slot) ? droppedError() : undefined);
      if (err !== undefined) errors[errors.length] = err;
    }
    // Dropped its own task, or the queue could not make room.
    if (batch.unsubmitted !== 0) this.#failBatch(batch, batch.base + batch.next, queueFullError());
    throwLater(errors);
  }

  /**
   * A batch fails. Its sink hears `error` once (carrying `index` when a
   * task is the cause; -1: the batch as a whole); its queued tasks leave
   * the queue and settle now, its running ones are told to stop, and those
   * never submitted count as failed. Its other tasks settle quietly.
   */
  #failBatch(batch, index, error) {
    if (!this.#markBatchFailed(batch, index, error)) return;
    if (batch.outstanding !== 0) {
      const removed = this.#native.cancelBatch(batch.flag);
      for (let i = 0; i < removed.length; i++) this.#settleBatchTask(removed[i], false, undefined);
    }
    this.#pumpSoon();
    this.#whenBatchStopped(batch, () => batch.sink.fail(index, error));
  }

  /**
   * Runs `fn` once no task of `batch` runs any more: now if none does,
   * else when the last one settles (tasks of a failed batch stop at their
   * next piece). A sink's failure waits for it, so the caller gets its
   * buffers back only once no thread reads them.
   */
  #whenBatchStopped(batch, fn) {
    if (batch.outstanding === 0) fn();
    else (batch.whenStopped ??= ownArray(0))[batch.whenStopped.length] = fn;
  }

  /**
   * #failBatch for every batch of `batches` (as a whole: their signal
   * fired), with their queued tasks taken out of the queue in one native
   * pass for all (a pass per batch would cost batches × queue length).
   * Each sink hears it once every batch is failed and its own running
   * tasks have stopped.
   */
  #failBatches(batches, error) {
    const failed = ownArray(0);
    const flags = ownArray(0);
    for (let i = 0; i < batches.length; i++) {
      const batch = batches[i];
      if (!this.#markBatchFailed(batch, -1, error)) continue;
      failed[failed.length] = batch;
      if (batch.outstanding !== 0) flags[flags.length] = batch.flag;
    }
    if (flags.length !== 0) {
      const removed = this.#native.cancelBatches(flags);
      for (let i = 0; i < removed.length; i++) this.#settleBatchTask(removed[i], false, undefined);
    }
    this.#pumpSoon();
    for (let i = 0; i < failed.length; i++) {
      const batch = failed[i];
      this.#whenBatchStopped(batch, () => batch.sink.fail(-1, error));
    }
  }

  /**
   * What failing a batch does before its queued tasks leave the queue: its
   * error (with `index`), the tasks never submitted counted as failed and
   * let go, its wait and its signal left. False if it had already failed.
   */
  #markBatchFailed(batch, index, error) {
    if (batch.error !== undefined) return false;
    batch.error = error;
    // Defined, not assigned: an inherited `index` setter must not run here.
    if (index >= 0 && error !== null && typeof error === 'object') {
      defineProperty(error, 'index', { __proto__: null, value: index, writable: true, enumerable: true, configurable: true });
    }
    const unsubmitted = batch.unsubmitted;
    this.#countFailures(error, unsubmitted);
    batch.next = batch.end;
    batch.datas = undefined;
    batch.segments = undefined;
    batch.segmentTasks = 0;
    if (batch.parked) {
      batch.parked = false;
      this.#waitingCount -= unsubmitted;
    }
    if (batch.waiting !== undefined) {
      batch.waiting.settled = true; // #pump skips it
      batch.waiting = undefined;
    }
    this.#forgetBatchSignal(batch);
    return true;
  }

  /** Whether settling `slot` as failed needs an error (not a task of a batch that already failed). */
  #wantsError(slot) {
    return slot < BATCH_SLOT || this.#chunkOf(slot).batch.error === undefined;
  }

  /** Settles one task of a batch: its result goes to the batch's sink, its failure fails the batch. */
  #settleBatchTask(slot, ok, value) {
    const id = (slot >>> CHUNK_BITS) & (MAX_CHUNKS - 1);
    const chunk = this.#chunks[id];
    const batch = chunk.batch;
    const index = chunk.base + (slot & (CHUNK - 1));
    if (--chunk.remaining === 0) {
      // Its snapshots may go: no thread reads them any more.
      this.#chunks[id] = undefined;
      this.#freeChunks[this.#freeChunkCount++] = id;
    }
    this.#pending--;
    batch.outstanding--;
    if (ok) this.#completed++;
    // A task cancelled with its batch settles without an error of its own:
    // it counts under the batch's (the signal, the failed task), or as
    // cancelled (a map() left early).
    else this.#countFailures(value ?? batch.error ?? CANCELLED, 1);
    if (batch.error === undefined) {
      if (ok) batch.sink.result(index, value);
      else this.#failBatch(batch, index, value);
    } else if (batch.outstanding === 0 && batch.whenStopped !== undefined) {
      const waiting = batch.whenStopped;
      batch.whenStopped = undefined;
      for (let i = 0; i < waiting.length; i++) waiting[i]();
    }
    if (batch.outstanding === 0 && batch.complete && batch.unsubmitted === 0) this.#forgetBatchSignal(batch);
  }

  /**
   * Reads the options of post(), postMany() and map() (`method`): the
   * kernel and what it runs with (`extra`: undefined, or `{ params,
   * maxOutputBytes }`), the signal, the run-time limit (undefined: none)
   * and, for map(), `concurrency`. A post's own params serve its one task
   * (its key is let go once the task is queued); a batch's serve them all.
   */
  #taskOptions(options, method) {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options);
    // Only the options given as own properties are read (lib/options.js).
    const given = checkTaskKeys(options, method);
    let kernel = this.#kernel;
    let extra = this.#extra;
    const name = (given & TASK_OPTION.kernel) !== 0 ? options.kernel : undefined;
    if (name !== undefined) {
      kernel = kernelId(name, 'options.kernel');
      // The pool's params are for the pool's kernel.
      if (kernel !== this.#kernel) extra = undefined;
    }
    const signal = (given & TASK_OPTION.signal) !== 0 ? options.signal : undefined;
    if (signal !== undefined && (signal === null || typeof signal !== 'object')) {
      throw invalidArgType('options.signal', 'an instance of AbortSignal', signal);
    }
    let timeoutMs = (given & TASK_OPTION.timeoutMs) !== 0 ? options.timeoutMs : undefined;
    if (timeoutMs !== undefined) {
      if (typeof timeoutMs !== 'number') throw invalidArgType('options.timeoutMs', 'of type number', timeoutMs);
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
            this.#maxThreads * MAP_CONCURRENCY_PER_THREAD,
          )
        : undefined;
    const params = (given & TASK_OPTION.params) !== 0 ? options.params : undefined;
    if (params !== undefined) {
      extra = taskExtra(paramsHandle(kernel, params, 'options.params', method === 'post'), maxOutputBytes);
    } else {
      if (extra === undefined && kernel !== this.#kernel) checkDefaults(kernel, 'options.params');
      if (maxOutputBytes !== undefined) extra = taskExtra(extra === undefined ? undefined : extra.params, maxOutputBytes);
    }
    return { kernel, extra, signal, timeoutMs, concurrency };
  }

  /**
   * Checks a snapshot right before the native side reads it: readable in
   * place (not detached, not resizable), long enough for the kernel, within
   * `maxInputBytes`. Runs no user code. Without a length limit, the lengths
   * (and so detachment, which leaves a length of 0) are left to the native
   * side, which reads them anyway (see checkResizable); every path that
   * does not hand the input to it at once calls #checkLengths instead.
   */
  #checkInput(data, kernel) {
    if (this.#maxInputBytes === Infinity && MIN_INPUT_BYTES[kernel] === 0) checkResizable(data, this.#inputName);
    else this.#checkLengths(data, kernel, this.#inputName);
  }

  /** All of #checkInput, lengths included; `name` names the input in errors. */
  #checkLengths(data, kernel, name) {
    const bytes = readableBytes(data, name);
    if (bytes < MIN_INPUT_BYTES[kernel]) {
      throw outOfRange(
        name,
        `at least ${MIN_INPUT_BYTES[kernel]} bytes for kernel '${KERNELS[kernel]}' (a little-endian uint32 of microseconds; see micros())`,
        `${bytes} bytes`,
      );
    }
    if (bytes > this.#maxInputBytes) {
      throw outOfRange(name, `at most maxInputBytes (${this.#maxInputBytes}) bytes`, `${bytes} bytes`);
    }
  }

  /**
   * Queues a task, applying the queueFull policy; `resolve === null` for
   * postMessage. `signal`, its `watch` (pinned by the caller) and
   * `timeoutMs` are optional. Runs no user code before the task is queued.
   */
  #enqueue(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch) {
    // A stream's task waits for room whatever queueFull says (a stream has
    // one in flight; refusing or dropping it would end the whole stream).
    const stream = extra !== undefined && extra.stream !== undefined;
    if (this.#nobodyWaits()) {
      // The native side reads (and checks) the input even when the queue is full.
      if (this.#trySubmit(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch) !== 0) return;
      if (this.#queueFull === 'drop-oldest' && !stream) {
        const dropped = this.#native.dropOldest();
        const queued = this.#trySubmit(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch);
        // Settled after the new task is queued: an 'error' listener of the
        // dropped one (user code) must not run in the middle of this post.
        if (dropped >= 0) {
          const err = this.#settle(dropped, false, droppedError());
          if (err !== undefined) throwLater([err]);
        }
        if (queued !== 0) return;
      }
    } else if (extra === undefined || (extra.stream === undefined && !extra.file)) {
      // Posts already wait for room: this one waits behind them, checked here.
      this.#checkLengths(data, kernel, this.#inputName);
    }
    if (!this.#waiting.empty || this.#queueFull === 'wait' || stream) {
      this.#wait(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch);
      this.#needsDrain = true;
      return;
    }
    const err = queueFullError();
    this.#countFailures(err, 1);
    if (reject !== null) reject(err);
    else process.nextTick(() => this.emit('error', err, message)); // never inside postMessage() itself
  }

  /**
   * True when no post or batch waits for room. Entries settled while they
   * waited (aborted, a batch that failed) are dropped from the front first:
   * one left there would hold every later post behind it.
   */
  #nobodyWaits() {
    const waiting = this.#waiting;
    while (!waiting.empty && waiting.peek().settled) waiting.shift();
    return waiting.empty;
  }

  /**
   * Runs #pump on the next turn when posts wait and a batch that failed
   * outside a delivery (map() stopped, a feed refused) freed room: nothing
   * else might pump again.
   */
  #pumpSoon() {
    if (this.#pumpScheduled || !this.#needsDrain) return;
    this.#pumpScheduled = true;
    scheduleImmediate(this.#pumpLater);
  }

  #pumpLater = () => {
    this.#pumpScheduled = false;
    if (!this.#needsDrain || this.#destroyed) return;
    const errors = ownArray(0);
    this.#pump(errors);
    throwLater(errors);
  };

  /** Parks a post until the queue has room. */
  #wait(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch) {
    const entry = { message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch, batch: undefined, settled: false };
    this.#waitingCount++;
    if (watch !== undefined) watch.waiting.add(entry);
    this.#waiting.push(entry);
  }

  /** A waiting post leaves the wait (queued, failed or destroyed). */
  #leaveWaiting(entry) {
    entry.settled = true;
    this.#waitingCount--;
    if (entry.watch !== undefined) this.#watches.forgetWaiting(entry.signal, entry.watch, entry);
  }

  /** A never used slot; the tables grow (by doubling) when they are full. */
  #newSlot() {
    const slot = this.#nextSlot++;
    if (slot === this.#capacity) {
      const capacity = Math.max(64, this.#capacity * 2);
      this.#messages = grown(this.#messages, capacity);
      this.#data = grown(this.#data, capacity);
      this.#resolves = grown(this.#resolves, capacity);
      this.#rejects = grown(this.#rejects, capacity);
      this.#signals = grown(this.#signals, capacity);
      this.#aborted = grown(this.#aborted, capacity);
      this.#freeSlots = grown(this.#freeSlots, capacity);
      this.#capacity = capacity;
    }
    return slot;
  }

  /** Submits to the native queue; returns its length after, or 0 if it was full. */
  #trySubmit(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch) {
    const slot = this.#freeCount !== 0 ? this.#freeSlots[--this.#freeCount] : this.#newSlot();
    let queued;
    try {
      if (extra !== undefined && extra.stream !== undefined) {
        queued = this.#nativeSubmitChunk(slot, extra.stream, data, extra.end, extra.budget, extra.seq);
      } else if (extra !== undefined) {
        queued = this.#nativeSubmit(
          slot,
          kernel,
          data,
          timeoutMs ?? 0,
          signal !== undefined,
          extra.params,
          extra.maxOutputBytes,
          extra.file,
        );
      } else if (signal === undefined && timeoutMs === undefined) {
        queued = this.#nativeSubmit(slot, kernel, data);
      } else {
        queued = this.#nativeSubmit(slot, kernel, data, timeoutMs ?? 0, signal !== undefined);
      }
    } catch (err) {
      this.#freeSlots[this.#freeCount++] = slot;
      // The native side found a detached binary: the same error as post()'s own check.
      if (err.code === 'ERR_INVALID_STATE') readableBytes(data, this.#inputName);
      throw err;
    }
    if (queued === 0) {
      this.#freeSlots[this.#freeCount++] = slot;
      return 0;
    }
    this.#messages[slot] = message;
    this.#data[slot] = data;
    this.#resolves[slot] = resolve;
    this.#rejects[slot] = reject;
    this.#pending++;
    if (signal !== undefined) {
      watch.slots.add(slot);
      this.#signals[slot] = signal;
      this.#signalsInUse++;
    }
    if (queued >= this.#maxQueue) this.#needsDrain = true;
    return queued;
  }

  /**
   * `signal` fired: every post made with it settles or is told to stop, in
   * one pass (one native call for all its queued and running tasks).
   */
  #onAbort(signal, watch) {
    // Everything this abort concerns is read before anything else runs.
    const slots = watch.slots.size === 0 ? undefined : Uint32Array.from(watch.slots);
    // One error for every task of this abort, as fetch() rejects every
    // request of a signal with its one reason: an Error per task (with its
    // stack) would cost more than the task (10 µs; 1 s for 100,000 tasks).
    const aborted = abortError(signalReason(signal));
    const errors = ownArray(0);
    if (watch.batches.size !== 0) this.#failBatches(Array.from(watch.batches), aborted);
    // As node:zlib's streams: each destroyed with an AbortError of its own.
    for (const stream of Array.from(watch.streams)) stream[ABORT](abortError(signalReason(signal)));
    for (const entry of watch.waiting) {
      entry.settled = true; // #pump skips it
      this.#waitingCount--;
      const err = this.#fail(entry.message, entry.reject, aborted);
      if (err !== undefined) errors[errors.length] = err;
    }
    if (slots !== undefined) {
      // Every task is marked; those still queued are removed and settle now,
      // the others stop at their next chunk and settle when delivered.
      for (let i = 0; i < slots.length; i++) this.#aborted[slots[i]] = aborted;
      const removed = this.#native.cancel(slots);
      for (let i = 0; i < removed.length; i++) {
        const err = this.#settle(removed[i], false, aborted);
        if (err !== undefined) errors[errors.length] = err;
      }
    }
    // Removed tasks and aborted waiting posts free places: let others in.
    if (this.#needsDrain) this.#pump(errors);
    throwLater(errors);
  }

  /**
   * Moves waiting posts into the queue while it has room; emits 'drain'
   * once nothing waits and the queue is below maxQueue. Exceptions of
   * listeners are collected in `errors`.
   */
  #pump(errors) {
    const waiting = this.#waiting;
    while (!waiting.empty) {
      const w = waiting.peek();
      if (w.settled) {
        waiting.shift(); // aborted while waiting: already settled
        continue;
      }
      if (w.batch !== undefined) {
        const batch = w.batch;
        if (this.#submitBatch(batch, Infinity) === FEED.full) return;
        waiting.shift();
        batch.waiting = undefined;
        batch.parked = false;
        if (this.#destroyed) return;
        continue;
      }
      let queued;
      try {
        // The binaries were checked at post(); one may have been detached
        // while the post waited.
        readableBytes(w.data, this.#inputName);
        queued = this.#trySubmit(w.message, w.data, w.kernel, w.extra, w.resolve, w.reject, w.signal, w.timeoutMs, w.watch);
      } catch (err) {
        waiting.shift();
        this.#leaveWaiting(w);
        const thrown = this.#fail(w.message, w.reject, err);
        if (thrown !== undefined) errors[errors.length] = thrown;
        if (this.#destroyed) return; // an 'error' listener destroyed the pool
        continue;
      }
      if (queued === 0) return;
      waiting.shift();
      this.#leaveWaiting(w);
    }
    this.#closeIfIdle();
    // Read now: listeners (an 'error' of a post that could not get in, the
    // batch's own) may have posted since anything else was read.
    if (this.#native.queued() < this.#maxQueue) {
      this.#needsDrain = false;
      try {
        this.emit('drain');
      } catch (err) {
        errors[errors.length] = err;
      }
    }
  }

  /** A post to a closed pool (`reject` its rejection or 'error'): argument errors are still thrown first. */
  #rejectClosed(data, kernel, reject) {
    this.#checkLengths(data, kernel, this.#inputName);
    const err = closedError();
    this.#countFailures(err, 1);
    reject(err);
  }

  /**
   * Counts `count` tasks failed with `err`, under its code when tidepool or
   * Node gives it, else under 'other' (lib/errors.js countedCode): a
   * caller's codes would grow #failures, and tidepool/metrics' series,
   * without bound.
   */
  #countFailures(err, count) {
    if (count === 0) return;
    this.#failed += count;
    const code = countedCode(err);
    this.#failures[code] = (this.#failures[code] ?? 0) + count;
  }

  /**
   * What tidepool/metrics reads at a scrape (lib/metrics.js) from `pool`,
   * or undefined when it is not a Pool (a brand check: an object made from
   * Pool.prototype has none of its fields). Read from the pool's own
   * fields, not through methods a caller may have replaced.
   */
  static [METRICS_SOURCE](pool) {
    if (pool === null || typeof pool !== 'object' || !(#failures in pool)) return undefined;
    const failures = { __proto__: null };
    for (const code in pool.#failures) failures[code] = pool.#failures[code];
    // One native call: the gauges, counters and histograms of one moment.
    const native = pool.#native.metrics();
    return {
      threads: native.threads,
      busyThreads: native.busyThreads,
      queued: native.queued,
      oldestQueuedMs: native.oldestQueuedMs,
      completed: pool.#completed,
      retired: native.retired,
      spawnErrors: native.spawnErrors,
      closed: pool.#closed,
      failures,
      native,
    };
  }

  /** A post that never got a slot fails; returns an exception thrown by an 'error' listener. */
  #fail(message, reject, err) {
    this.#countFailures(err, 1);
    if (reject !== null) {
      reject(err);
      return undefined;
    }
    try {
      this.emit('error', err, message);
    } catch (thrown) {
      return thrown;
    }
    return undefined;
  }

  /** Settles one task; returns an exception thrown by a 'message'/'error' listener. */
  #settle(slot, ok, value) {
    if (slot >= BATCH_SLOT) {
      this.#settleBatchTask(slot, ok, value);
      return undefined;
    }
    const message = this.#messages[slot];
    const resolve = this.#resolves[slot];
    const reject = this.#rejects[slot];
    const signal = this.#signalsInUse !== 0 ? this.#signals[slot] : undefined;
    this.#messages[slot] = undefined;
    this.#data[slot] = undefined;
    this.#resolves[slot] = undefined;
    this.#rejects[slot] = undefined;
    if (signal !== undefined) {
      this.#signals[slot] = undefined;
      this.#aborted[slot] = undefined;
      this.#signalsInUse--;
    }
    this.#freeSlots[this.#freeCount++] = slot;
    this.#pending--;
    // The slot's state is final before this (it may remove a listener).
    if (signal !== undefined) this.#watches.forgetSlot(signal, slot);
    if (ok) {
      this.#completed++;
      if (resolve !== null) {
        resolve({ result: value, message });
        return undefined;
      }
    } else {
      this.#countFailures(value, 1);
      if (reject !== null) {
        reject(value);
        return undefined;
      }
    }
    try {
      if (ok) this.emit('message', value, message);
      else this.emit('error', value, message);
    } catch (err) {
      return err;
    }
    return undefined;
  }

  #onBatch(count, events, terminated, large, later) {
    // The native side kept the rest of this batch for the next turn of the
    // event loop (it had handed over its budget of large results).
    if (later) scheduleImmediate(this.#deliverLater);
    const meta = this.#meta;
    const slab = this.#slab;
    const encoding = this.#encoding;
    let errors;
    let copy;
    if (encoding === 'buffer' && count !== 0) {
      // One allocation per chunk; each result is a view into it (like
      // Buffer.allocUnsafe's pool), never into the reused slab.
      let total = 0;
      for (let i = 0; i < count; i++) total += meta[2 * i + 1] & 0xffffff;
      copy = Buffer.allocUnsafeSlow(total);
      slab.copy(copy, 0, 0, total);
    }
    // A thread started before it ran any of this batch's tasks: its 'spawn'
    // comes before their results; a retirement or a failed start after.
    if (events !== undefined) errors = this.#emitThreadEvents(events, true, errors);
    let offset = 0;
    let nextLarge = 0;
    for (let i = 0; i < count; i++) {
      const slot = meta[2 * i];
      const word = meta[2 * i + 1];
      const length = word & 0xffffff;
      const code = word >>> 24;
      const end = offset + length;
      let err;
      if (slot >= BATCH_SLOT && this.#chunkOf(slot).batch.error !== undefined) {
        // Its batch already failed: nothing of this task is wanted.
        if (code === LARGE_CODE) nextLarge++;
        this.#settleBatchTask(slot, code === 0 || code === LARGE_CODE, undefined);
      } else if (code === 0) {
        let result;
        if (copy !== undefined) result = copy.subarray(offset, end);
        else if (slot < BATCH_SLOT && this.#messages[slot] === STREAM_STEP) result = bufferCopy(slab, offset, end);
        else result = slab.toString(encoding, offset, end);
        err = this.#settle(slot, true, result);
      } else if (code === LARGE_CODE) {
        // A Buffer of its own, made from the kernel's output without a copy.
        const buffer = large[nextLarge++];
        if (buffer === undefined) {
          // Node could not allocate it.
          err = this.#settle(slot, false, makeError(Error, 'ERR_MEMORY_ALLOCATION_FAILED', 'Failed to allocate memory for the result'));
        } else if (encoding === 'buffer' || (slot < BATCH_SLOT && this.#messages[slot] === STREAM_STEP)) {
          // (A stream's output is bytes, whatever the pool's encoding.)
          err = this.#settle(slot, true, buffer);
        } else {
          // A string has a length limit a Buffer does not (ERR_STRING_TOO_LONG):
          // past it the task rejects with Node's error.
          let text;
          let failure;
          try {
            text = buffer.toString(encoding);
          } catch (e) {
            failure = e;
          }
          err = failure === undefined ? this.#settle(slot, true, text) : this.#settle(slot, false, failure);
        }
      } else {
        const aborted = code === TASK_CODES.cancelled && this.#signalsInUse !== 0 ? this.#aborted[slot] : undefined;
        const error = aborted !== undefined ? aborted : taskError(code, slab.toString('utf8', offset, end), this.#destroyed);
        err = this.#settle(slot, false, error);
      }
      if (err !== undefined) (errors ??= ownArray(0))[errors.length] = err;
      offset = end;
    }
    if (events !== undefined) errors = this.#emitThreadEvents(events, false, errors);
    // The queue length now: listeners above may have posted.
    if (this.#needsDrain) this.#pump((errors ??= ownArray(0)));
    if (terminated) this.#onTerminated();
    // Listeners threw: each surfaces as an uncaught exception, as an
    // EventEmitter would have thrown it, but only after the whole batch
    // has settled.
    if (errors !== undefined) throwLater(errors);
  }

  /**
   * Emits the thread events of a batch: the 'spawn' ones (`spawns` true) or
   * the others. A listener's exception is collected into `errors` (returned),
   * as the results' are.
   */
  #emitThreadEvents(events, spawns, errors) {
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      if ((e.type === 'spawn') !== spawns) continue;
      try {
        if (e.type === 'spawnError') this.emit('spawnError', { error: e.error, threads: e.threads });
        else this.emit(e.type, { threadId: e.threadId, threads: e.threads, reason: e.reason });
      } catch (err) {
        (errors ??= ownArray(0))[errors.length] = err;
      }
    }
    return errors;
  }

  #onTerminated() {
    this.#terminated = true;
    this.#native.join(); // every thread has already exited: returns at once
    if (this.#resolveTermination !== null) this.#resolveTermination();
  }

  #whenTerminated() {
    if (this.#terminationPromise === null) {
      this.#terminationPromise = new NativePromise((resolve) => {
        if (this.#terminated) resolve();
        else this.#resolveTermination = resolve;
      });
    }
    return this.#terminationPromise;
  }
}

/** Bytes `start..end` of `buffer` in memory of their own. */
function bufferCopy(buffer, start, end) {
  const copy = Buffer.allocUnsafe(end - start);
  buffer.copy(copy, 0, start, end);
  return copy;
}

/**
 * The input of the `spin` and `sleep` kernels: a 4-byte Buffer holding
 * `us` microseconds as a little-endian uint32.
 */
function micros(us) {
  if (typeof us !== 'number') throw invalidArgType('us', 'of type number', us);
  if (!Number.isInteger(us) || us < 0 || us > 0xffffffff) throw outOfRange('us', 'an integer >= 0 and <= 4294967295', us);
  const buf = Buffer.allocUnsafe(4);
  buf.writeUInt32LE(us, 0);
  return buf;
}

module.exports = { Pool, ENCODINGS, DEFAULTS, micros };
