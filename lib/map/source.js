'use strict';
// map()'s source, pulled into the window (lib/map/window.js) and on to the
// pool.
//
// A sync source is pulled once a quarter of the window is free, at most
// PULL_SLICE messages per turn of the event loop (a window of 2^20 fills
// over many turns, the loop running between them), and each pull goes to
// the pool as one batch (fed a chunk, one native call, per turn); an async
// source one message per settled `next()`. A sync source may give promises
// (files being read): each is awaited, as `for await` would.
//
// User code runs inside a pull (the source's `next()`, `select`, getters)
// and may call the iterator's own `next()` or `return()`: `#pulling` keeps
// a nested pull out, and the pull stops as soon as the iteration is over
// (`#ended()`). The iterator (lib/map/iterator.js) owns the iteration's state and
// its protocol; this side only pulls, and tells it when a pull failed.

// As Node has it at load: a test's fake timers must not hold back the pulls.
const { setImmediate: scheduleImmediate } = require('node:timers');
const { types } = require('node:util');
const { ownArray, grown } = require('../base/own-array');
const { elementNamer } = require('../engine/batch');
const { makeError, closedError } = require('../errors');
const { NativePromise, promiseThen } = require('../base/intrinsics');

const { isPromise } = types;
const promiseResolve = (value) => NativePromise.resolve(value);
/**
 * Most messages a sync source gives in one turn of the event loop: its
 * next(), select and the snapshots run on the loop, about a microsecond a
 * message; the pool submits a batch's chunk of 1024 per turn anyway.
 */
const PULL_SLICE = 1024;

function notAnObject(step) {
  return makeError(
    TypeError,
    'ERR_INVALID_RETURN_VALUE',
    `The iterator's next() must return an object. Received ${typeof step}`,
  );
}

class MapSource {
  /** What the pool lends (lib/engine/ports.js MapPort): take, check, feed, finish, closed, selected. */
  #port;
  #source;
  #sync;
  #kernel;
  #concurrency;
  /** Pull again once this many places of the window are free (sync sources). */
  #refillAt;
  #window;
  /** The iterator's: whether the iteration is over; `fail(error, closeSource)`; settle what next() calls it can. */
  #ended;
  #fail;
  #serve;
  /** The pool's Batch, once the iterator opened it. */
  #batch = undefined;
  #name;
  /** The source said done. */
  #exhausted = false;
  /** A pull (an async next(), or an awaited value) is under way. */
  #pulling = false;
  /** The next slice of a sync source is pulled on the next turn (#pullLater). */
  #pullScheduled = false;
  /** The pool was closed: after the messages already queued, next() rejects with this. */
  #closed = undefined;

  constructor(port, source, sync, kernel, concurrency, window, ended, fail, serve) {
    this.#port = port;
    this.#source = source;
    this.#sync = sync;
    this.#kernel = kernel;
    this.#concurrency = concurrency;
    this.#refillAt = Math.max(1, concurrency >>> 2);
    this.#window = window;
    this.#ended = ended;
    this.#fail = fail;
    this.#serve = serve;
    this.#name = elementNamer('iterable', port.selected);
  }

  /** The source said done (or the pool closed: nothing more is pulled). */
  get exhausted() {
    return this.#exhausted;
  }

  /** A pull is under way: user code of the source may be running, or its promise pending. */
  get pulling() {
    return this.#pulling;
  }

  /** The error next() rejects with once the messages in flight are yielded: the pool closed. */
  get closedError() {
    return this.#closed;
  }

  /** The iterator opened `batch`: pulls may begin. */
  opened(batch) {
    this.#batch = batch;
  }

  /** Pulls more messages into the window when it has room. */
  refill() {
    if (this.#batch === undefined || this.#ended() || this.#exhausted || this.#pulling) return;
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

  /** Closes a source not yet exhausted; its own failure would hide the one being reported. */
  closeSource() {
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

  /** The rest of the room is filled from the next turn of the event loop on. */
  #pullLater() {
    this.#pullScheduled = true;
    scheduleImmediate(this.#continuePull);
  }

  #continuePull = () => {
    this.#pullScheduled = false;
    this.refill();
  };

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
    const bytes = this.#checkAll(datas, base, count);
    if (bytes < 0) return;
    if (port.closed()) {
      this.#stopClosed(count);
      return;
    }
    window.advance(count);
    if (count !== 0) port.feed(this.#batch, datas, base, count, bytes);
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
    this.closeSource();
    this.#serve();
  }

  /** Checks pulled snapshots (no user code runs here): their bytes, or -1 if one is refused. */
  #checkAll(datas, base, count) {
    const name = this.#name;
    let bytes = 0;
    try {
      for (let i = 0; i < count; i++) {
        name.at = base + i;
        bytes += this.#port.check(datas[i], this.#kernel, name);
      }
    } catch (err) {
      this.#fail(err, true);
      return -1;
    }
    return bytes;
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
    const bytes = this.#checkAll(datas, base, 1);
    if (bytes < 0) return;
    if (this.#port.closed()) {
      this.#stopClosed(0);
      return;
    }
    window.put(base, message);
    window.advance(1);
    this.#port.feed(this.#batch, datas, base, 1, bytes);
    this.refill();
    this.#serve();
  }
}

module.exports = { MapSource };
