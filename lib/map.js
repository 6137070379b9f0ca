'use strict';
// map(): an async iterator of `{ result, message }`, in the order of the
// messages, over a pool's results, with at most `concurrency` tasks in
// flight.
//
// The messages in flight live in a window (lib/map-window.js), from the
// next to yield to the next to pull, at most `concurrency`. A sync source is pulled once a quarter of the window
// is free, at most PULL_SLICE messages per turn of the event loop (a
// window of 2^20 fills over many turns, the loop running between them),
// and each pull goes to the pool as one batch (fed a chunk, one native
// call, per turn); an async source one message per settled `next()`. All
// the tasks of one map() are one Batch of the pool (lib/batch.js): one
// cancel flag, so breaking out of the loop, a failed task or the signal
// cancels every task in flight at once.
//
// Errors end the iteration: a failed task, the source throwing, a message
// that is not binary. The next `next()` (or the one waiting) rejects with
// the error; every later one says done. Results finished after the failed
// one are dropped. A pool closed while the iteration runs: the messages
// already queued finish and are yielded, then `next()` rejects with
// ERR_TIDEPOOL_CLOSED.
//
// User code runs inside a pull (the source's `next()`, `select`, getters)
// and may call this iterator's own `next()` or `return()`: `#pulling` keeps
// a nested pull out, and the pull stops as soon as the iteration is over.

const { types } = require('node:util');
// As Node has it at load: a test's fake timers must not hold back the pulls.
const { setImmediate: scheduleImmediate } = require('node:timers');
const { ownArray, grown } = require('./own-array');
const { MapWindow } = require('./map-window');
const { elementNamer } = require('./batch');
const { makeError, closedError } = require('./errors');
const { WaitQueue } = require('./wait-queue');
const { NativePromise, promiseThen } = require('./intrinsics');

const { isPromise } = types;
const promiseResolve = (value) => NativePromise.resolve(value);
/**
 * Most messages a sync source gives in one turn of the event loop: its
 * next(), select and the snapshots run on the loop, about a microsecond a
 * message; the pool submits a batch's chunk of 1024 per turn anyway.
 */
const PULL_SLICE = 1024;
/** What the pool is told when the iteration ends early (nobody hears it). */
const STOPPED = Object.freeze(makeError(Error, 'ABORT_ERR', 'The map() iteration was stopped'));

function ignore() {}

function done() {
  return { value: undefined, done: true };
}

function notAnObject(step) {
  return makeError(TypeError, 'ERR_INVALID_RETURN_VALUE', `The iterator's next() must return an object. Received ${typeof step}`);
}

let capturedResolve;
let capturedReject;
function captureResolvers(resolve, reject) {
  capturedResolve = resolve;
  capturedReject = reject;
}

class MapIterator {
  /** What the pool lends: open, take, check, feed, finish, cancel, whenStopped, selected. */
  #port;
  #source;
  #sync;
  #kernel;
  #extra;
  #timeoutMs;
  #signal;
  #concurrency;
  /** Pull again once this many places of the window are free (sync sources). */
  #refillAt;
  /** The pool's Batch, opened by the first next(). */
  #batch = undefined;
  /** The messages in flight and their results, in order. */
  #window;
  /** The source said done. */
  #exhausted = false;
  /** A pull (an async next(), or an awaited value) is under way. */
  #pulling = false;
  /** The next slice of a sync source is pulled on the next turn (#pullLater). */
  #pullScheduled = false;
  /** The iteration is over: done, returned, or its error reported. */
  #over = false;
  #error = undefined;
  /** Its error was handed to a next(). */
  #reported = false;
  /** The error waits for the cancelled tasks in flight to stop (see #fail). */
  #stopping = false;
  /** The pool was closed: after the messages already queued, next() rejects with this. */
  #closed = undefined;
  /** Pending next() calls, oldest first: [resolve, reject] pairs. */
  #waiters = new WaitQueue();
  #serving = false;
  #name;

  constructor(port, source, sync, options) {
    this.#port = port;
    this.#source = source;
    this.#sync = sync;
    this.#kernel = options.kernel;
    this.#extra = options.extra;
    this.#timeoutMs = options.timeoutMs;
    this.#signal = options.signal;
    const concurrency = options.concurrency;
    this.#concurrency = concurrency;
    this.#refillAt = Math.max(1, concurrency >>> 2);
    this.#window = new MapWindow(concurrency);
    this.#name = elementNamer('iterable', port.selected);
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    // The common case once running: the next result is already here.
    if (this.#waiters.empty && this.#error === undefined && !this.#over && this.#window.headReady()) {
      const step = this.#window.takeHead();
      this.#refill();
      return promiseResolve(step);
    }
    const promise = new NativePromise(captureResolvers);
    // An Array literal: both elements are its own, whatever Array.prototype holds.
    this.#waiters.push([capturedResolve, capturedReject]);
    if (this.#batch === undefined && !this.#over && this.#error === undefined) this.#open();
    this.#refill();
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
      const nextPending = this.#pulling;
      const batch = this.#batch;
      if (batch !== undefined && !wasFailed) this.#port.cancel(batch, STOPPED);
      this.#window.clear();
      this.#serve();
      // The tasks in flight were told to stop; the break completes once
      // they have, so no thread reads the messages when it does.
      const stopped = batch === undefined ? undefined : new NativePromise((resolve) => this.#port.whenStopped(batch, resolve));
      if (!this.#exhausted && !wasFailed) {
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
      const extra = this.#extra;
      this.#batch = this.#port.open(this.#kernel, extra, this.#timeoutMs, this.#signal, sink);
    } catch (err) {
      this.#fail(err, true);
    }
  }

  #onResult(index, value) {
    if (this.#window.arrived(index, value) && !this.#waiters.empty) {
      this.#serve();
      this.#refill();
    }
  }

  /** Settles the waiting next() calls that can be settled now. */
  #serve() {
    if (this.#serving) return;
    this.#serving = true;
    const waiters = this.#waiters;
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
      } else if (this.#window.size !== 0) {
        if (!this.#window.headReady()) break;
        waiters.shift();
        waiter[0](this.#window.takeHead());
      } else if (this.#exhausted && !this.#pulling) {
        if (this.#closed !== undefined)
          this.#error = this.#closed; // reported at the next pass
        else this.#over = true;
      } else {
        break;
      }
    }
    this.#serving = false;
  }

  /** Pulls more messages into the window when it has room. */
  #refill() {
    if (this.#batch === undefined || this.#error !== undefined || this.#over || this.#exhausted || this.#pulling) return;
    // A slice is due on the next turn: this turn has had its own.
    if (this.#pullScheduled) return;
    const inFlight = this.#window.size;
    const room = this.#concurrency - inFlight;
    if (room === 0) return;
    if (!this.#sync) this.#pullAsync();
    else if (inFlight === 0 || room >= this.#refillAt) {
      this.#pullSync(Math.min(room, PULL_SLICE));
      if (room > PULL_SLICE) this.#pullLater();
    }
  }

  /** The rest of the room is filled from the next turn of the event loop on. */
  #pullLater() {
    this.#pullScheduled = true;
    scheduleImmediate(this.#continuePull);
  }

  #continuePull = () => {
    this.#pullScheduled = false;
    this.#refill();
  };

  /** True once the iteration has ended (user code in a pull may end it). */
  #ended() {
    return this.#over || this.#error !== undefined;
  }

  #pullSync(room) {
    const source = this.#source;
    const name = this.#name;
    const port = this.#port;
    const window = this.#window;
    const base = window.tail;
    // Grown as messages come: a large window may meet a short source.
    let datas = ownArray(Math.min(room, 1024));
    let count = 0;
    let awaited;
    // No nested pull while this one runs user code.
    this.#pulling = true;
    while (count < room) {
      let message;
      try {
        const step = source.next();
        if (this.#ended()) break;
        if (step === null || typeof step !== 'object') {
          this.#pulling = false;
          this.#fail(notAnObject(step), true);
          return;
        }
        if (step.done) {
          this.#exhausted = true;
          break;
        }
        message = step.value;
      } catch (err) {
        this.#pulling = false;
        this.#fail(err, false); // a source that threw (or whose result did) is done
        return;
      }
      if (this.#ended()) break;
      // A sync iterable of promises (files being read): each is awaited,
      // as `for await` would.
      if (isPromise(message)) {
        awaited = message;
        break;
      }
      name.at = base + count;
      if (count === datas.length) datas = grown(datas, Math.min(room, count * 2));
      try {
        datas[count] = port.take(message, name);
      } catch (err) {
        this.#pulling = false;
        this.#fail(err, true);
        return;
      }
      if (this.#ended()) break;
      window.put(base + count, message);
      count++;
    }
    this.#pulling = false;
    if (this.#ended()) return; // what was pulled never becomes a task
    if (!this.#checkAll(datas, base, count)) return;
    if (port.closed()) {
      this.#stopClosed(count);
      return;
    }
    window.advance(count);
    if (count !== 0) port.feed(this.#batch, datas, base, count);
    if (this.#exhausted) {
      port.finish(this.#batch);
      this.#serve();
    }
    if (awaited !== undefined) this.#await(awaited);
  }

  /**
   * The pool was closed: nothing more is pulled or queued (the `count`
   * messages just pulled are let go); the ones in flight finish and are
   * yielded, then next() rejects with ERR_TIDEPOOL_CLOSED.
   */
  #stopClosed(count) {
    this.#window.forget(count);
    this.#closed = closedError();
    this.#exhausted = true;
    this.#port.finish(this.#batch);
    this.#closeSource();
    this.#serve();
  }

  /** Checks pulled snapshots (no user code runs here); false if one is refused. */
  #checkAll(datas, base, count) {
    const name = this.#name;
    try {
      for (let i = 0; i < count; i++) {
        name.at = base + i;
        this.#port.check(datas[i], this.#kernel, name);
      }
    } catch (err) {
      this.#fail(err, true);
      return false;
    }
    return true;
  }

  #pullAsync() {
    this.#pulling = true;
    let step;
    try {
      step = this.#source.next();
    } catch (err) {
      this.#pulling = false;
      this.#fail(err, false);
      return;
    }
    promiseThen(
      promiseResolve(step),
      (result) => {
        if (this.#ended()) {
          this.#pulling = false;
          return;
        }
        let finished;
        let message;
        try {
          if (result === null || typeof result !== 'object') throw notAnObject(result);
          finished = result.done;
          if (!finished) message = result.value;
        } catch (err) {
          this.#pulling = false;
          this.#fail(err, false);
          return;
        }
        if (finished) {
          this.#pulling = false;
          this.#exhausted = true;
          this.#port.finish(this.#batch);
          this.#serve();
        } else {
          this.#accept(message);
        }
      },
      (err) => {
        this.#pulling = false;
        this.#fail(err, false);
      },
    );
  }

  /** Waits for a message a sync source gave as a promise. */
  #await(promise) {
    this.#pulling = true;
    promiseThen(
      promise,
      (message) => {
        if (this.#ended()) this.#pulling = false;
        else this.#accept(message);
      },
      (err) => {
        this.#pulling = false;
        this.#fail(err, true);
      },
    );
  }

  /**
   * One message pulled on its own (async), `#pulling` still set: into the
   * window and to the pool.
   */
  #accept(message) {
    const window = this.#window;
    const base = window.tail;
    const name = this.#name;
    name.at = base;
    let data;
    try {
      data = this.#port.take(message, name);
    } catch (err) {
      this.#pulling = false;
      this.#fail(err, true);
      return;
    }
    this.#pulling = false;
    if (this.#ended()) return;
    const datas = ownArray(1, () => data);
    if (!this.#checkAll(datas, base, 1)) return;
    if (this.#port.closed()) {
      this.#stopClosed(0);
      return;
    }
    window.put(base, message);
    window.advance(1);
    this.#port.feed(this.#batch, datas, base, 1);
    this.#refill();
    this.#serve();
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
    if (closeSource) this.#closeSource();
    this.#serve();
  }

  /** Closes a source not yet exhausted; its own failure would hide the one being reported. */
  #closeSource() {
    if (this.#exhausted && this.#closed === undefined) return;
    try {
      const close = this.#source.return;
      if (typeof close === 'function') {
        const step = close.call(this.#source);
        if (!this.#sync && isPromise(step)) promiseThen(step, undefined, () => {});
      }
    } catch {
      // As above.
    }
  }
}

module.exports = { MapIterator };
