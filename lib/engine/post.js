'use strict';
// The records a task travels in from post() to the worker and back.

/**
 * One task of post(), postMessage(), postFile() or a stream's step: what
 * it runs (kernel, extra, input snapshot), how it settles (resolve and
 * reject, null for postMessage, whose result is an event), its options
 * (signal and the Watch pinned for it, run-time limit). The slot table
 * holds it while native code reads `data`; the admission queue holds it
 * while it waits for room. A batch waiting for room is queued as a Post
 * too (`batch` set, the rest unused): posts and batches wait in one line.
 */
class Post {
  message;
  data;
  kernel;
  extra;
  resolve;
  reject;
  signal;
  timeoutMs;
  watch;
  /** The batch this entry of the admission queue stands for, or undefined. */
  batch = undefined;
  /** It settled (aborted, failed) while it waited: the queue skips it. */
  settled = false;
  /** The AbortError it settles with once told to stop (its signal fired while it ran). */
  aborted = undefined;

  constructor(message, data, kernel, extra, resolve, reject, signal, timeoutMs, watch) {
    this.message = message;
    this.data = data;
    this.kernel = kernel;
    this.extra = extra;
    this.resolve = resolve;
    this.reject = reject;
    this.signal = signal;
    this.timeoutMs = timeoutMs;
    this.watch = watch;
  }

  /** The entry of `batch` in the admission queue. */
  static forBatch(batch) {
    const post = new Post(undefined, undefined, 0, undefined, null, null, undefined, undefined, undefined);
    post.batch = batch;
    return post;
  }
}

/**
 * What a task runs with besides its kernel and input (undefined when it is
 * nothing): a params handle, an output limit; for a step of a stream's
 * chunk (lib/stream-tasks.js) the stream's handle, what follows the chunk
 * (0, a flush kind, or LAST), the output after which the step stops, the
 * chunk's number, and whether a closed pool still takes it (the stream's
 * end was asked for before close()); for postFile(), `file` (the input is
 * the path). One shape for all, so that the wire reads them with one
 * hidden class.
 */
function taskExtra(params, maxOutputBytes, stream = undefined, end = 0, budget = 0, seq = 0, file = false, accepted = false) {
  return { params, maxOutputBytes, stream, end, budget, seq, file, accepted };
}

/** The task is a stream's step or a file's read: its input is no message's binary. */
function isChunkOrFile(extra) {
  return extra !== undefined && (extra.stream !== undefined || extra.file);
}

/**
 * The message of a stream's task: its result is the kernel's bytes,
 * whatever the pool's encoding (delivery.js looks for it).
 */
const STREAM_STEP = Object.freeze({ __proto__: null });

module.exports = { Post, taskExtra, isChunkOrFile, STREAM_STEP };
