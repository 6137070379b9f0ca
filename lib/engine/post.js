'use strict';
// The records a task travels in from post() to the worker and back.

/**
 * The options of a task or a batch, read and checked (lib/args/task-options.js):
 * the kernel and what it runs with (`extra`), its signal, its run-time
 * limit (undefined: none) and, for map(), its concurrency. A task option
 * is a field here, its check in lib/args/task-options.js, and its row in the
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
 * reject, null for postMessage, whose result is an event), the Watch
 * pinned for its signal (for a stream's step, the stream's StepWatch,
 * lib/engine/aborts.js) and, for a stream's step, its Step. The slot table holds it while native code reads
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
  /** @type {Step | undefined} What a stream's step runs with (Engine.step()); undefined for a post. */
  step;
  /**
   * Its result is the kernel's output bytes, whatever the pool's
   * encoding, and its promise resolves with them alone (a stream's step,
   * a drop-in one-shot's task).
   */
  bytes;

  constructor(message, data, options, resolve, reject, watch, step = undefined) {
    this.message = message;
    this.data = data;
    this.options = options;
    this.resolve = resolve;
    this.reject = reject;
    this.watch = watch;
    this.step = step;
    this.bytes = step !== undefined;
  }

  /**
   * Its input is a message's binary, checked against maxInputBytes: not a
   * stream's chunk, not a one-shot's input (node:zlib's, which no pool
   * option bounds), not a path.
   */
  get inputIsMessage() {
    const extra = this.options.extra;
    return !this.bytes && (extra === undefined || !extra.file);
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
 * nothing): a params handle, an output limit; for postFile(), `file` (the
 * input is the path). One shape for all, so that the wire reads them with
 * one hidden class.
 */
function taskExtra(params, maxOutputBytes, file = false) {
  return { params, maxOutputBytes, file };
}

/**
 * A step of a stream's chunk (lib/streams/tasks.js): the stream's handle,
 * what follows the chunk (0, a flush kind, or -1: the end), the output
 * after which the step stops, the chunk's number, and whether a closed
 * pool still takes it (the stream's end was asked for before close()).
 * Its result is the kernel's bytes, whatever the pool's encoding.
 */
class Step {
  handle;
  end;
  budget;
  seq;
  accepted;

  constructor(handle, end, budget, seq, accepted) {
    this.handle = handle;
    this.end = end;
    this.budget = budget;
    this.seq = seq;
    this.accepted = accepted;
  }
}

module.exports = { TaskOptions, Post, Step, taskExtra };
