'use strict';
// Abort fan-out: when a signal fires, everything made with it stops in one
// pass: its waiting posts settle, its queued tasks leave the queue in one
// native call and settle, its running tasks are told to stop (they settle
// when delivered), its batches fail, its streams are destroyed. One 'abort'
// listener per signal (lib/engine/signals.js) serves them all. A stream's
// steps are stopped by the stream itself, without a signal (StepWatch).

const { ownArray } = require('../base/own-array');
const {
  newSet,
  setAdd,
  setHas,
  setDelete,
  setClear,
  setSize,
  setToArray,
} = require('../base/collections');

// Captured at load (lib/base/intrinsics.js states why).
const queueMicrotask = globalThis.queueMicrotask;
const { abortError, throwLater } = require('../errors');
const { Watches, isAborted, signalReason } = require('./signals');
const { ABORT, WHEN_OVER } = require('../symbols');

/**
 * What a stopped stream step settles with: the stream has failed already,
 * with its own error, or taken the step over (a hash's inline update), and
 * reads none of theirs; one AbortError, made once, serves them all (an
 * Error each would cost more than the teardown), and counts them as
 * aborted in the pool's metrics, as a signal's tasks are, not as failures.
 */
const CHUNK_ABORTED = abortError(undefined);

/** Unraised cancel flags kept for new streams (Aborts.#freeFlags). */
const FREE_FLAGS_MOST = 256;

/**
 * What stops a stream's steps: the stream's own stand-in for a Watch (the
 * fields the engine reads of a post's `watch`), with no signal, listener
 * or map entry. A stream keeps one for its steps (one in flight at a time)
 * until it stops one, then takes a new one; its native cancel flag is made
 * for its first task and serves every later one.
 */
class StepWatch {
  /** Its steps queued or running (each carries `flag`). */
  tasks = 0;
  flag = undefined;
  /** CHUNK_ABORTED once cancel() stopped its steps; no step is admitted with it then. */
  aborted = undefined;
  #waiting = undefined;

  /** Its steps waiting for room (queueFull: 'wait'), made when one does. */
  get waiting() {
    return (this.#waiting ??= newSet());
  }

  get anyWaiting() {
    return this.#waiting !== undefined && setSize(this.#waiting) !== 0;
  }
}

class Aborts {
  /** @type {import('./engine').Engine} */
  #engine;
  #watches = new Watches((signal, watch) => this.#onAbort(signal, watch));
  /**
   * The StepWatches stopped in this job, whose queued steps #removeQueued
   * takes out at its end, all in one native pass: a loop that destroys N
   * streams stops N steps, and a pass each would cost N × the queue. A
   * post()'s signal takes its tasks out at once, as documented.
   */
  #toRemove = undefined;
  /**
   * Cancel flags of StepWatches whose streams ended without stopping a
   * step: never raised, held by no task, they serve new streams (a flag is
   * a native call to make, and a server makes a stream per response).
   */
  #freeFlags = ownArray(0);

  /** @param {import('./engine').Engine} engine */
  constructor(engine) {
    this.#engine = engine;
  }

  /** A new StepWatch, for a stream's steps. */
  stepWatch() {
    const watch = new StepWatch();
    const free = this.#freeFlags;
    const n = free.length;
    if (n !== 0) {
      watch.flag = free[n - 1];
      free.length = n - 1;
    }
    return watch;
  }

  /** The stream of `watch` is over: its flag serves another, unless it was raised or a step still holds it. */
  releaseStepWatch(watch) {
    const flag = watch.flag;
    if (flag === undefined || watch.aborted !== undefined || watch.tasks !== 0) return;
    watch.flag = undefined;
    const free = this.#freeFlags;
    if (free.length < FREE_FLAGS_MOST) free[free.length] = flag;
  }

  /**
   * Stops the steps of `watch` (the stream failed, or took its step over):
   * those waiting for room settle now, the queued ones leave the queue at
   * the end of this job with others, the running one stops at its next
   * piece; all settle with CHUNK_ABORTED. No later step is admitted with
   * `watch`.
   */
  cancelSteps(watch) {
    if (watch.aborted !== undefined) return;
    watch.aborted = CHUNK_ABORTED;
    const engine = this.#engine;
    const errors = ownArray(0);
    if (watch.anyWaiting) {
      const waiting = setToArray(watch.waiting);
      for (let i = 0; i < waiting.length; i++) {
        const post = waiting[i];
        // Gone from the wait since the walk began (user code run by a
        // settlement destroyed the pool, or a pump let it in): counted out.
        if (!setHas(watch.waiting, post)) continue;
        post.settled = true; // the pump skips it
        engine.admission.waitingCount--;
        const err = engine.fail(post, CHUNK_ABORTED, false);
        if (err !== undefined) errors[errors.length] = err;
      }
      setClear(watch.waiting);
    }
    if (watch.tasks !== 0) {
      // Raised now: a thread that takes the step before the pass stops it
      // before its first piece, as the stream is over.
      engine.native.raiseFlag(watch.flag);
      if (this.#toRemove === undefined) {
        this.#toRemove = ownArray(0);
        queueMicrotask(() => this.#removeQueued());
      }
      this.#toRemove[this.#toRemove.length] = watch;
    }
    if (engine.admission.needsDrain) engine.admission.pump(errors);
    throwLater(errors);
  }

  /** The Watch of `signal` (made, its listener added, on first use). */
  of(signal) {
    return this.#watches.of(signal);
  }

  /**
   * The Watch of a post's signal, pinned while the post is made. An
   * already-aborted signal is an early error: thrown, like bad arguments.
   * The listener is added first (Node's EventTarget may run user code),
   * the input checked after: nothing the caller does can come between the
   * check and the queue.
   */
  pin(signal) {
    if (isAborted(signal)) throw abortError(signalReason(signal));
    const watch = this.#watches.of(signal);
    watch.pins++;
    return watch;
  }

  unpin(signal, watch) {
    watch.pins--;
    this.#watches.releaseIfUnused(signal, watch);
  }

  /**
   * The cancel flag a post's task is submitted with: its signal's, made
   * for its first task (undefined without a signal).
   */
  flagOf(post) {
    const watch = post.watch;
    if (watch === undefined) return undefined;
    watch.flag ??= this.#engine.native.cancelFlag();
    return watch.flag;
  }

  /** A post's task was queued: it stops with its signal. */
  watchTask(post) {
    post.watch.tasks++;
  }

  /** A post's task settled. */
  forgetTask(post) {
    if (post.step !== undefined) post.watch.tasks--;
    else this.#watches.forgetTask(post.options.signal, post.watch);
  }

  /** A waiting post left the wait (queued, failed or destroyed). */
  forgetWaiting(post) {
    if (post.step !== undefined) setDelete(post.watch.waiting, post);
    else this.#watches.forgetWaiting(post.options.signal, post.watch, post);
  }

  /** The batch fails when `watch`'s signal fires (until it ends). */
  watchBatch(batch, watch) {
    batch.watch = watch;
    setAdd(watch.batches, batch);
  }

  /** The batch is over for its signal (it ended or failed). */
  forgetBatch(batch) {
    const watch = batch.watch;
    if (watch === undefined) return;
    batch.watch = undefined;
    setDelete(watch.batches, batch);
    this.#watches.releaseIfUnused(batch.signal, watch);
  }

  /**
   * A stream with a `signal`: stopped with an AbortError when it fires (at
   * once if it has; a codec stream is destroyed with it, as node:zlib's
   * are); one listener per signal, however many streams and posts share it.
   */
  watchStream(signal, stream) {
    if (isAborted(signal)) {
      stream[ABORT](abortError(signalReason(signal)));
      return;
    }
    const watch = this.#watches.of(signal);
    setAdd(watch.streams, stream);
    let watched = true;
    const forget = () => {
      if (!watched) return;
      watched = false;
      setDelete(watch.streams, stream);
      this.#watches.releaseIfUnused(signal, watch);
    };
    // Whichever comes first: a hash used through digest() alone never closes.
    stream[WHEN_OVER](forget);
    stream.once('close', forget);
  }

  /**
   * `signal` fired: every post made with it settles or is told to stop, in
   * one pass (one native call for all its queued and running tasks).
   */
  #onAbort(signal, watch) {
    const engine = this.#engine;
    const admission = engine.admission;
    // One error for every task of this abort, as fetch() rejects every
    // request of a signal with its one reason: an Error per task (with its
    // stack) would cost more than the task.
    const aborted = abortError(signalReason(signal));
    const errors = ownArray(0);
    if (setSize(watch.batches) !== 0) engine.batches.failAll(setToArray(watch.batches), aborted);
    // As node:zlib's streams: each destroyed with an AbortError of its own.
    const streams = setToArray(watch.streams);
    for (let i = 0; i < streams.length; i++) streams[i][ABORT](abortError(signalReason(signal)));
    const waiting = setToArray(watch.waiting);
    for (let i = 0; i < waiting.length; i++) {
      const post = waiting[i];
      // As in cancelSteps(): only those still waiting.
      if (!setHas(watch.waiting, post)) continue;
      post.settled = true; // the pump skips it
      admission.waitingCount--;
      const err = engine.fail(post, aborted, false);
      if (err !== undefined) errors[errors.length] = err;
    }
    if (watch.tasks !== 0) {
      // The tasks still queued leave the queue and settle now; the running
      // ones stop at their next chunk and settle with `aborted` when
      // delivered.
      watch.aborted = aborted;
      const removed = engine.native.cancelFlagged(watch.flag);
      for (let i = 0; i < removed.length; i++) {
        const err = engine.settle(removed[i], false, aborted);
        if (err !== undefined) errors[errors.length] = err;
      }
    }
    // Removed tasks and aborted waiting posts free places: let others in.
    if (admission.needsDrain) admission.pump(errors);
    throwLater(errors);
  }

  /**
   * The queued steps of every StepWatch stopped in this job leave the
   * queue in one native pass, and settle with CHUNK_ABORTED; their cancel
   * flags are raised, which stops those running.
   */
  #removeQueued() {
    const watches = this.#toRemove;
    this.#toRemove = undefined;
    const engine = this.#engine;
    const flags = ownArray(watches.length, (i) => watches[i].flag);
    const removed =
      flags.length === 1
        ? engine.native.cancelFlagged(flags[0])
        : engine.native.cancelAllFlagged(flags);
    const errors = ownArray(0);
    for (let i = 0; i < removed.length; i++) {
      const slot = removed[i];
      const err = engine.settle(slot, false, CHUNK_ABORTED);
      if (err !== undefined) errors[errors.length] = err;
    }
    // Removed tasks free places: let others in.
    if (engine.admission.needsDrain) engine.admission.pump(errors);
    throwLater(errors);
  }
}

module.exports = { Aborts };
