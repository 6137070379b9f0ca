'use strict';
// tidepool: the JavaScript face of the native pool.
//
// This file does what must happen on the JS thread and nothing more:
//   * validate arguments and throw Node-style errors synchronously;
//   * keep every posted message (and the binary selected from it) reachable
//     until its task settles, since Rust threads read that memory in place;
//   * settle a whole batch of finished tasks per call from native code
//     (`#onBatch`), reading results from memory shared with Rust.

const { EventEmitter } = require('node:events');
const { isAnyArrayBuffer, isSharedArrayBuffer } = require('node:util').types;
const path = require('node:path');

const binding = loadBinding();

/** Kernel names in id order (the id is the index). */
const KERNELS = Object.freeze(binding.kernelNames());
const KERNEL_IDS = new Map(KERNELS.map((name, id) => [name, id]));
/** Kernels that read a 4-byte duration from their input. */
const MIN_INPUT_BYTES = KERNELS.map((name) => (name === 'spin' || name === 'sleep' ? 4 : 0));
const ENCODINGS = Object.freeze(['buffer', 'hex', 'base64', 'base64url']);
const SCALE_RULES = Object.freeze(['queue-age', 'backlog']);
const QUEUE_FULL_POLICIES = Object.freeze(['reject', 'drop-oldest', 'wait']);
const { capacity: BATCH_CAPACITY, slabBytes: SLAB_BYTES } = binding.batchLayout();
const MAX_THREADS_LIMIT = 1024;

const DEFAULTS = Object.freeze({
  kernel: 'sha256',
  encoding: 'buffer',
  minThreads: 1,
  maxThreads: binding.availableParallelism(),
  spawnDelayMs: 1,
  idleTimeoutMs: 250,
  checkIntervalMs: 1,
  scaleRule: 'queue-age',
  maxQueue: Infinity,
  queueFull: 'reject',
  maxQueueAgeMs: Infinity,
  maxInputBytes: Infinity,
  niceIncrement: binding.defaultNiceIncrement(),
});

// Native error codes (0 = success); see crates/core/src/task.rs.
const CODE_PANIC = 1;
const CODE_CANCELLED = 2;
const CODE_INVALID_INPUT = 3;
const CODE_EXPIRED = 4;
const CODE_TIMED_OUT = 5;

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');
/**
 * Test-only option key (not part of the API): thread starts after this many
 * successful ones fail as if the OS refused them with EAGAIN.
 */
const kFailSpawnsAfter = Symbol.for('tidepool.test.failSpawnsAfter');

function loadBinding() {
  const file = path.join(__dirname, 'tidepool.node');
  try {
    return require(file);
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') {
      const e = new Error(
        `tidepool: the native addon ${file} is missing. Build it with \`npm run build\` (needs cargo).`,
      );
      e.code = 'ERR_TIDEPOOL_NOT_BUILT';
      e.cause = err;
      throw e;
    }
    throw err;
  }
}

function makeError(Ctor, code, message, props) {
  const err = new Ctor(message);
  err.code = code;
  if (props !== undefined) Object.assign(err, props);
  return err;
}

function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'function') return `function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object') {
    const name = value.constructor && value.constructor.name;
    return name ? `an instance of ${name}` : 'an object';
  }
  let shown = String(value);
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  if (typeof value === 'string') shown = `'${shown}'`;
  return `type ${typeof value} (${shown})`;
}

function invalidArgType(name, expected, actual) {
  return makeError(
    TypeError,
    'ERR_INVALID_ARG_TYPE',
    `The "${name}" argument must be ${expected}. Received ${describe(actual)}`,
  );
}

function outOfRange(name, range, actual) {
  return makeError(
    RangeError,
    'ERR_OUT_OF_RANGE',
    `The value of "${name}" is out of range. It must be ${range}. Received ${String(actual)}`,
  );
}

function isBinary(value) {
  return ArrayBuffer.isView(value) || isAnyArrayBuffer(value);
}

/** Total bytes of a validated binary or array of binaries. */
function byteLengthOf(data) {
  if (!Array.isArray(data)) return data.byteLength;
  let total = 0;
  for (let i = 0; i < data.length; i++) total += data[i].byteLength;
  return total;
}

const BINARY_TYPES = 'a Buffer, TypedArray, DataView, ArrayBuffer, or an Array of those';

/** N-API (before Node 22) cannot read a SharedArrayBuffer itself, only views of it. */
function viewable(value) {
  return isSharedArrayBuffer(value) ? new Uint8Array(value) : value;
}

/**
 * Throws unless `data` is something the native side can read in place;
 * returns what to hand to it (the same value, except that SharedArrayBuffers
 * are wrapped in a Uint8Array view).
 */
function checkBinary(data, name) {
  if (data instanceof Uint8Array || ArrayBuffer.isView(data)) return data;
  if (isAnyArrayBuffer(data)) return viewable(data);
  if (Array.isArray(data)) {
    let shared = false;
    for (let i = 0; i < data.length; i++) {
      const part = data[i];
      if (!isBinary(part)) throw invalidArgType(`${name}[${i}]`, 'a Buffer, TypedArray, DataView or ArrayBuffer', part);
      if (isSharedArrayBuffer(part)) shared = true;
    }
    return shared ? data.map(viewable) : data;
  }
  throw invalidArgType(name, BINARY_TYPES, data);
}

/** The default `select`: the message if it is binary, else `message.data`. */
function defaultSelect(message) {
  if (message instanceof Uint8Array || isBinary(message) || Array.isArray(message)) return message;
  if (message !== null && typeof message === 'object' && 'data' in message) return message.data;
  throw invalidArgType('message', `${BINARY_TYPES}, or an object with such a "data" property`, message);
}

function kernelId(name, argName) {
  if (typeof name !== 'string') throw invalidArgType(argName, 'of type string', name);
  const id = KERNEL_IDS.get(name);
  if (id === undefined) {
    throw makeError(
      TypeError,
      'ERR_TIDEPOOL_UNKNOWN_KERNEL',
      `Unknown kernel ${JSON.stringify(name)}. Known kernels: ${KERNELS.join(', ')}`,
    );
  }
  return id;
}

function integerOption(options, name, min, max) {
  const value = options[name];
  if (value === undefined) return DEFAULTS[name];
  if (typeof value !== 'number') throw invalidArgType(`options.${name}`, 'of type number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw outOfRange(`options.${name}`, `an integer >= ${min} and <= ${max}`, value);
  }
  return value;
}

function msOption(options, name, min) {
  const value = options[name];
  if (value === undefined) return DEFAULTS[name];
  if (typeof value !== 'number') throw invalidArgType(`options.${name}`, 'of type number', value);
  if (!Number.isFinite(value) || value < min || value > 2 ** 31) {
    throw outOfRange(`options.${name}`, `a finite number >= ${min} and <= 2^31`, value);
  }
  return value;
}

/** A limit that may be `Infinity` (the default: no limit). */
function limitOption(options, name, min, max, integer) {
  const value = options[name];
  if (value === undefined || value === Infinity) return Infinity;
  if (typeof value !== 'number') throw invalidArgType(`options.${name}`, 'of type number', value);
  if (Number.isNaN(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw outOfRange(`options.${name}`, `${integer ? 'an integer' : 'a number'} >= ${min} and <= ${max}, or Infinity`, value);
  }
  return value;
}

/** A string option that must be one of `values`. */
function oneOfOption(options, name, values) {
  const value = options[name] === undefined ? DEFAULTS[name] : options[name];
  if (values.includes(value)) return value;
  if (typeof value !== 'string') throw invalidArgType(`options.${name}`, 'of type string', value);
  throw makeError(
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    `The property 'options.${name}' must be one of: ${values.map((e) => `'${e}'`).join(', ')}. Received '${value}'`,
  );
}

function resolveOptions(options) {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options);
  const kernel = kernelId(options.kernel === undefined ? DEFAULTS.kernel : options.kernel, 'options.kernel');
  const encoding = oneOfOption(options, 'encoding', ENCODINGS);
  const select = options.select;
  if (select !== undefined && typeof select !== 'function') {
    throw invalidArgType('options.select', 'of type function', select);
  }
  const scaleRule = oneOfOption(options, 'scaleRule', SCALE_RULES);
  const maxThreads = integerOption(options, 'maxThreads', 1, MAX_THREADS_LIMIT);
  const minThreads =
    options.minThreads === undefined
      ? Math.min(DEFAULTS.minThreads, maxThreads)
      : integerOption(options, 'minThreads', 0, maxThreads);
  const maxQueue = limitOption(options, 'maxQueue', 1, 0xffffffff, true);
  const maxQueueAgeMs = limitOption(options, 'maxQueueAgeMs', 0, 2 ** 31, false);
  return {
    kernel,
    encoding,
    select: select === undefined ? defaultSelect : select,
    maxQueue,
    queueFull: oneOfOption(options, 'queueFull', QUEUE_FULL_POLICIES),
    maxInputBytes: limitOption(options, 'maxInputBytes', 0, Number.MAX_SAFE_INTEGER, true),
    native: {
      minThreads,
      maxThreads,
      spawnDelayMs: msOption(options, 'spawnDelayMs', 0),
      idleTimeoutMs: msOption(options, 'idleTimeoutMs', 0),
      checkIntervalMs: msOption(options, 'checkIntervalMs', 0.01),
      scaleRule,
      maxQueue: maxQueue === Infinity ? undefined : maxQueue,
      maxQueueAgeMs: maxQueueAgeMs === Infinity ? undefined : maxQueueAgeMs,
      niceIncrement: integerOption(options, 'niceIncrement', 0, 19),
      failSpawnsAfter: options[kFailSpawnsAfter],
    },
  };
}

function closedError() {
  return makeError(Error, 'ERR_TIDEPOOL_CLOSED', 'The pool is closed and accepts no new tasks');
}

/** Node's convention for aborted operations (as fs, timers/promises, events.once). */
function abortError(reason) {
  const err = new Error('The operation was aborted', { cause: reason });
  err.name = 'AbortError';
  err.code = 'ABORT_ERR';
  return err;
}

function queueFullError() {
  return makeError(Error, 'ERR_TIDEPOOL_QUEUE_FULL', 'The queue is full (maxQueue tasks are waiting)');
}

function taskError(code, detail, destroyed) {
  switch (code) {
    case CODE_PANIC:
      return makeError(Error, 'ERR_TIDEPOOL_PANIC', `The kernel panicked: ${detail}`);
    case CODE_CANCELLED:
      return destroyed
        ? makeError(Error, 'ERR_TIDEPOOL_DESTROYED', 'The pool was destroyed before the task finished')
        : makeError(Error, 'ERR_TIDEPOOL_CANCELLED', 'The task was cancelled');
    case CODE_INVALID_INPUT:
      return makeError(RangeError, 'ERR_TIDEPOOL_INVALID_INPUT', detail);
    case CODE_TIMED_OUT:
      return makeError(Error, 'ERR_TIDEPOOL_TIMEOUT', 'The task ran longer than its timeoutMs and was stopped');
    case CODE_EXPIRED:
      return makeError(Error, 'ERR_TIDEPOOL_TIMEOUT', 'The task waited in the queue longer than maxQueueAgeMs and was not run');
    default:
      return makeError(Error, 'ERR_TIDEPOOL_INTERNAL', `Unknown native error code ${code}: ${detail}`);
  }
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
  #onBatchCallback;
  #kernel;
  #encoding;
  #select;
  #maxQueue;
  #queueFull;
  #maxInputBytes;
  /** Posts waiting for room in a full queue (queueFull: 'wait'), oldest first from #waitingHead. */
  #waiting = [];
  #waitingHead = 0;
  #needsDrain = false;
  /** close() was called while posts were still waiting for room. */
  #closeDeferred = false;
  // AbortSignal bookkeeping, used only while #signalsInUse > 0: the signal
  // of each slot, and per signal one 'abort' listener shared by all its
  // pending tasks (adding an EventTarget listener per task would cost more
  // than the task).
  #signalsInUse = 0;
  #signals = [];
  /** @type {Map<AbortSignal, { slots: Set<number>, listener: () => void }>} */
  #watched = new Map();
  /** The running task in this slot was told to stop because its signal fired. */
  #aborted = [];
  /** Shared with Rust: [slot, code << 24 | length] per finished task. */
  #meta = new Uint32Array(BATCH_CAPACITY * 2);
  /** Shared with Rust: result bytes of one batch chunk, back to back. */
  #slab = Buffer.alloc(SLAB_BYTES);
  // Per-slot task state. A slot is reused once its task settled.
  #messages = [];
  #data = [];
  #resolves = [];
  #rejects = [];
  #freeSlots = [];
  #nextSlot = 0;
  #pending = 0;
  #completed = 0;
  #failed = 0;
  #closed = false;
  #destroyed = false;
  #terminated = false;
  #terminationWaiters = [];
  #terminationPromise = null;

  /** @param {import('./index').PoolOptions} [options] */
  constructor(options) {
    super();
    const resolved = resolveOptions(options);
    this.#kernel = resolved.kernel;
    this.#encoding = resolved.encoding;
    this.#select = resolved.select;
    this.#maxQueue = resolved.maxQueue;
    this.#queueFull = resolved.queueFull;
    this.#maxInputBytes = resolved.maxInputBytes;
    // The native side holds this callback only weakly while the pool is idle
    // (so an idle pool can be garbage-collected) and strongly while tasks are
    // pending; this field is what keeps it alive as long as the pool is.
    this.#onBatchCallback = (count, events, terminated, queued) => this.#onBatch(count, events, terminated, queued);
    try {
      this.#native = new binding.NativePool(resolved.native, this.#onBatchCallback, this.#meta, this.#slab);
    } catch (err) {
      // The only runtime failure here: the OS refused to start the threads.
      throw makeError(Error, 'ERR_TIDEPOOL_SPAWN_FAILED', `Could not start the pool: ${err.message}`, { cause: err });
    }
    this.#nativeSubmit = this.#native.submitter();
    process.nextTick(() => this.emit('online'));
  }

  /** Names of every available kernel. */
  static get kernels() {
    return KERNELS;
  }

  /**
   * Runs the pool's kernel (or `options.kernel`) over the message's binary.
   * Resolves with `{ result, message }`, `message` being the very object posted.
   */
  post(message, options) {
    let kernel = this.#kernel;
    let signal;
    let timeoutMs;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options);
      if (options.kernel !== undefined) kernel = kernelId(options.kernel, 'options.kernel');
      signal = options.signal;
      if (signal !== undefined && !(signal instanceof AbortSignal)) {
        throw invalidArgType('options.signal', 'an instance of AbortSignal', signal);
      }
      timeoutMs = options.timeoutMs;
      if (timeoutMs !== undefined) {
        if (typeof timeoutMs !== 'number') throw invalidArgType('options.timeoutMs', 'of type number', timeoutMs);
        if (!(timeoutMs > 0) || (timeoutMs > 2 ** 31 && timeoutMs !== Infinity)) {
          throw outOfRange('options.timeoutMs', 'a number > 0 and <= 2^31, or Infinity', timeoutMs);
        }
        if (timeoutMs === Infinity) timeoutMs = undefined;
      }
    }
    const data = this.#checkedData(message, kernel);
    // An already-aborted signal is an early error: thrown, like bad arguments.
    if (signal !== undefined && signal.aborted) throw abortError(signal.reason);
    if (this.#closed) return Promise.reject(closedError());
    // One shared executor instead of a closure per task: less garbage.
    const promise = new Promise(captureResolvers);
    this.#enqueue(message, data, kernel, capturedResolve, capturedReject, signal, timeoutMs);
    return promise;
  }

  /**
   * The worker_threads-style API: the result arrives as a `'message'` event
   * `(result, message)`; a failed task emits `'error'` `(err, message)`.
   */
  postMessage(message) {
    const data = this.#checkedData(message, this.#kernel);
    if (this.#closed) {
      process.nextTick(() => this.emit('error', closedError(), message));
      return;
    }
    this.#enqueue(message, data, this.#kernel, null, null);
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
    let reset = false;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options);
      if (options.reset !== undefined && typeof options.reset !== 'boolean') {
        throw invalidArgType('options.reset', 'of type boolean', options.reset);
      }
      reset = options.reset === true;
    }
    const s = this.#native.stats(reset);
    return {
      threads: s.threads,
      idleThreads: s.idleThreads,
      busyThreads: s.busyThreads,
      queued: s.queued,
      oldestQueuedMs: s.oldestQueuedMs,
      pending: this.#pending,
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
      // Posts still waiting for room were accepted: queue them first.
      if (this.#waitingHead !== this.#waiting.length) this.#closeDeferred = true;
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
      let thrown;
      // Posts waiting for room never reached the queue: reject them too.
      const waiting = this.#waiting.slice(this.#waitingHead);
      this.#waiting = [];
      this.#waitingHead = 0;
      this.#closeDeferred = false;
      for (const w of waiting) {
        if (w.onAbort !== undefined) {
          if (w.signal === undefined) continue; // aborted while waiting: already settled
          w.signal.removeEventListener('abort', w.onAbort);
        }
        this.#failed++;
        const err = taskError(CODE_CANCELLED, '', true);
        if (w.reject !== null) w.reject(err);
        else {
          // Every waiting postMessage gets its 'error', even if a listener throws.
          try {
            this.emit('error', err, w.message);
          } catch (e) {
            if (thrown === undefined) thrown = { err: e };
          }
        }
      }
      for (let i = 0; i < slots.length; i++) {
        const err = this.#settle(slots[i], false, taskError(CODE_CANCELLED, '', true));
        if (err !== undefined && thrown === undefined) thrown = { err };
      }
      if (thrown !== undefined) process.nextTick(() => { throw thrown.err; });
    }
    return this.#whenTerminated();
  }

  [asyncDispose]() {
    return this.close();
  }


  #checkDuration(data, kernel) {
    const bytes = byteLengthOf(data);
    if (bytes < MIN_INPUT_BYTES[kernel]) {
      throw outOfRange(
        'message',
        `at least ${MIN_INPUT_BYTES[kernel]} bytes for kernel '${KERNELS[kernel]}' (a little-endian uint32 of microseconds; see micros())`,
        `${bytes} bytes`,
      );
    }
  }

  /** Validates the binary of a message; all of these throw synchronously. */
  #checkedData(message, kernel) {
    const data = checkBinary(this.#select(message), this.#select === defaultSelect ? 'message' : 'select(message)');
    if (MIN_INPUT_BYTES[kernel] !== 0) this.#checkDuration(data, kernel);
    if (this.#maxInputBytes !== Infinity) {
      const bytes = byteLengthOf(data);
      if (bytes > this.#maxInputBytes) throw outOfRange('message', `at most maxInputBytes (${this.#maxInputBytes}) bytes`, `${bytes} bytes`);
    }
    return data;
  }

  /**
   * Queues a task, applying the queueFull policy; `resolve === null` for
   * postMessage. `signal` and `timeoutMs` are optional.
   */
  #enqueue(message, data, kernel, resolve, reject, signal, timeoutMs) {
    if (this.#waitingHead !== this.#waiting.length) {
      // Posts are already waiting for room: keep their order.
      this.#wait(message, data, kernel, resolve, reject, signal, timeoutMs);
      return;
    }
    if (this.#trySubmit(message, data, kernel, resolve, reject, signal, timeoutMs) !== 0) return;
    if (this.#queueFull === 'wait') {
      this.#wait(message, data, kernel, resolve, reject, signal, timeoutMs);
      this.#needsDrain = true;
      return;
    }
    if (this.#queueFull === 'drop-oldest') {
      const dropped = this.#native.dropOldest();
      if (dropped >= 0) {
        const err = this.#settle(dropped, false, makeError(Error, 'ERR_TIDEPOOL_DROPPED', 'The task was dropped from a full queue to make room for a newer one'));
        if (err !== undefined) process.nextTick(() => { throw err; });
      }
      if (this.#trySubmit(message, data, kernel, resolve, reject, signal, timeoutMs) !== 0) return;
    }
    this.#failed++;
    const err = queueFullError();
    if (reject !== null) reject(err);
    else process.nextTick(() => this.emit('error', err, message));
  }

  /** Parks a post until the queue has room; an abort while waiting rejects it at once. */
  #wait(message, data, kernel, resolve, reject, signal, timeoutMs) {
    const entry = { message, data, kernel, resolve, reject, signal, timeoutMs, onAbort: undefined };
    if (signal !== undefined) {
      entry.onAbort = () => {
        entry.signal = undefined; // marks the entry as settled; #pump skips it
        this.#failed++;
        const err = abortError(signal.reason);
        if (reject !== null) reject(err);
        else this.emit('error', err, message);
      };
      signal.addEventListener('abort', entry.onAbort, { once: true });
    }
    this.#waiting.push(entry);
  }

  /** Submits to the native queue; returns its length after, or 0 if it was full. */
  #trySubmit(message, data, kernel, resolve, reject, signal, timeoutMs) {
    const slot = this.#freeSlots.length !== 0 ? this.#freeSlots.pop() : this.#nextSlot++;
    let queued;
    try {
      queued =
        signal === undefined && timeoutMs === undefined
          ? this.#nativeSubmit(slot, kernel, data)
          : this.#nativeSubmit(slot, kernel, data, timeoutMs ?? 0, signal !== undefined);
    } catch (err) {
      this.#freeSlots.push(slot);
      throw err;
    }
    if (queued === 0) {
      this.#freeSlots.push(slot);
      return 0;
    }
    this.#messages[slot] = message;
    this.#data[slot] = data;
    this.#resolves[slot] = resolve;
    this.#rejects[slot] = reject;
    this.#pending++;
    if (signal !== undefined) this.#watch(slot, signal);
    if (queued >= this.#maxQueue) this.#needsDrain = true;
    return queued;
  }

  /** Cancels the task in `slot` when `signal` fires. */
  #watch(slot, signal) {
    let watched = this.#watched.get(signal);
    if (watched === undefined) {
      watched = { slots: new Set(), listener: () => this.#onAbort(signal) };
      signal.addEventListener('abort', watched.listener, { once: true });
      this.#watched.set(signal, watched);
    }
    watched.slots.add(slot);
    this.#signals[slot] = signal;
    this.#signalsInUse++;
  }

  /** Forgets the signal of a settling task; drops the listener with its last task. */
  #unwatch(slot) {
    const signal = this.#signals[slot];
    this.#signals[slot] = undefined;
    this.#aborted[slot] = undefined;
    this.#signalsInUse--;
    const watched = this.#watched.get(signal);
    if (watched === undefined) return; // the signal already fired
    watched.slots.delete(slot);
    if (watched.slots.size === 0) {
      signal.removeEventListener('abort', watched.listener);
      this.#watched.delete(signal);
    }
  }

  /** `signal` fired: cancel every pending task posted with it. */
  #onAbort(signal) {
    const watched = this.#watched.get(signal);
    if (watched === undefined) return;
    this.#watched.delete(signal);
    let thrown;
    for (const slot of watched.slots) {
      const outcome = this.#native.cancel(slot);
      if (outcome === 1) {
        // Still queued: removed, so it settles now.
        const err = this.#settle(slot, false, abortError(signal.reason));
        if (err !== undefined && thrown === undefined) thrown = { err };
      } else if (outcome === 2) {
        // Running: it stops at its next chunk and is delivered as cancelled.
        this.#aborted[slot] = true;
      }
    }
    if (thrown !== undefined) process.nextTick(() => { throw thrown.err; });
  }

  /** After a batch: move waiting posts into the queue; emit 'drain' when there is room. */
  #pump(queued) {
    const waiting = this.#waiting;
    while (this.#waitingHead !== waiting.length) {
      const w = waiting[this.#waitingHead];
      if (w.onAbort !== undefined && w.signal === undefined) {
        waiting[this.#waitingHead++] = undefined; // aborted while waiting: already settled
        continue;
      }
      if (w.onAbort !== undefined) w.signal.removeEventListener('abort', w.onAbort);
      const q = this.#trySubmit(w.message, w.data, w.kernel, w.resolve, w.reject, w.signal, w.timeoutMs);
      if (q === 0) {
        if (w.onAbort !== undefined) w.signal.addEventListener('abort', w.onAbort, { once: true });
        return;
      }
      queued = q;
      waiting[this.#waitingHead++] = undefined;
    }
    waiting.length = 0;
    this.#waitingHead = 0;
    if (this.#closeDeferred) {
      this.#closeDeferred = false;
      this.#native.close();
    }
    if (queued < this.#maxQueue) {
      this.#needsDrain = false;
      this.emit('drain');
    }
  }

  /** Settles one task; returns an exception thrown by a 'message'/'error' listener. */
  #settle(slot, ok, value) {
    if (this.#signalsInUse !== 0 && this.#signals[slot] !== undefined) this.#unwatch(slot);
    const message = this.#messages[slot];
    const resolve = this.#resolves[slot];
    const reject = this.#rejects[slot];
    this.#messages[slot] = undefined;
    this.#data[slot] = undefined;
    this.#resolves[slot] = undefined;
    this.#rejects[slot] = undefined;
    this.#freeSlots.push(slot);
    this.#pending--;
    if (ok) {
      this.#completed++;
      if (resolve !== null) {
        resolve({ result: value, message });
        return undefined;
      }
    } else {
      this.#failed++;
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

  #onBatch(count, events, terminated, queued) {
    const meta = this.#meta;
    const slab = this.#slab;
    const encoding = this.#encoding;
    let thrown;
    let copy;
    if (encoding === 'buffer' && count !== 0) {
      // One allocation per chunk; each result is a view into it (like
      // Buffer.allocUnsafe's pool), never into the reused slab.
      let total = 0;
      for (let i = 0; i < count; i++) total += meta[2 * i + 1] & 0xffffff;
      copy = Buffer.allocUnsafeSlow(total);
      slab.copy(copy, 0, 0, total);
    }
    let offset = 0;
    for (let i = 0; i < count; i++) {
      const slot = meta[2 * i];
      const word = meta[2 * i + 1];
      const length = word & 0xffffff;
      const code = word >>> 24;
      const end = offset + length;
      let err;
      if (code === 0) {
        const result = copy !== undefined ? copy.subarray(offset, end) : slab.toString(encoding, offset, end);
        err = this.#settle(slot, true, result);
      } else {
        const error =
          code === CODE_CANCELLED && this.#signalsInUse !== 0 && this.#aborted[slot] === true
            ? abortError(this.#signals[slot].reason)
            : taskError(code, slab.toString('utf8', offset, end), this.#destroyed);
        err = this.#settle(slot, false, error);
      }
      if (err !== undefined && thrown === undefined) thrown = { err };
      offset = end;
    }
    if (events !== undefined) {
      for (const e of events) {
        try {
          if (e.type === 'spawnError') this.emit('spawnError', { error: e.error, threads: e.threads });
          else this.emit(e.type, { threadId: e.threadId, threads: e.threads, reason: e.reason });
        } catch (err) {
          if (thrown === undefined) thrown = { err };
        }
      }
    }
    if (this.#needsDrain) {
      try {
        this.#pump(queued);
      } catch (err) {
        if (thrown === undefined) thrown = { err };
      }
    }
    if (terminated) this.#onTerminated();
    // A listener threw: surface it as an uncaught exception, as an
    // EventEmitter would, but only after the whole batch has settled.
    if (thrown !== undefined) process.nextTick(() => { throw thrown.err; });
  }

  #onTerminated() {
    this.#terminated = true;
    this.#native.join(); // every thread has already exited: returns at once
    const waiters = this.#terminationWaiters;
    this.#terminationWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #whenTerminated() {
    if (this.#terminationPromise === null) {
      this.#terminationPromise = this.#terminated
        ? Promise.resolve()
        : new Promise((resolve) => this.#terminationWaiters.push(resolve));
    }
    return this.#terminationPromise;
  }
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

module.exports = { Pool, kernels: KERNELS, encodings: ENCODINGS, defaults: DEFAULTS, micros };
