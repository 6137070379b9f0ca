'use strict';
// AbortSignal bookkeeping: per signal one Watch, with one 'abort' listener
// shared by all of the signal's pending tasks, waiting posts, batches and
// streams (an EventTarget listener per task would cost more than the task,
// and a listener per stream makes Node warn past ten).
//
// What is used of an AbortSignal is captured at load: a signal's own (or
// replaced) `aborted`, `reason`, addEventListener and removeEventListener
// are never called. Node's EventTarget methods still read the signal's
// `constructor`, which a caller may have made a getter: they run in post()
// before the input is checked, and their failures are contained.

const { invalidArgType } = require('../errors');
const { uncurryThis, getter } = require('../base/intrinsics');
const {
  newMap,
  newSet,
  mapGet,
  mapSet,
  mapDelete,
  setDelete,
  setSize,
} = require('../base/collections');

const addListener = uncurryThis(EventTarget.prototype.addEventListener);
const removeListener = uncurryThis(EventTarget.prototype.removeEventListener);
const signalAborted = getter(AbortSignal.prototype, 'aborted');
/** The signal's reason, read with the engine's getter. */
const signalReason = getter(AbortSignal.prototype, 'reason');
/** Listener options without a prototype: no inherited getter is consulted. */
const ONCE = Object.freeze({ __proto__: null, once: true });

/** Whether `signal` (a real AbortSignal, or throws ERR_INVALID_ARG_TYPE) has fired. */
function isAborted(signal) {
  try {
    return signalAborted(signal);
  } catch {
    // Not an AbortSignal, whatever its prototype says.
    throw invalidArgType('options.signal', 'an instance of AbortSignal', signal);
  }
}

/** The pending work of one signal. */
class Watch {
  /** Its posts queued or running (each carries `flag`). */
  tasks = 0;
  /**
   * The native cancel flag its posts' tasks share (made for the first):
   * the signal cancels them all with it, nothing being kept per task.
   */
  flag = undefined;
  /** The AbortError its tasks settle with once it fired (a running one, when it is delivered). */
  aborted = undefined;
  /** Posts still waiting for room (queueFull: 'wait'). */
  waiting = newSet();
  /** Batches (postMany, map) not yet over. */
  batches = newSet();
  /** Streams (createGzip, createHash...) not yet closed: destroyed when the signal fires. */
  streams = newSet();
  /** Posts being queued right now (the listener must stay while they are). */
  pins = 0;
  /** The listener is on the signal (adding it can fail on a tampered signal). */
  listening = false;
  listener;
  constructor(listener) {
    this.listener = listener;
  }

  get empty() {
    return (
      this.tasks === 0 &&
      setSize(this.waiting) === 0 &&
      setSize(this.batches) === 0 &&
      setSize(this.streams) === 0 &&
      this.pins === 0
    );
  }
}

/** The Watches of one pool, by signal. */
class Watches {
  /** @type {Map<AbortSignal, Watch>} */
  #bySignal = newMap();
  #onAbort;

  /** `onAbort(signal, watch)` runs when a watched signal fires. */
  constructor(onAbort) {
    this.#onAbort = onAbort;
  }

  /**
   * The Watch of `signal`, made on first use, with its one listener added
   * (again, if an earlier attempt failed: a post never joins a Watch
   * nothing listens for while the signal can be listened to).
   */
  of(signal) {
    let watch = mapGet(this.#bySignal, signal);
    if (watch === undefined) {
      watch = new Watch(() => {
        // Whichever Watch is the signal's now: a listener left behind by a
        // removal Node refused (a tampered `constructor`) still serves the
        // signal's later posts. Gone from the map first: whatever runs next
        // sees a fired signal.
        const current = mapGet(this.#bySignal, signal);
        if (current === undefined) return;
        mapDelete(this.#bySignal, signal);
        this.#onAbort(signal, current);
      });
      // In the map first: a post made by user code running inside
      // addEventListener (a `constructor` getter) shares this Watch.
      mapSet(this.#bySignal, signal, watch);
    }
    if (!watch.listening) {
      try {
        addListener(signal, 'abort', watch.listener, ONCE);
        watch.listening = true;
      } catch (err) {
        // Posts made by user code inside addEventListener may have joined
        // this Watch: it stays, and the next post tries the listener again.
        if (watch.empty && mapGet(this.#bySignal, signal) === watch)
          mapDelete(this.#bySignal, signal);
        throw err;
      }
    }
    return watch;
  }

  /** Drops the listener of `signal` once no task or waiting post uses it. */
  releaseIfUnused(signal, watch) {
    if (watch.empty && mapGet(this.#bySignal, signal) === watch) {
      mapDelete(this.#bySignal, signal);
      try {
        removeListener(signal, 'abort', watch.listener);
      } catch {
        // A signal whose `constructor` was tampered with: Node refuses to
        // remove the listener. It stays, and finds no Watch if it fires.
      }
    }
  }

  /** A task of `watch` settled. */
  forgetTask(signal, watch) {
    watch.tasks--;
    this.releaseIfUnused(signal, watch);
  }

  /** A waiting post left the wait (queued, failed or destroyed). */
  forgetWaiting(signal, watch, entry) {
    setDelete(watch.waiting, entry);
    this.releaseIfUnused(signal, watch);
  }
}

module.exports = { Watches, isAborted, signalReason, addListener, removeListener, ONCE };
