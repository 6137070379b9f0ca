'use strict';
// The tasks of one stream of the pool (createHash, createGzip...): its
// chunks on their way to the pool's threads, its output and callbacks on
// the way back. The kernel's state stays in Rust between tasks (the core's
// stream/, which also says how a chunk may take several steps).
//
// The contract kept is Node's Writable one: a write's callback runs once
// its bytes were consumed (a task ran over them and its output was handed
// on) and no thread will read them again; the caller may then reuse the
// memory. So a write waits for its task, and the Writable's own buffer
// (its highWaterMark) is what holds the writes that come meanwhile: they
// reach `write()` together (`_writev`) and go as one task. And, as a
// Transform holds a write's callback while its reader is full, a chunk
// whose output filled the reader holds its callbacks (and starts nothing)
// until the reader reads.
//
// One chunk of a stream is in flight at a time, so its chunks run in order,
// each on whichever thread is free. A chunk is every item queued up to a
// flush or the end, read in place as one input. A step of a chunk stops once
// its output passes the reader's room (`budget`): the output is handed on,
// and the same chunk runs again where it stopped, at once if the reader
// still has room, else when it reads (`resume()`). Memory stays near the
// reader's highWaterMark plus one piece of output, whatever the ratio.
//
// A hash's `update()` (node:crypto's is synchronous: its caller reuses the
// buffer as soon as it returns) copies the bytes into staging
// (lib/streams/staging.js), as much as its cap allows. Past the cap, or
// while a step taken over that way has not settled (a synchronous loop:
// the pool cannot be handed anything before the event loop turns), the
// hash runs on the calling thread, taking over the chunk in flight (Rust
// stops it at its next piece), so memory stays bounded whatever the caller
// does.
//
// What the pool's close() still waits for (work given while it was open)
// is counted in lib/streams/debts.js; the tasks say what they owe and what
// ran.

const { ownArray } = require('../base/own-array');
const { WaitQueue } = require('../base/wait-queue');
const { LAST, Item, takeChunk, callAll, callbacksOf, failItems } = require('./items');
const { writtenItems, updateBytes } = require('./input');
const { StreamDebts } = require('./debts');
const { Staging } = require('./staging');

const nextTick = process.nextTick;

/** What a step did (the core's stream/report.rs Outcome; 0 is done). */
const PAUSED = 1;
const ENDED = 2;
/** Output bytes a stream hands on here (#step) before a turn of the event loop. */
const HERE_MOST = 1 << 20;

class StreamTasks {
  /** What the engine lends (lib/engine/ports.js StreamPort). */
  #port;
  #handle;
  /**
   * The stream's side: output(buffer, last) -> whether its reader has room
   * (`last`: the stream's last chunk wrote it), ended(), failed(err),
   * budget().
   */
  #hooks;
  /** The error of a write after finish() (the owner's: ERR_CRYPTO_HASH_FINALIZED for a hash). */
  #lateWrite;
  #queue = new WaitQueue();
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
  /** finish() was called: nothing more is queued. */
  #sealed = false;
  /** The last chunk ran: the stream is over. */
  #done = false;
  /** The kernel's format ended (a decoder): nothing more is read. */
  #ended = false;
  #error = undefined;
  /** The stream was destroyed: writes are called back without an error once no thread reads them, as node:zlib does. */
  #destroyed = false;
  /** Bytes the kernel took in all (bytesWritten). */
  #consumed = 0;
  /** update()'s copies, not yet hashed. */
  #staging;
  /**
   * Steps taken over by #inline whose tasks have not settled: while one
   * has not, the event loop has not turned since update() last hashed on
   * the calling thread, and copies would only wait behind it.
   */
  #stale = 0;
  /** The end comes with the write being made (endWith()): that write's chunk is the last. */
  #endAhead = false;
  /**
   * The end taken early, with the last write (endWith(), writeWithEnd()):
   * what finish() waits for then, `{ done, err, waiting }` (the callbacks
   * that wait for it, in order).
   */
  #early = undefined;
  /** What the pool's close() waits for from this stream. */
  #debts;
  #overCallbacks = undefined;

  constructor(port, handle, hooks, lateWrite) {
    this.#port = port;
    this.#handle = handle;
    this.#hooks = hooks;
    this.#lateWrite = lateWrite;
    this.#debts = new StreamDebts(port, this);
    this.#staging = new Staging(this.#queue, this.#debts, () => this.#kick());
  }

  /** Nothing more is taken (finished, failed or destroyed). */
  get closed() {
    return this.#sealed || this.#error !== undefined;
  }

  get error() {
    return this.#error;
  }

  /** The tasks are over: finished, or failed. */
  get over() {
    return this.#done || this.#error !== undefined;
  }

  /** Input bytes the kernel took in all. */
  get consumed() {
    return this.#consumed;
  }

  /** The pool takes new work: a write made now is accepted. */
  get accepting() {
    return this.#port.open();
  }

  /** Nothing is queued, running or waiting for the reader. */
  get idle() {
    return (
      this.#running === undefined &&
      this.#held === undefined &&
      this.#queue.empty &&
      !this.#sealed &&
      this.#error === undefined
    );
  }

  /**
   * `end(chunk)` of an idle stream: runs `write()` (the Writable's end, whose
   * chunk reaches write() at once) with the end taken along, so that chunk
   * and the end go as one task (an HTTP body compressed whole: one task per
   * response, not two). finish() then waits for it.
   */
  endWith(write) {
    this.#endAhead = true;
    try {
      return write();
    } finally {
      this.#endAhead = false;
    }
  }

  /**
   * The Writable's last write once end() was called: node:zlib finishes
   * its stream with that write (its flush raised to the finishing one), so
   * its callback comes after the end's output. Queued with the end right
   * behind it, and `callback` once the end is through; finish() then
   * waits for the same end.
   */
  writeWithEnd(chunks, callback, flushKind, flushEach) {
    // An end asked for after the pool's close() is refused, while writes
    // given before it still run: they go as writes of their own, called
    // back without the end's error (finish() then fails the end).
    if (!this.#debts.finishAccepted) {
      this.write(chunks, callback, flushKind, flushEach);
      return;
    }
    let refused = false;
    this.#endAhead = true;
    try {
      this.write(
        chunks,
        (err) => {
          // Only a refusal calls back here; a write taken is called back with the end.
          if (err !== undefined && err !== null && this.#early === undefined) {
            refused = true;
            callback(err);
          }
        },
        flushKind,
        flushEach,
      );
    } finally {
      this.#endAhead = false;
    }
    const early = this.#early;
    if (refused) return;
    if (early === undefined)
      callback(); // nothing to write (an empty chunk of a codec's own)
    else if (early.done) nextTick(callback, early.err);
    else early.waiting[early.waiting.length] = callback;
  }

  /** `fn()` once the tasks are over (finished or failed); at once if they are. */
  whenOver(fn) {
    if (this.#done || this.#error !== undefined) fn();
    else (this.#overCallbacks ??= ownArray(0))[this.#overCallbacks.length] = fn;
  }

  /** write() was called (before its chunk reaches `write`): accepted while the pool is open. */
  noteWrite() {
    if (this.#error === undefined) this.#debts.noteWrite();
  }

  /** A noted write the Writable refused at once (a bad chunk): no debt after all. */
  unnoteWrite() {
    this.#debts.unnoteWrite();
  }

  /** The end was asked for (end(), digest()): accepted while the pool is open. True when this noted it. */
  finishing() {
    return !this.#done && this.#error === undefined && this.#debts.noteFinish();
  }

  /** A noted end the Writable refused at once: no debt after all. */
  unfinishing() {
    this.#debts.unnoteFinish();
  }

  /**
   * A Writable's chunks ({ chunk, encoding } each); `flushKind(chunk)`: the
   * flush a chunk marks, or -1. Checked all first (the callback gets the
   * first refusal), then queued; `callback` once they were consumed.
   * `flushEach`: a flush kind each chunk of data is followed by (0: none).
   */
  write(chunks, callback, flushKind, flushEach = 0) {
    // How many of these chunks were written while the pool was open.
    const accepted = this.#debts.takeWrites(chunks.length);
    if (this.#sealed || this.#error !== undefined) {
      this.#debts.repay(accepted);
      callback(this.#error ?? this.#lateWrite());
      return;
    }
    let items;
    try {
      items = writtenItems(chunks, flushKind, accepted);
    } catch (err) {
      this.#debts.repay(accepted);
      callback(err);
      return;
    }
    if (flushEach !== 0) items = flushedItems(items, flushEach);
    if (items.length === 0) {
      callback();
      return;
    }
    this.#staging.close();
    // One callback for the whole write; its accepted items are repaid one by one.
    items[items.length - 1].callback = callback;
    for (let i = 0; i < items.length; i++) this.#queue.push(items[i]);
    if (this.#endAhead) {
      this.#endAhead = false;
      this.#finishEarly();
    }
    this.#kick();
  }

  /** The end, queued behind the last write (endWith()); finish() waits for it. */
  #finishEarly() {
    const early = { done: false, err: undefined, waiting: ownArray(0) };
    this.finish((err) => {
      early.done = true;
      early.err = err;
      const waiting = early.waiting;
      early.waiting = ownArray(0);
      for (let i = 0; i < waiting.length; i++) waiting[i](err);
    });
    this.#early = early;
  }

  /**
   * update(data[, inputEncoding]): copied and queued, or hashed here (see
   * the top of this file). Throws the stream's error.
   */
  update(data, inputEncoding) {
    const view = updateBytes(data, inputEncoding);
    if (view.byteLength === 0) return;
    const accepted = this.#port.open();
    if (this.#stale !== 0 || !this.#staging.copy(view, accepted)) this.#inline(view);
  }

  /**
   * A new stream handle whose state is this stream's after everything it
   * was given, then `tail` (hash.copy()): the chunk in flight, the queue
   * and the staging are first hashed here, as by an update() past its cap,
   * then the kernel's state is copied. Throws the stream's error, or the
   * pool's once it takes no work.
   */
  fork(tail) {
    if (this.#error !== undefined) throw this.#error;
    // A copy on a pool that takes no work could never be digested.
    if (!this.#port.open())
      throw this.#port.refusal(this.#running !== undefined || !this.#queue.empty);
    this.#staging.close();
    if (this.#running !== undefined || !this.#queue.empty || tail.byteLength !== 0)
      this.#inline(tail);
    return this.#port.fork(this.#handle);
  }

  /** The end: `callback(err)` once the last chunk ran (its output handed on first). */
  finish(callback) {
    const early = this.#early;
    if (early !== undefined) {
      // Taken with the last write already.
      this.#early = undefined;
      if (early.done) callback(early.err);
      else early.waiting[early.waiting.length] = callback;
      return;
    }
    if (this.#error !== undefined) {
      callback(this.#error);
      return;
    }
    this.finishing();
    this.#sealed = true;
    this.#staging.close();
    // (The debt of an accepted end was taken by finishing().)
    this.#queue.push(new Item(undefined, 0, LAST, callback, 0, this.#debts.finishAccepted));
    this.#kick();
  }

  /** The reader wants more: a step that paused for it goes on, or held callbacks run. */
  resume() {
    if (this.#error !== undefined) return;
    const waiting = this.#waiting;
    const held = this.#held;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      this.#step(waiting, true);
    } else if (held !== undefined) {
      this.#held = undefined;
      this.#kick();
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
      running.controller.abort(err);
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
    this.#debts.repayAll();
    const over = this.#overCallbacks;
    this.#overCallbacks = undefined;
    if (over !== undefined) callAll(over, undefined);
  }

  /** Starts the next chunk if none is in flight and the reader has room. */
  #kick() {
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
      try {
        task = this.#port.step(
          chunk.controller.signal,
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
      this.#stale -= chunk.stale; // taken over by #inline
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
    this.#kick();
    callAll(callbacks, undefined);
    return false;
  }

  #stepFailed(chunk, err) {
    chunk.inFlight = false;
    if (chunk !== this.#running) {
      this.#stale -= chunk.stale; // taken over by #inline: its stream goes on
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
  #inline(view) {
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
      running.controller.abort();
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

/** `items` with a flush of `kind` after each one of data (node:zlib's `flush` option). */
function flushedItems(items, kind) {
  const out = ownArray(0);
  for (let i = 0; i < items.length; i++) {
    out[out.length] = items[i];
    if (items[i].data !== undefined)
      out[out.length] = new Item(undefined, 0, kind, undefined, 0, false);
  }
  return out;
}

module.exports = { StreamTasks };
