'use strict';
// The pool's one lifecycle, on the JavaScript side (ARCHITECTURE.md,
// "Lifecycle", has the table across the three layers):
//
//   OPEN ──close()──> CLOSING ──accepted work in──> CLOSED ──threads out──> terminated
//     │                  │                            │
//     └──────────────────┴────────destroy()───────> DESTROYED ──threads out──> terminated
//
// CLOSING: close() was called while accepted work was still coming (posts
// waiting for room, batches being fed, streams whose end was asked for):
// the native pool is told to close once none is left. CLOSED: the native
// pool takes no task and runs the queued ones. DESTROYED: the native pool
// dropped its queue and stopped its running kernels. `terminated`: every
// native thread has exited (the last delivery said so), in either state.

const { NativePromise } = require('../base/intrinsics');

const OPEN = 0;
const CLOSING = 1;
const CLOSED = 2;
const DESTROYED = 3;

class Lifecycle {
  /** @type {import('./engine').Engine} */
  #engine;
  #state = OPEN;
  /** Every native thread has exited. */
  terminated = false;
  #terminationPromise = null;
  #resolveTermination = null;
  /**
   * Streams with work given while the pool was open (writes, updates, an
   * end) not yet done: close() waits for them (lib/streams/tasks.js).
   */
  #streamsOwed = 0;
  /** Those of them collected first: close() waits for them no longer. */
  #abandoned = new FinalizationRegistry(() => {
    this.#streamsOwed--;
    this.closeIfIdle();
  });

  /** @param {import('./engine').Engine} engine */
  constructor(engine) {
    this.#engine = engine;
  }

  /** close() or destroy() was called: no new task is taken. */
  get closed() {
    return this.#state !== OPEN;
  }

  get destroyed() {
    return this.#state === DESTROYED;
  }

  /** Accepted work is still coming: posts wait for room, batches are fed, streams are owed. */
  #busy() {
    const engine = this.#engine;
    return (
      !engine.admission.nobodyWaits() || !engine.batches.feedingEmpty() || this.#streamsOwed !== 0
    );
  }

  close() {
    if (this.#state !== OPEN) return;
    if (this.#busy()) this.#state = CLOSING;
    else this.#closeNative();
  }

  /** CLOSING goes on to CLOSED once no accepted work is left. */
  closeIfIdle() {
    if (this.#state === CLOSING && !this.#busy()) this.#closeNative();
  }

  #closeNative() {
    this.#state = CLOSED;
    this.#engine.native.close();
  }

  /** Enters DESTROYED; false if the pool already was. */
  destroy() {
    if (this.#state === DESTROYED) return false;
    this.#state = DESTROYED;
    return true;
  }

  /** A stream was given work (its tasks' object `tasks`): close() waits for it. */
  holdStream(tasks) {
    this.#streamsOwed++;
    // A stream dropped with work it was given (nobody read it, nobody
    // destroyed it) must not hold close() forever.
    this.#abandoned.register(tasks, undefined, tasks);
  }

  /** The stream's work is done. */
  releaseStream(tasks) {
    this.#abandoned.unregister(tasks);
    this.#streamsOwed--;
    this.closeIfIdle();
  }

  /** The native side reported that its last thread exited. */
  onTerminated() {
    this.terminated = true;
    this.#engine.native.join(); // every thread has already exited: returns at once
    if (this.#resolveTermination !== null) this.#resolveTermination();
  }

  whenTerminated() {
    if (this.#terminationPromise === null) {
      this.#terminationPromise = new NativePromise((resolve) => {
        if (this.terminated) resolve();
        else this.#resolveTermination = resolve;
      });
    }
    return this.#terminationPromise;
  }
}

module.exports = { Lifecycle };
