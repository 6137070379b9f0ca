'use strict';
// The records a task travels in from post() to the worker and back.

/**
 * The options of a task or a batch, read and checked (lib/task-options.js):
 * the kernel and what it runs with (`extra`), its signal, its run-time
 * limit (undefined: none) and, for map(), its concurrency. A task option
 * is a field here, its check in lib/task-options.js, and its row in the
 * wire (wire.js, src/wire/args.rs).
 */
class TaskOptions {
  kernel;
  extra;
  signal;
  timeoutMs;
  concurrency;
  /** postMany()'s results as one Buffer (see Batch.packed). */
  packed;

  constructor(kernel, extra, signal, timeoutMs, concurrency, packed = false) {
    this.kernel = kernel;
    this.extra = extra;
    this.signal = signal;
    this.timeoutMs = timeoutMs;
    this.concurrency = concurrency;
    this.packed = packed;
  }
}

/**
 * One task of post(), postMessage(), postFile() or a stream's step: its
 * message and input snapshot, its options, how it settles (resolve and
 * reject, null for postMessage, whose result is an event) and the Watch
 * pinned for its signal. The slot table holds it while native code reads
 * `data`; the admission queue holds it while it waits for room. A batch
 * waiting for room is queued as a Post too (`batch` set, the rest
 * unused): posts and batches wait in one line.
 */
class Post {
  message;
  data;
  /** @type {TaskOptions} */
  options;
  resolve;
  reject;
  watch;
  /** The batch this entry of the admission queue stands for, or undefined. */
  batch = undefined;
  /** It settled (aborted, failed) while it waited: the queue skips it. */
  settled = false;

  constructor(message, data, options, resolve, reject, watch) {
    this.message = message;
    this.data = data;
    this.options = options;
    this.resolve = resolve;
    this.reject = reject;
    this.watch = watch;
  }

  /** The entry of `batch` in the admission queue. */
  static forBatch(batch) {
    const post = new Post(undefined, undefined, NO_OPTIONS, null, null, undefined);
    post.batch = batch;
    return post;
  }
}

/** Options that say nothing (a batch's entry in the admission queue). */
const NO_OPTIONS = Object.freeze(new TaskOptions(0, undefined, undefined, undefined, undefined));

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
function taskExtra(
  params,
  maxOutputBytes,
  stream = undefined,
  end = 0,
  budget = 0,
  seq = 0,
  file = false,
  accepted = false,
) {
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

module.exports = { TaskOptions, Post, taskExtra, isChunkOrFile, STREAM_STEP };
