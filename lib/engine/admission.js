'use strict';
// Admission: what happens to a task the native queue has no room for
// (`maxQueue`), by the pool's `queueFull` policy, for posts and batches
// alike. One line of waiters (posts and batches, in order) takes the room
// as it frees; 'drain' is emitted once nobody waits and the queue is
// below maxQueue.

const { WaitQueue } = require('../base/wait-queue');
const { setAdd } = require('../base/collections');
const { ownArray } = require('../base/own-array');
const { checkInput } = require('./binary');
const { queueFullError, droppedError, throwLater } = require('../errors');
const { Post } = require('./post');
const { BATCH_SLOT } = require('./wire');
const { FEED } = require('./batches');

/** What a full queue does to a task: take the oldest queued task's place, wait for room, or refuse it. */
const FULL = Object.freeze({ drop: 0, wait: 1, refuse: 2 });

/**
 * The queueFull policy's answer for a task. A stream's step waits whatever
 * the policy says: a stream has one in flight, and refusing or dropping it
 * would end the whole stream.
 */
function whenFull(policy, stream) {
  if (stream || policy === 'wait') return FULL.wait;
  return policy === 'drop-oldest' ? FULL.drop : FULL.refuse;
}

/** setImmediate as Node has it at load (a test's fake timers must not hold the pump back). */
const { setImmediate: scheduleImmediate } = require('node:timers');

class Admission {
  /** @type {import('./engine').Engine} */
  #engine;
  #policy;
  #maxQueue;
  /** Posts waiting for room, and batches behind them (Posts with `batch` set). */
  #waiting = new WaitQueue();
  /** Tasks counted as pending while they wait (an abort settles one in place). */
  waitingCount = 0;
  /** True while the queue holds `maxQueue` tasks or something waits: 'drain' follows. */
  needsDrain = false;
  #pumpScheduled = false;

  /** @param {import('./engine').Engine} engine */
  constructor(engine, policy, maxQueue) {
    this.#engine = engine;
    this.#policy = policy;
    this.#maxQueue = maxQueue;
  }

  /** The queue is at maxQueue after `queued` tasks: 'drain' will follow. */
  noteQueued(queued) {
    if (queued >= this.#maxQueue) this.needsDrain = true;
  }

  /** The native queue's length now is at maxQueue: 'drain' will follow. */
  noteQueueLength() {
    if (this.#maxQueue !== Infinity && this.#engine.native.queued() >= this.#maxQueue)
      this.needsDrain = true;
  }

  /**
   * True when no post or batch waits for room. Entries settled while they
   * waited (aborted, a batch that failed) are dropped from the front first:
   * one left there would hold every later post behind it.
   */
  nobodyWaits() {
    const waiting = this.#waiting;
    while (!waiting.empty && waiting.peek().settled) waiting.shift();
    return waiting.empty;
  }

  /**
   * Queues a post, applying the queueFull policy. The caller pinned its
   * signal. Runs no user code before the task is queued.
   */
  admit(post) {
    const engine = this.#engine;
    const action = whenFull(this.#policy, post.step !== undefined);
    if (this.nobodyWaits()) {
      // The native side reads (and checks) the input even when the queue is full.
      if (engine.trySubmit(post) !== 0) return;
      if (action === FULL.drop) {
        const dropped = engine.native.dropOldest();
        const queued = engine.trySubmit(post);
        // Settled after the new task is queued: an 'error' listener of the
        // dropped one (user code) must not run in the middle of this post.
        if (dropped >= 0) {
          const err = engine.settle(dropped, false, droppedError());
          if (err !== undefined) throwLater([err]);
        }
        if (queued !== 0) return;
      }
    } else if (post.inputIsMessage) {
      // Posts already wait for room: this one waits behind them, checked here.
      checkInput(post.data, engine.inputName, engine.boundsOf(post.options.kernel, true));
    }
    if (!this.#waiting.empty || action === FULL.wait) {
      this.waitingCount++;
      if (post.watch !== undefined) setAdd(post.watch.waiting, post);
      this.#waiting.push(post);
      this.needsDrain = true;
      return;
    }
    engine.fail(post, queueFullError(), true);
  }

  /** A batch's chunk did not fit: the policy says what its rest does. */
  batchFull(batch) {
    const action = whenFull(this.#policy, false);
    if (action === FULL.wait) this.waitBatch(batch);
    else if (action === FULL.drop) this.#dropForBatch(batch);
    else this.#engine.batches.fail(batch, batch.base + batch.next, queueFullError());
  }

  /** The rest of a batch waits for room (queueFull: 'wait'), or behind posts that do. */
  waitBatch(batch) {
    const entry = Post.forBatch(batch);
    batch.waiting = entry;
    batch.parked = true;
    this.waitingCount += batch.unsubmitted;
    this.#waiting.push(entry);
    this.needsDrain = true;
  }

  /**
   * queueFull: 'drop-oldest' for a batch: the oldest queued task makes
   * room for each of the batch's tasks that does not fit (one of the
   * batch's own, when it is larger than the queue: it then fails with
   * ERR_TIDEPOOL_DROPPED). The dropped tasks settle after the batch is in.
   */
  #dropForBatch(batch) {
    const engine = this.#engine;
    const batches = engine.batches;
    const dropped = ownArray(0);
    while (batch.unsubmitted !== 0) {
      // (-1: the threads emptied the queue meanwhile; the submit below fits.)
      const slot = engine.native.dropOldest();
      if (slot >= 0) {
        dropped[dropped.length] = slot;
        if (slot >= BATCH_SLOT && batches.chunkOf(slot).batch === batch) break;
      }
      if (batches.submit(batch, Infinity) === FEED.failed) break;
    }
    const errors = ownArray(0);
    for (let i = 0; i < dropped.length; i++) {
      const slot = dropped[i];
      const err = engine.settle(slot, false, engine.wantsError(slot) ? droppedError() : undefined);
      if (err !== undefined) errors[errors.length] = err;
    }
    // Dropped its own task, or the queue could not make room.
    if (batch.unsubmitted !== 0) batches.fail(batch, batch.base + batch.next, queueFullError());
    throwLater(errors);
  }

  /** A waiting post leaves the wait (queued, failed or destroyed). */
  leave(post) {
    post.settled = true;
    this.waitingCount--;
    if (post.watch !== undefined) this.#engine.aborts.forgetWaiting(post);
  }

  /** Every waiter, taken out of the line (destroy()). */
  takeAll() {
    return this.#waiting.takeAll();
  }

  /**
   * Runs pump() on the next turn when posts wait and a batch that failed
   * outside a delivery (map() stopped, a feed refused) freed room: nothing
   * else might pump again.
   */
  pumpSoon() {
    if (this.#pumpScheduled || !this.needsDrain) return;
    this.#pumpScheduled = true;
    scheduleImmediate(this.#pumpLater);
  }

  #pumpLater = () => {
    this.#pumpScheduled = false;
    if (!this.needsDrain || this.#engine.lifecycle.destroyed) return;
    const errors = ownArray(0);
    this.pump(errors);
    throwLater(errors);
  };

  /**
   * Moves waiting posts into the queue while it has room; emits 'drain'
   * once nothing waits and the queue is below maxQueue. Exceptions of
   * listeners are collected in `errors`.
   */
  pump(errors) {
    const engine = this.#engine;
    const waiting = this.#waiting;
    while (!waiting.empty) {
      const w = waiting.peek();
      if (w.settled) {
        waiting.shift(); // aborted while waiting: already settled
        continue;
      }
      if (w.batch !== undefined) {
        const batch = w.batch;
        if (engine.batches.submit(batch, Infinity) === FEED.full) return;
        // A chunk refused at submit closes map()'s source, whose return()
        // may destroy the pool: destroy() has settled and emptied the line.
        if (engine.lifecycle.destroyed) return;
        waiting.shift();
        batch.waiting = undefined;
        batch.parked = false;
        continue;
      }
      let queued;
      try {
        // The binaries were checked at post(); one detached while the post
        // waited is refused here (trySubmit: refusalOf).
        queued = engine.trySubmit(w);
      } catch (err) {
        waiting.shift();
        this.leave(w);
        const thrown = engine.fail(w, err, false);
        if (thrown !== undefined) errors[errors.length] = thrown;
        if (engine.lifecycle.destroyed) return; // an 'error' listener destroyed the pool
        continue;
      }
      if (queued === 0) return;
      waiting.shift();
      this.leave(w);
    }
    engine.lifecycle.closeIfIdle();
    // Read now: listeners (an 'error' of a post that could not get in, the
    // batch's own) may have posted since anything else was read.
    if (engine.native.queued() < this.#maxQueue) {
      this.needsDrain = false;
      try {
        engine.emitter.emit('drain');
      } catch (err) {
        errors[errors.length] = err;
      }
    }
  }
}

module.exports = { Admission };
