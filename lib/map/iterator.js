'use strict';
// map(): an async iterator of `{ result, message }`, in the order of the
// messages, over a pool's results, with at most `concurrency` tasks in
// flight.
//
// The messages in flight live in a window (lib/map/window.js), from the
// next to yield to the next to pull; the source is pulled into it and on
// to the pool by lib/map/source.js. All the tasks of one map() are one
// Batch of the pool (lib/engine/batch.js): one cancel flag, so breaking out of
// the loop, a failed task or the signal cancels every task in flight at
// once. What is left here is the iterator's protocol: next() and return(),
// the next() calls waiting, and how the iteration ends.
//
// Errors end the iteration: a failed task, the source throwing, a message
// that is not binary. The next `next()` (or the one waiting) rejects with
// the error; every later one says done. Results finished after the failed
// one are dropped. A pool closed while the iteration runs: the messages
// already queued finish and are yielded, then `next()` rejects with
// ERR_TIDEPOOL_CLOSED.

const { types } = require('node:util');
const { makeError } = require('../errors');
const { WaitQueue } = require('../base/wait-queue');
const { NativePromise, promiseThen } = require('../base/intrinsics');
const { MapWindow } = require('./window');
const { MapSource } = require('./source');

const { isPromise } = types;
const promiseResolve = (value) => NativePromise.resolve(value);
/** What the pool is told when the iteration ends early (nobody hears it). */
const STOPPED = Object.freeze(makeError(Error, 'ABORT_ERR', 'The map() iteration was stopped'));

function ignore() {}

function done() {
  return { value: undefined, done: true };
}

let capturedResolve;
let capturedReject;
function captureResolvers(resolve, reject) {
  capturedResolve = resolve;
  capturedReject = reject;
}

class MapIterator {
  /** What the engine lends (lib/engine/ports.js MapPort). */
  #port;
  #source;
  #sync;
  /** The iteration's TaskOptions (lib/engine/post.js). */
  #options;
  /** The pool's Batch, opened by the first next(). */
  #batch = undefined;
  /** The messages in flight and their results, in order. */
  #window;
  /** The pulling of the source. */
  #pull;
  /** The iteration is over: done, returned, or its error reported. */
  #over = false;
  #error = undefined;
  /** Its error was handed to a next(). */
  #reported = false;
  /** The error waits for the cancelled tasks in flight to stop (see #fail). */
  #stopping = false;
  /** Pending next() calls, oldest first: [resolve, reject] pairs. */
  #waiters = new WaitQueue();
  #serving = false;

  constructor(port, source, sync, options) {
    this.#port = port;
    this.#source = source;
    this.#sync = sync;
    this.#options = options;
    const concurrency = options.concurrency;
    this.#window = new MapWindow(concurrency);
    this.#pull = new MapSource(
      port,
      source,
      sync,
      options.kernel,
      concurrency,
      this.#window,
      () => this.#ended(),
      (error, closeSource) => this.#fail(error, closeSource),
      () => this.#serve(),
    );
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    // The common case once running: the next result is already here.
    if (
      this.#waiters.empty &&
      this.#error === undefined &&
      !this.#over &&
      this.#window.headReady()
    ) {
      const step = this.#window.takeHead();
      this.#pull.refill();
      return promiseResolve(step);
    }
    const promise = new NativePromise(captureResolvers);
    // An Array literal: both elements are its own, whatever Array.prototype holds.
    this.#waiters.push([capturedResolve, capturedReject]);
    if (this.#batch === undefined && !this.#over && this.#error === undefined) this.#open();
    this.#pull.refill();
    this.#serve();
    return promise;
  }

  /**
   * Stops: cancels the tasks in flight and closes the source. Its return()
   * is awaited, unless a next() of it is still pending: an async
   * generator (a tailing cursor waiting for data) runs a return() only
   * after that next() settles, which may be never, and the `break` must
   * not wait for it. The source then closes when its next() settles (a
   * failure of that late return() has nobody to go to, and is dropped).
   */
  async return(value) {
    if (!this.#over) {
      this.#over = true;
      const wasFailed = this.#error !== undefined;
      const nextPending = this.#pull.pulling;
      const batch = this.#batch;
      if (batch !== undefined && !wasFailed) this.#port.cancel(batch, STOPPED);
      this.#window.clear();
      this.#serve();
      // The tasks in flight were told to stop; the break completes once
      // they have, so no thread reads the messages when it does.
      const stopped =
        batch === undefined
          ? undefined
          : new NativePromise((resolve) => this.#port.whenStopped(batch, resolve));
      if (!this.#pull.exhausted && !wasFailed) {
        const close = this.#source.return;
        if (typeof close === 'function') {
          const step = close.call(this.#source);
          if (!this.#sync) {
            if (!nextPending) await step;
            else if (isPromise(step)) promiseThen(step, undefined, ignore);
          }
        }
      }
      if (stopped !== undefined) await stopped;
    }
    return { value, done: true };
  }

  #open() {
    const sink = {
      result: (index, value) => this.#onResult(index, value),
      fail: (_index, error) => this.#fail(error, true),
    };
    try {
      this.#batch = this.#port.open(this.#options, sink);
      this.#pull.opened(this.#batch);
    } catch (err) {
      this.#fail(err, true);
    }
  }

  #onResult(index, value) {
    if (this.#window.arrived(index, value) && !this.#waiters.empty) {
      this.#serve();
      this.#pull.refill();
    }
  }

  /** Settles the waiting next() calls that can be settled now. */
  #serve() {
    if (this.#serving) return;
    this.#serving = true;
    const waiters = this.#waiters;
    const window = this.#window;
    const pull = this.#pull;
    while (!waiters.empty) {
      const waiter = waiters.peek();
      if (this.#error !== undefined && !this.#reported) {
        if (this.#stopping) break;
        this.#reported = true;
        this.#over = true;
        waiters.shift();
        waiter[1](this.#error);
      } else if (this.#over || this.#error !== undefined) {
        waiters.shift();
        waiter[0](done());
      } else if (window.size !== 0) {
        if (!window.headReady()) break;
        waiters.shift();
        waiter[0](window.takeHead());
      } else if (pull.exhausted && !pull.pulling) {
        if (pull.closedError !== undefined)
          this.#error = pull.closedError; // reported at the next pass
        else this.#over = true;
      } else {
        break;
      }
    }
    this.#serving = false;
  }

  /** True once the iteration has ended (user code in a pull may end it). */
  #ended() {
    return this.#over || this.#error !== undefined;
  }

  /**
   * Ends the iteration with `error`: the tasks in flight are cancelled, the
   * source closed (unless it is the one that failed), and the waiting (or
   * next) next() rejects.
   */
  #fail(error, closeSource) {
    if (this.#error !== undefined || this.#over) return;
    this.#error = error;
    const batch = this.#batch;
    if (batch !== undefined) {
      // Reported once the tasks in flight have stopped (at once when none
      // runs): the loop then ends with no thread reading its messages.
      this.#stopping = true;
      this.#port.cancel(batch, error);
      this.#port.whenStopped(batch, () => {
        this.#stopping = false;
        this.#serve();
      });
    }
    this.#window.clear();
    if (closeSource) this.#pull.closeSource();
    this.#serve();
  }
}

module.exports = { MapIterator };
