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

const { ownArray, asPlainArray } = require('../base/own-array');
const { taskError, makeError } = require('../errors');
const { TASK_CODES } = require('../addon/binding');

const BUFFER_MAX_LENGTH = require('node:buffer').constants.MAX_LENGTH;

/** The error of a packed result of another length than the others (the native side's words too). */
function unequalLength(expected, got) {
  return taskError(TASK_CODES.unequalLength, `${expected} ${got}`, false);
}

/** Packed results longer than any Buffer Node can make. */
function tooLarge(limit) {
  return taskError(TASK_CODES.bufferTooLarge, String(limit), false);
}

class Batch {
  /** How errors name the batch's messages: 'messages' (postMany) or 'iterable' (map). */
  what;
  /** Kernel id, params handle (or undefined), output limit (or undefined). */
  kernel;
  params;
  maxOutputBytes;
  /** Run-time limit of each task in ms; 0: none. */
  timeoutMs;
  /** postMany({ packed: true }): the results go to the sink's `packed()` as bytes. */
  packed = false;
  /**
   * Its results are small and of one length (a hash kernel's): several
   * messages may then run as one native task (see groupSize()). `bytes`
   * and `fed`: input bytes and messages fed so far, for their average.
   */
  groupable = false;
  /** Its kernel's outputs have lengths of their own, told after a shared task's outputs. */
  sized = false;
  bytes = 0;
  fed = 0;
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
 * postMany({ packed: true })'s sink: every result copied into one Buffer,
 * in the order of the messages, then one resolve with it. All results have
 * one length (the first to arrive sets it), so result `i` is bytes
 * `i * length` to `(i + 1) * length`.
 */
class PackedResults {
  #count;
  #length = -1;
  #buffer = undefined;
  #remaining;
  #resolve;
  #reject;

  constructor(count, resolve, reject) {
    this.#count = count;
    this.#remaining = count;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /**
   * The results of messages `index` to `index + count - 1`, of one length,
   * back to back in `bytes` from `start` to `end`. Returns the error that
   * fails the batch when their length is not the others'.
   */
  packed(index, count, bytes, start, end) {
    const length = (end - start) / count;
    if (this.#length !== length) {
      if (this.#length !== -1) return unequalLength(this.#length, length);
      const total = length * this.#count;
      if (total > BUFFER_MAX_LENGTH) return tooLarge(BUFFER_MAX_LENGTH);
      try {
        this.#buffer = Buffer.allocUnsafeSlow(total);
      } catch {
        return makeError(
          Error,
          'ERR_MEMORY_ALLOCATION_FAILED',
          'Failed to allocate memory for the packed results',
        );
      }
      this.#length = length;
    }
    bytes.copy(this.#buffer, index * length, start, end);
    this.#remaining -= count;
    if (this.#remaining === 0) this.#resolve(this.#buffer);
    return undefined;
  }

  fail(_index, error) {
    this.#buffer = undefined;
    this.#reject(error);
  }
}

/** Input bytes a packed task takes, about (several messages as one task). */
const GROUP_BYTES = 16 * 1024;
/** Most messages a packed task takes. */
const MAX_GROUP = 64;
/** Fewest packed tasks a batch is cut into, so that every thread gets some. */
const MIN_GROUPS = 8;

/**
 * Messages per native task for a chunk of `count` messages of a batch:
 * one each unless its results all have one length; else as many as make
 * GROUP_BYTES at the batch's average size so far, so that the queue, the
 * clock reads and the completion are paid once per group of tiny ones; at
 * most MAX_GROUP, and few enough for MIN_GROUPS tasks per chunk.
 */
function groupSize(batch, count) {
  if (!batch.groupable) return 1;
  const bySize = Math.floor((GROUP_BYTES * batch.fed) / Math.max(batch.bytes, 1));
  return Math.max(1, Math.min(MAX_GROUP, bySize, Math.ceil(count / MIN_GROUPS)));
}

/** groupSize() for `count` records of `bytes` in all: their own average, not the batch's. */
function groupOf(batch, count, bytes) {
  if (!batch.groupable) return 1;
  const bySize = Math.floor((GROUP_BYTES * count) / Math.max(bytes, 1));
  return Math.max(1, Math.min(MAX_GROUP, bySize, Math.ceil(count / MIN_GROUPS)));
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

module.exports = { Batch, AllResults, PackedResults, groupSize, groupOf, elementNamer };
