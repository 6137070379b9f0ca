'use strict';
// The run side of a stream's tasks (lib/streams/tasks.js is the side its
// Writable writes to): the chunk in flight on a pool thread, a step that
// paused for a full reader and goes on when it reads, the callbacks a full
// reader holds, the output handed on, the failure that ends the stream,
// and a hash's update() run here when its copies would only wait (see the
// top of tasks.js for the whole protocol).

const { ownArray } = require('../base/own-array');
const { LAST, takeChunk, callAll, callbacksOf, failItems } = require('./items');

const nextTick = process.nextTick;

/** What a step did (the core's stream/report.rs Outcome; 0 is done). */
const PAUSED = 1;
const ENDED = 2;
/** Output bytes a stream hands on here (#step) before a turn of the event loop. */
const HERE_MOST = 1 << 20;

class Steps {
  /** What the engine lends (lib/engine/ports.js StreamPort). */
  #port;
  #handle;
  /**
   * The stream's side: output(buffer, last) -> whether its reader has room
   * (`last`: the stream's last chunk wrote it), ended(), failed(err),
   * budget().
   */
  #hooks;
  /** What the Writable side queued, its staging and its debts (shared with StreamTasks). */
  #queue;
  #staging;
  #debts;
  #running = undefined;
  #seq = 0;
  /** A step that paused for a full reader, run again by resume(). */
  #waiting = undefined;
  /**
   * The callbacks of a chunk that ran while its output filled the reader:
   * as Transform holds a write's callback, they wait for resume(), and no
   * chunk starts meanwhile.
   */
  #held = undefined;
  /** The last chunk ran: the stream is over. */
  #done = false;
  /** The kernel's format ended (a decoder): nothing more is read. */
  #ended = false;
  #error = undefined;
  /** The stream was destroyed: writes are called back without an error once no thread reads them, as node:zlib does. */
  #destroyed = false;
  /** Bytes the kernel took in all (bytesWritten). */
  #consumed = 0;
  /**
   * Steps taken over by inline() whose tasks have not settled: while one
   * has not, the event loop has not turned since update() last hashed on
   * the calling thread, and copies would only wait behind it.
   */
  #stale = 0;
  #overCallbacks = undefined;
  /** What stops the steps of the chunk in flight (the engine's StepWatch): one serves chunk after chunk until a step is stopped. */
  #watch = undefined;

  constructor(port, handle, hooks, queue, staging, debts) {
    this.#port = port;
    this.#handle = handle;
    this.#hooks = hooks;
    this.#queue = queue;
    this.#staging = staging;
    this.#debts = debts;
  }

  /** The error that ended the stream, or undefined. */
  get error() {
    return this.#error;
  }

  /** The last chunk ran. */
  get done() {
    return this.#done;
  }

  /** Finished, or failed. */
  get over() {
    return this.#done || this.#error !== undefined;
  }

  /** Input bytes the kernel took in all. */
  get consumed() {
    return this.#consumed;
  }

  /** A chunk is in flight or paused, or its callbacks are held for the reader. */
  get busy() {
    return this.#running !== undefined || this.#held !== undefined;
  }

  /** A chunk is in flight or paused for its reader. */
  get running() {
    return this.#running !== undefined;
  }

  /** Steps taken over by inline() have not settled (see #stale). */
  get stale() {
    return this.#stale !== 0;
  }

  /** `fn()` once the tasks are over (finished or failed); at once if they are. */
  whenOver(fn) {
    if (this.over) fn();
    else (this.#overCallbacks ??= ownArray(0))[this.#overCallbacks.length] = fn;
  }

  resume() {
    if (this.#error !== undefined) return;
    const waiting = this.#waiting;
    const held = this.#held;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      this.#step(waiting, true);
    } else if (held !== undefined) {
      this.#held = undefined;
      this.kick();
      callAll(held, undefined);
    }
  }

  /**
   * Ends the stream with `err` (the first error wins): what is queued is
   * called back now with it (or without an error when `destroyed`, as
   * node:zlib calls back a write its destroy() cut short); the chunk in
   * flight is stopped (its task is cancelled), and called back once its
   * task has settled, when no thread reads it any more.
   */
  fail(err, destroyed = false) {
    if (this.#error !== undefined) return;
    this.#error = err;
    this.#destroyed = destroyed;
    // Held callbacks: their bytes were consumed.
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined) callAll(held, undefined);
    let items = this.#queue.takeAll();
    this.#staging.drop();
    const running = this.#running;
    this.#waiting = undefined;
    if (running !== undefined && running.inFlight) {
      // Its task stops at its next piece; its callbacks wait for it.
      if (running.watch !== undefined) this.#port.cancel(running.watch);
    } else if (running !== undefined) {
      // Paused for its reader: no thread reads it.
      this.#running = undefined;
      items = ownArray(running.items.length + items.length, (i) =>
        i < running.items.length ? running.items[i] : items[i - running.items.length],
      );
    }
    this.#over();
    failItems(items, err, destroyed);
  }

  /** The stream is over: nothing is owed any more; its watchers hear it. */
  #over() {
    this.#port.over(this.#handle);
    const watch = this.#watch;
    if (watch !== undefined) {
      this.#watch = undefined;
      this.#port.releaseWatch(watch);
    }
    this.#debts.repayAll();
    const over = this.#overCallbacks;
    this.#overCallbacks = undefined;
    if (over !== undefined) callAll(over, undefined);
  }

  /** Starts the next chunk if none is in flight and the reader has room. */
  kick() {
    if (
      this.#running !== undefined ||
      this.#held !== undefined ||
      this.#error !== undefined ||
      this.#queue.empty
    )
      return;
    const queue = this.#queue;
    if (this.#ended) {
      // Nothing more is read: each item is consumed as it comes.
      const items = queue.takeAll();
      let last = false;
      for (let i = 0; i < items.length; i++) {
        this.#staging.free(items[i]);
        last ||= items[i].end === LAST;
      }
      this.#debts.repayItems(items);
      if (last) this.#finished();
      callAll(callbacksOf(items), undefined);
      return;
    }
    this.#running = takeChunk(queue, this.#seq++);
    this.#step(this.#running);
  }

  /**
   * Runs steps of `chunk`. After one paused (`again`), the next ones run
   * here while all each does is hand on output its codec made already
   * (blocks taken on idle threads: a task per piece would cost more than
   * the copy), up to HERE_MOST bytes; then one runs on a pool thread.
   */
  #step(chunk, again = false) {
    let task;
    for (let here = 0; again && here < HERE_MOST;) {
      let output;
      try {
        output = this.#port.stepHere(
          this.#handle,
          chunk.input,
          chunk.end,
          this.#hooks.budget(),
          chunk.seq,
        );
      } catch (err) {
        // The stream failed: as a step on a thread would, a turn later.
        task = Promise.reject(err);
        break;
      }
      if (output === undefined) break;
      here += output.length;
      if (!this.#stepped(chunk, output)) return;
    }
    chunk.inFlight = true;
    if (task === undefined) {
      let watch = this.#watch;
      if (watch === undefined || watch.aborted !== undefined)
        watch = this.#watch = this.#port.stepWatch();
      chunk.watch = watch;
      try {
        task = this.#port.step(
          watch,
          chunk.accepted,
          this.#handle,
          chunk.input,
          chunk.end,
          this.#hooks.budget(),
          chunk.seq,
        );
      } catch (err) {
        // Refused at once (the pool closed, the chunk detached): the stream
        // fails as if the task had.
        task = Promise.reject(err);
      }
    }
    task.then(
      (output) => {
        if (this.#stepped(chunk, output)) this.#step(chunk, true);
      },
      (err) => this.#stepFailed(chunk, err),
    );
  }

  /**
   * A step of `chunk` ran and made `output`: handed on, and the chunk
   * called back once done. True when the same chunk steps again now (it
   * paused, and its reader has room).
   */
  #stepped(chunk, output) {
    chunk.inFlight = false;
    if (chunk !== this.#running) {
      this.#stale -= chunk.stale; // taken over by inline()
      return false;
    }
    if (this.#error !== undefined) {
      this.#settleFailed(chunk);
      return false;
    }
    const report = this.#port.report(this.#handle);
    const outcome = report % 4;
    this.#consumed = (report - outcome) / 4;
    const room = this.#hooks.output(output, chunk.end === LAST && outcome !== PAUSED);
    // The output's reader may have destroyed the stream.
    if (this.#error !== undefined) {
      this.#settleFailed(chunk);
      return false;
    }
    if (outcome === PAUSED) {
      if (!room) this.#waiting = chunk;
      return room;
    }
    this.#running = undefined;
    const items = chunk.items;
    let last = false;
    for (let i = 0; i < items.length; i++) {
      // No thread reads it any more: the next updates may fill its block.
      this.#staging.recycle(items[i]);
      last ||= items[i].end === LAST;
    }
    this.#debts.repayItems(items);
    const callbacks = callbacksOf(items);
    if (outcome === ENDED && !this.#ended) {
      this.#ended = true;
      this.#hooks.ended();
    }
    if (last) this.#finished();
    if (!room && !last && !this.#ended) {
      this.#held = callbacks;
      return false;
    }
    this.kick();
    callAll(callbacks, undefined);
    return false;
  }

  #stepFailed(chunk, err) {
    chunk.inFlight = false;
    if (chunk !== this.#running) {
      this.#stale -= chunk.stale; // taken over by inline(): its stream goes on
      return;
    }
    if (this.#error === undefined) {
      this.fail(err);
      this.#hooks.failed(err);
    }
    this.#settleFailed(chunk);
  }

  /**
   * A step of a failed stream's chunk has settled: its callbacks run,
   * unless fail() ran them already (it failed while no thread read the
   * chunk: from the reader, as the step's output was handed on).
   */
  #settleFailed(chunk) {
    if (this.#running !== chunk) return;
    this.#running = undefined;
    failItems(chunk.items, this.#error, this.#destroyed);
  }

  #finished() {
    this.#done = true;
    this.#over();
  }

  /**
   * Hashes on this thread the chunk in flight (from where its task got to),
   * everything queued, the staging block, then `view`. Throws the error
   * that ends the stream.
   */
  inline(view) {
    const running = this.#running;
    this.#staging.close();
    const queued = this.#queue.takeAll();
    const rest = ownArray(0);
    for (let i = 0; i < queued.length; i++)
      if (queued[i].bytes !== 0) rest[rest.length] = queued[i].data;
    rest[rest.length] = view;
    const result =
      running === undefined
        ? this.#port.inline(this.#handle, -1, undefined, rest)
        : this.#port.inline(this.#handle, running.seq, running.input, rest);
    if (typeof result === 'string') {
      const err = this.#port.inlineError(result);
      this.fail(err);
      this.#hooks.failed(err);
      throw err;
    }
    // Everything up to `view` is taken: the task in flight will find its
    // chunk done and do nothing; it is cancelled (out of the queue at once,
    // with what it holds).
    this.#running = undefined;
    this.#waiting = undefined;
    this.#staging.drop();
    const callbacks = ownArray(0);
    if (running !== undefined) {
      running.stale = 1;
      this.#stale++;
      // (A chunk paused for its reader has no task to stop.)
      if (running.inFlight && running.watch !== undefined) this.#port.cancel(running.watch);
      this.#debts.repayItems(running.items);
      callbacksOf(running.items, callbacks);
    }
    this.#debts.repayItems(queued);
    callbacksOf(queued, callbacks);
    this.#hooks.output(result, false);
    if (this.#error !== undefined) throw this.#error;
    // Write callbacks of the chunks taken: later, not inside update().
    if (callbacks.length !== 0) nextTick(callAll, callbacks, undefined);
  }
}

module.exports = { Steps };
