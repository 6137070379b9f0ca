'use strict';
// The two clients of the engine besides the façade, and all they may ask
// of it: map()'s iterators (lib/map/iterator.js) and the streams' tasks
// (lib/streams/tasks.js).

const { abortError, closedError, destroyedError } = require('../errors');
const { isAborted, signalReason } = require('./signals');
const { Step } = require('./post');
const { inlineError } = require('./wire');
const { checkInput } = require('./binary');

/** What map()'s iterators ask of the engine. One per pool. */
class MapPort {
  /** @type {import('./engine').Engine} */
  #engine;
  #take;
  /** The pool has its own `select`: errors name `select(iterable[i])`. */
  selected;

  /**
   * `take(message, name)`: what a task reads of a message (`select`, snapshot; user code runs here).
   * @param {import('./engine').Engine} engine
   */
  constructor(engine, take, selected) {
    this.#engine = engine;
    this.#take = take;
    this.selected = selected;
  }

  /**
   * A batch for the iteration's tasks, run with `options`, failing with its signal.
   * @param {import('./post').TaskOptions} options
   */
  open(options, sink) {
    const signal = options.signal;
    // Checked here, when the iteration starts: a listener added to a fired
    // signal would never run.
    if (signal !== undefined && isAborted(signal)) throw abortError(signalReason(signal));
    const engine = this.#engine;
    const batch = engine.batches.open(options, sink, 'iterable');
    if (signal !== undefined) engine.aborts.watchBatch(batch, engine.aborts.of(signal));
    return batch;
  }

  take(message, name) {
    return this.#take(message, name);
  }

  /** Checks a snapshot's lengths for `kernel` (errors name it `name`); returns its byte length. */
  check(data, kernel, name) {
    return checkInput(data, name, this.#engine.boundsOf(kernel, true));
  }

  /** Hands the batch `count` checked snapshots of `bytes` in all, task indices `base...`. */
  feed(batch, datas, base, count, bytes) {
    this.#engine.batches.feed(batch, datas, base, count, bytes);
  }

  /** The source is exhausted: nothing more will be fed. */
  finish(batch) {
    this.#engine.batches.endFeeding(batch);
  }

  /** The iteration stopped: its queued tasks go, its running ones are told to stop. */
  cancel(batch, error) {
    this.#engine.batches.fail(batch, -1, error);
  }

  /** `fn()` once no task of the batch runs any more. */
  whenStopped(batch, fn) {
    this.#engine.batches.whenStopped(batch, fn);
  }

  closed() {
    return this.#engine.lifecycle.closed;
  }
}

/**
 * What a stream's tasks ask of the engine: a step of a chunk (a Promise of
 * its output bytes), what the step did, the inline run of a hash's
 * update(), a hash's copy, and whether close() waits for the stream. One per pool.
 */
class StreamPort {
  /** @type {import('./engine').Engine} */
  #engine;

  /** @param {import('./engine').Engine} engine */
  constructor(engine) {
    this.#engine = engine;
  }

  /** Runs a step of the stream `handle` over `data` on a pool thread; `watch` (stepWatch()) stops it. */
  step(watch, accepted, handle, data, end, budget, seq) {
    return this.#engine.step(new Step(handle, end, budget, seq, accepted), data, watch);
  }

  /** What stops a stream's steps (one in flight at a time), until cancel() used it. */
  stepWatch() {
    return this.#engine.aborts.stepWatch();
  }

  /** The stream of `watch` is over: what it holds may serve another. */
  releaseWatch(watch) {
    this.#engine.aborts.releaseStepWatch(watch);
  }

  /** Stops the steps of `watch`: they settle with an AbortError the stream does not read. */
  cancel(watch) {
    this.#engine.aborts.cancelSteps(watch);
  }

  /**
   * Runs a step of the stream `handle` on this thread when all it does is
   * hand on output its codec made already: its output, or undefined (the
   * step is a pool thread's). Throws the error that ended the stream.
   */
  stepHere(handle, data, end, budget, seq) {
    // A destroyed pool runs nothing: the step on a thread is refused.
    if (this.#engine.lifecycle.destroyed) return undefined;
    const output = this.#engine.native.streamStepHere(handle, data, end, budget, seq);
    if (typeof output === 'string') throw this.inlineError(output);
    return output;
  }

  /** What the stream's last step did (consumed bytes × 4 + outcome; see streams/tasks.js). */
  report(handle) {
    return this.#engine.native.streamReport(handle);
  }

  /** The stream is over: its codec state is no longer counted as V8's external memory. */
  over(handle) {
    this.#engine.native.streamOver(handle);
  }

  /** Runs a hash's update on this thread (see streams/tasks.js). */
  inline(handle, seq, inFlight, rest) {
    return this.#engine.native.streamInline(handle, seq, inFlight, rest);
  }

  /** A copy of a stream's state, between its chunks (see streams/tasks.js fork()). */
  fork(handle) {
    return this.#engine.native.streamFork(handle);
  }

  /**
   * The error of a failed inline run. Once the pool is destroyed, its own
   * error: the chunk a thread was running was cancelled, which ended the
   * stream before its delivery could say so.
   */
  inlineError(text) {
    if (this.#engine.lifecycle.destroyed) return destroyedError();
    return inlineError(text);
  }

  /** The pool takes new work. */
  open() {
    return !this.#engine.lifecycle.closed;
  }

  /**
   * Why the pool takes no new work from a stream: ERR_TIDEPOOL_CLOSED, as a
   * post's, after close() or destroy(); but ERR_TIDEPOOL_DESTROYED when
   * destroy() cut short work the stream had given (`cutShort`), the error
   * that work ends it with.
   */
  refusal(cutShort) {
    return cutShort && this.#engine.lifecycle.destroyed ? destroyedError() : closedError();
  }

  /** The stream has work given while the pool was open: close() waits for it. */
  hold(tasks) {
    this.#engine.lifecycle.holdStream(tasks);
  }

  release(tasks) {
    this.#engine.lifecycle.releaseStream(tasks);
  }
}

module.exports = { MapPort, StreamPort };
