'use strict';
// The engine: the one owner of a pool's native handle. It takes tasks the
// façade (lib/pool.js) has read and checked, queues them through the wire
// (wire.js), keeps what native code reads alive while it runs (the slot
// table, slots.js; a batch's chunks, batches.js), and settles them when
// native code delivers them (delivery.js). Its parts, each behind the
// engine:
//   admission.js  queueFull: what a full queue does to posts and batches
//   batches.js    postMany() / postRecords() / map() batches, fed and failed by chunks
//   records.js    the records of a postRecords(), where a batch's snapshots stand
//   aborts.js     what a fired signal stops
//   lifecycle.js  open, closing, closed, destroyed, terminated
//   ports.js      what map() and the streams may ask of the engine
// Nothing here runs user code between checking an input and the native
// side reading it.

const { binding } = require('../addon/binding');
const { checkInput, refusalOf, Bounds, ANY_LENGTH } = require('./binary');
const { Records } = require('./records');
const { fitRecords, checkRecordBounds } = require('../args/records');
const { KERNELS, MIN_INPUT_BYTES } = require('../addon/binding');
const {
  makeError,
  closedError,
  abortError,
  destroyedError,
  throwLater,
  countedCode,
} = require('../errors');
const { isAborted, signalReason } = require('./signals');
const { NativePromise } = require('../base/intrinsics');
const { ownArray, asPlainArray } = require('../base/own-array');
const { AllResults, PackedResults } = require('./batch');
const { BATCH_CAPACITY, SLAB_BYTES, BATCH_SLOT, submitPost } = require('./wire');
const { Post, TaskOptions } = require('./post');
const { SlotTable } = require('./slots');
const { Admission } = require('./admission');
const { Batches } = require('./batches');
const { Aborts } = require('./aborts');
const { Lifecycle } = require('./lifecycle');
const { deliver } = require('./delivery');

let capturedResolve;
let capturedReject;
/** Promise executor that hands its resolvers over through two variables: no closure per task. */
function captureResolvers(resolve, reject) {
  capturedResolve = resolve;
  capturedReject = reject;
}

/** A step's options: none (the kernel is the stream's own; its StepWatch stops it). */
const STEP_OPTIONS = Object.freeze(new TaskOptions(0, undefined, undefined, undefined, undefined));

class Engine {
  native;
  /** The raw hot calls (wire.js): a post, a batch's chunk, a stream's step. */
  submit;
  submitMany;
  submitStep;
  submitRecords;
  /** Where events go: the Pool. */
  emitter;
  encoding;
  /** How errors name the input: 'message', or 'select(message)' with a custom select. */
  inputName;
  maxInputBytes;
  /** boundsOf()'s, by kernel and `measure`. */
  #bounds = [];
  /** Shared with Rust (wire.js): [slot, code << 24 | length] per finished task, and their result bytes. */
  meta = new Uint32Array(BATCH_CAPACITY * 2);
  slab = Buffer.alloc(SLAB_BYTES);
  slots = new SlotTable();
  /** @type {Admission} */
  admission;
  batches = new Batches(this);
  aborts = new Aborts(this);
  lifecycle = new Lifecycle(this);
  /** Tasks queued or running (posts and batches' tasks). */
  pending = 0;
  completed = 0;
  failed = 0;
  /** Failed tasks by their error's code (what tidepool/metrics reports). */
  failures = { __proto__: null };
  /** Asks the native side for the rest of a batch it held back (see delivery.js). */
  deliverLater = () => {
    this.native.deliver();
  };
  /**
   * The native side holds this callback only weakly while the pool is idle
   * (so an idle pool can be garbage-collected) and strongly while tasks are
   * pending; this field is what keeps it alive as long as the pool is.
   */
  #onBatch = (count, events, terminated, large, later) =>
    deliver(this, count, events, terminated, large, later);

  /** `config`: { native, encoding, inputName, maxQueue, queueFull, maxInputBytes }. */
  constructor(emitter, config) {
    this.emitter = emitter;
    this.encoding = config.encoding;
    this.inputName = config.inputName;
    this.maxInputBytes = config.maxInputBytes;
    this.admission = new Admission(this, config.queueFull, config.maxQueue);
    try {
      this.native = new binding.NativePool(config.native, this.#onBatch, this.meta, this.slab);
    } catch (err) {
      // The only runtime failure here: the OS refused to start the threads.
      throw makeError(
        Error,
        'ERR_TIDEPOOL_SPAWN_FAILED',
        `Could not start the pool: ${err.message}`,
        { cause: err },
      );
    }
    this.submit = /** @type {import('./wire').Submit} */ (this.native.submitter());
    this.submitMany = /** @type {import('./wire').SubmitMany} */ (this.native.batchSubmitter());
    this.submitStep = /** @type {import('./wire').SubmitStep} */ (this.native.stepSubmitter());
    this.submitRecords = /** @type {import('./wire').SubmitRecords} */ (
      this.native.recordsSubmitter()
    );
  }

  /**
   * A task of post() (or postFile()): `data` the input's snapshot (a
   * file's path), `options` its TaskOptions. Returns the Promise of
   * `{ result, message }`.
   * @param {import('./post').TaskOptions} options
   */
  post(message, data, options) {
    return this.#task(message, data, options, false);
  }

  /**
   * A task of the drop-in's one-shots (lib/zlib/one-shot.js, through the
   * pool's ONE_SHOT door, as node:zlib's zlibBuffer drives its engine): a
   * post()'s, its Promise resolving with the kernel's output bytes
   * whatever the pool's `encoding`.
   * @param {import('./post').TaskOptions} options
   */
  oneShot(data, options) {
    return this.#task(undefined, data, options, true);
  }

  /** post() and oneShot(): `bytes`, the result is the output bytes alone. */
  #task(message, data, options, bytes) {
    const { kernel, extra, signal } = options;
    const watch = signal === undefined ? undefined : this.aborts.pin(signal);
    try {
      // One shared executor instead of a closure per task: less garbage.
      // Made before the check below, so that no user code (a promise hook)
      // runs between the check and the native side reading what was checked.
      const promise = new NativePromise(captureResolvers);
      const resolve = capturedResolve;
      const reject = capturedReject;
      // A one-shot's input is node:zlib's `buffer`, which maxInputBytes does
      // not bound; a file's path is no input: its length is the path's.
      if (bytes) checkInput(data, 'buffer', ANY_LENGTH);
      else if (extra !== undefined && extra.file) checkInput(data, 'data', ANY_LENGTH);
      else checkInput(data, this.inputName, this.boundsOf(kernel, false));
      if (this.lifecycle.closed) this.rejectClosed(data, kernel, reject);
      else if (signal !== undefined && isAborted(signal))
        reject(abortError(signalReason(signal))); // by a promise hook
      else {
        const post = new Post(message, data, options, resolve, reject, watch);
        post.bytes = bytes;
        this.admission.admit(post);
      }
      return promise;
    } finally {
      if (watch !== undefined) this.aborts.unpin(signal, watch);
    }
  }

  /**
   * A step of a stream's chunk (lib/streams/tasks.js, through StreamPort):
   * `data` the chunk's input, `step` what it runs with, `watch` the
   * stream's StepWatch (aborts.js), which stops it. Returns the Promise of
   * the step's output bytes. The chunk's writes were checked when written;
   * they go together in one task, which maxInputBytes does not bound.
   * @param {import('./post').Step} step
   */
  step(step, data, watch) {
    const promise = new NativePromise(captureResolvers);
    const resolve = capturedResolve;
    const reject = capturedReject;
    checkInput(data, 'data', ANY_LENGTH);
    // A closed pool still runs the streams whose end was asked for before
    // (`accepted`), unless destroy() cut that work short.
    const lifecycle = this.lifecycle;
    if (lifecycle.closed && (!step.accepted || lifecycle.destroyed)) {
      // ERR_TIDEPOOL_DESTROYED is for work destroy() cut short; work
      // given after close() or destroy() is refused as a post is.
      const err = step.accepted ? destroyedError() : closedError();
      this.countFailures(err, 1);
      reject(err);
    } else if (watch.aborted !== undefined)
      reject(watch.aborted); // by a promise hook
    else
      this.admission.admit(new Post(undefined, data, STEP_OPTIONS, resolve, reject, watch, step));
    return promise;
  }

  /**
   * A task of postMessage(): its result is an event.
   * @param {import('./post').TaskOptions} options
   */
  postMessage(message, data, options) {
    const kernel = options.kernel;
    checkInput(data, this.inputName, this.boundsOf(kernel, false));
    if (this.lifecycle.closed) {
      this.rejectClosed(data, kernel, (err) =>
        process.nextTick(() => this.emitter.emit('error', err, message)),
      );
      return;
    }
    this.admission.admit(new Post(message, data, options, null, null, undefined));
  }

  /**
   * The tasks of postMany(): `datas` the snapshots, named by `name` in
   * errors. Returns the Promise of every result, in order.
   * @param {import('./post').TaskOptions} options
   */
  postMany(datas, name, options) {
    const { kernel, signal } = options;
    const count = datas.length;
    const watch = signal === undefined ? undefined : this.aborts.pin(signal);
    try {
      const promise = new NativePromise(captureResolvers);
      const resolve = capturedResolve;
      const reject = capturedReject;
      // No user code from here to the native side's reading (see post()).
      // Lengths included: a binary of a later chunk is read after earlier
      // chunks are queued, when throwing is too late.
      const bounds = this.boundsOf(kernel, true);
      let bytes = 0;
      for (let i = 0; i < count; i++) {
        name.at = i;
        bytes += checkInput(datas[i], name, bounds);
      }
      this.#batch(datas, count, bytes, options, 'messages', watch, resolve, reject);
      return promise;
    } finally {
      if (watch !== undefined) this.aborts.unpin(signal, watch);
    }
  }

  /**
   * The tasks of postRecords(): the records `lengths` cuts the snapshot
   * `data` into. Returns the Promise of every result, in order.
   * @param {import('../args/records').Lengths} lengths
   * @param {import('./post').TaskOptions} options
   */
  postRecords(data, lengths, options) {
    const { kernel, signal } = options;
    const watch = signal === undefined ? undefined : this.aborts.pin(signal);
    try {
      const promise = new NativePromise(captureResolvers);
      const resolve = capturedResolve;
      const reject = capturedReject;
      // No user code from here to the native side's reading (see post()).
      const bytes = checkInput(data, 'data', ANY_LENGTH);
      const count = fitRecords(lengths, bytes);
      checkRecordBounds(lengths, count, this.boundsOf(kernel, true));
      const records = new Records(data, count, lengths.fixed, lengths.offsets);
      this.#batch(records, count, bytes, options, 'records', watch, resolve, reject);
      return promise;
    } finally {
      if (watch !== undefined) this.aborts.unpin(signal, watch);
    }
  }

  /**
   * postMany()'s and postRecords()' batch of `count` tasks over `datas`
   * (snapshots, or Records), `bytes` in all, checked: settled at once
   * when there is nothing to run, else opened and fed.
   */
  #batch(datas, count, bytes, options, what, watch, resolve, reject) {
    const signal = options.signal;
    if (this.lifecycle.closed) {
      const err = closedError();
      this.countFailures(err, count);
      reject(err);
    } else if (signal !== undefined && isAborted(signal)) {
      const err = abortError(signalReason(signal));
      this.countFailures(err, count);
      reject(err);
    } else if (count === 0) {
      resolve(options.packed ? Buffer.alloc(0) : asPlainArray(ownArray(0)));
    } else {
      const batch = this.batches.open(
        options,
        options.packed
          ? new PackedResults(count, resolve, reject)
          : new AllResults(count, resolve, reject),
        what,
      );
      if (watch !== undefined) this.aborts.watchBatch(batch, watch);
      batch.complete = true;
      this.batches.feed(batch, datas, 0, count, bytes);
    }
  }

  /** Submits `post` to the native queue; returns its length after, or 0 if it was full. */
  trySubmit(post) {
    const slots = this.slots;
    const slot = slots.acquire();
    let queued;
    try {
      queued = submitPost(this.submit, this.submitStep, slot, post, this.aborts.flagOf(post));
    } catch (err) {
      slots.giveBack(slot);
      // A binary detached since it was checked (while the post waited for
      // room): the refusal says which.
      throw refusalOf(err, this.inputNameOf(post));
    }
    if (queued === 0) {
      slots.giveBack(slot);
      return 0;
    }
    slots.hold(slot, post);
    this.pending++;
    if (post.watch !== undefined) this.aborts.watchTask(post);
    this.admission.noteQueued(queued);
    return queued;
  }

  /** How errors name `post`'s input: a step's `data`, a one-shot's `buffer`, a post's message. */
  inputNameOf(post) {
    if (post.step !== undefined) return 'data';
    return post.bytes ? 'buffer' : this.inputName;
  }

  /**
   * What checkInput asks of a post's input for `kernel`: the kernel's
   * least length and the pool's maxInputBytes; `measure`, whether the
   * caller wants the byte length (see checkInput).
   * @returns {Bounds}
   */
  boundsOf(kernel, measure) {
    const at = kernel * 2 + (measure ? 1 : 0);
    let bounds = this.#bounds[at];
    if (bounds === undefined) {
      const min = MIN_INPUT_BYTES[kernel];
      // Only the test kernels have a least length: a duration to run.
      const least = `at least ${min} bytes for kernel '${KERNELS[kernel]}' (a little-endian uint32 of microseconds; see micros())`;
      bounds = new Bounds(min, least, this.maxInputBytes, measure);
      this.#bounds[at] = bounds;
    }
    return bounds;
  }

  /** A post to a closed pool (`reject` its rejection or 'error'): argument errors are still thrown first. */
  rejectClosed(data, kernel, reject) {
    checkInput(data, this.inputName, this.boundsOf(kernel, true));
    const err = closedError();
    this.countFailures(err, 1);
    reject(err);
  }

  /**
   * Counts `count` tasks failed with `err`, under its code when tidepool or
   * Node gives it, else under 'other' (lib/errors.js countedCode): a
   * caller's codes would grow `failures`, and tidepool/metrics' series,
   * without bound.
   */
  countFailures(err, count) {
    if (count === 0) return;
    this.failed += count;
    const code = countedCode(err);
    this.failures[code] = (this.failures[code] ?? 0) + count;
  }

  /**
   * A post that never got a slot fails. Its 'error' event (postMessage)
   * comes on the next tick when `deferred` (never inside the post call
   * itself); otherwise returns an exception an 'error' listener threw.
   */
  fail(post, err, deferred) {
    this.countFailures(err, 1);
    if (post.reject !== null) {
      post.reject(err);
      return undefined;
    }
    if (deferred) {
      process.nextTick(() => this.emitter.emit('error', err, post.message));
      return undefined;
    }
    try {
      this.emitter.emit('error', err, post.message);
    } catch (thrown) {
      return thrown;
    }
    return undefined;
  }

  /** Whether settling `slot` as failed needs an error (not a task of a batch that already failed). */
  wantsError(slot) {
    return slot < BATCH_SLOT || this.batches.chunkOf(slot).batch.error === undefined;
  }

  /** Settles one task; returns an exception thrown by a 'message'/'error' listener. */
  settle(slot, ok, value) {
    if (slot >= BATCH_SLOT) {
      this.batches.settleTask(slot, ok, value);
      return undefined;
    }
    const post = this.slots.release(slot);
    this.pending--;
    // The slot's state is final before this (it may remove a listener).
    if (post.watch !== undefined) this.aborts.forgetTask(post);
    if (ok) {
      this.completed++;
      if (post.resolve !== null) {
        // A step's result is its output; a post's, the result with its message.
        post.resolve(post.bytes ? value : { result: value, message: post.message });
        return undefined;
      }
    } else {
      this.countFailures(value, 1);
      if (post.reject !== null) {
        post.reject(value);
        return undefined;
      }
    }
    try {
      if (ok) this.emitter.emit('message', value, post.message);
      else this.emitter.emit('error', value, post.message);
    } catch (err) {
      return err;
    }
    return undefined;
  }

  /** Stops accepting tasks, finishes the queued ones, joins the threads. */
  close() {
    this.lifecycle.close();
    return this.lifecycle.whenTerminated();
  }

  /** Stops accepting tasks, rejects queued ones, cancels running ones, joins the threads. */
  destroy() {
    const lifecycle = this.lifecycle;
    if (lifecycle.terminated || !lifecycle.destroy()) return lifecycle.whenTerminated();
    const slots = this.native.destroy();
    const errors = ownArray(0);
    // Batches being fed and posts waiting for room never (wholly) reached
    // the queue: reject them too.
    this.batches.failFeeding(destroyedError);
    const waiting = this.admission.takeAll();
    for (let i = 0; i < waiting.length; i++) {
      const w = waiting[i];
      if (w.settled) continue; // aborted while waiting: already settled
      if (w.batch !== undefined) {
        this.batches.fail(w.batch, w.batch.base + w.batch.next, destroyedError());
        continue;
      }
      this.admission.leave(w);
      const err = this.fail(w, destroyedError(), false);
      if (err !== undefined) errors[errors.length] = err;
    }
    for (let i = 0; i < slots.length; i++) {
      const err = this.settle(
        slots[i],
        false,
        this.wantsError(slots[i]) ? destroyedError() : undefined,
      );
      if (err !== undefined) errors[errors.length] = err;
    }
    throwLater(errors);
    return lifecycle.whenTerminated();
  }
}

module.exports = { Engine };
