'use strict';
// One postMany() or map(): tasks that share a kernel, its options and one
// cancel flag, and that fail together.
//
// The pool (lib/pool.js) owns the mechanism: slots, submission by chunks
// (`submitMany`, one N-API call per chunk), the queueFull policies,
// settling. A batch says where its tasks' results go: its `sink`, which has
// two methods, `result(index, value)` and `fail(index, error)` (`index` -1:
// the batch as a whole failed, its signal fired). Once a batch has failed,
// its sink hears nothing more; the tasks still in flight settle quietly.
// The sink hears of a failure only once no thread reads the batch's
// messages any more (its running tasks, told to stop, have stopped): a
// settled promise gives the caller its buffers back, as a post's does.

const { ownArray, asPlainArray } = require('./own-array');

class Batch {
  /** How errors name the batch's messages: 'messages' (postMany) or 'iterable' (map). */
  what;
  /** Kernel id, params handle (or undefined), output limit (or undefined). */
  kernel;
  params;
  maxOutputBytes;
  /** Run-time limit of each task in ms; 0: none. */
  timeoutMs;
  /** The native cancel flag every task of the batch carries. */
  flag;
  /** The batch's AbortSignal, and its Watch while the batch is pending. */
  signal;
  watch = undefined;
  /** Where results go (see above). */
  sink;
  /** Snapshots ready to submit: `datas[next .. end)`; task index = `base + i`. */
  datas = undefined;
  base = 0;
  next = 0;
  end = 0;
  /** Data fed while `datas` was not all submitted (a WaitQueue of Segments, made when needed), and its tasks. */
  segments = undefined;
  segmentTasks = 0;
  /** No data will come besides what `datas` holds (postMany: at once). */
  complete = false;
  /** Tasks submitted and not yet settled. */
  outstanding = 0;
  /** The first failure; undefined while the batch goes on. */
  error = undefined;
  /** Its entry in the pool's wait queue while the rest waits for room. */
  waiting = undefined;
  /** Its unsubmitted tasks are counted as pending (it waits, or is being fed). */
  parked = false;
  /** What runs once `outstanding` is 0 after it failed (see the top); undefined: nothing waits. */
  whenStopped = undefined;

  constructor(what, kernel, params, maxOutputBytes, timeoutMs, flag, signal, sink) {
    this.what = what;
    this.kernel = kernel;
    this.params = params;
    this.maxOutputBytes = maxOutputBytes;
    this.timeoutMs = timeoutMs;
    this.flag = flag;
    this.signal = signal;
    this.sink = sink;
  }

  /** Tasks fed and not yet submitted. */
  get unsubmitted() {
    return this.end - this.next + this.segmentTasks;
  }
}

/** postMany()'s sink: every result in its place, then one resolve. */
class AllResults {
  #results;
  #remaining;
  #resolve;
  #reject;

  constructor(count, resolve, reject) {
    // No prototype while it fills (own-array.js): writing a result never
    // consults Array.prototype. The caller gets a plain Array.
    this.#results = ownArray(count);
    this.#remaining = count;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  result(index, value) {
    this.#results[index] = value;
    if (--this.#remaining === 0) this.#resolve(asPlainArray(this.#results));
  }

  fail(_index, error) {
    this.#results = undefined;
    this.#reject(error);
  }
}

/**
 * A name for errors about the elements of a batch, made only when an error
 * is (errors.js's label()): set `name.at` to the element's index first.
 * `selected`: the pool has its own `select`, which the name then shows.
 */
function elementNamer(what, selected) {
  const name = () => (selected ? `select(${what}[${name.at}])` : `${what}[${name.at}]`);
  name.at = 0;
  return name;
}

module.exports = { Batch, AllResults, elementNamer };
