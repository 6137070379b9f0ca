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
const { LAST, Item } = require('./items');
const { writtenItems, updateBytes } = require('./input');
const { StreamDebts } = require('./debts');
const { Staging } = require('./staging');
const { Steps } = require('./steps');

const nextTick = process.nextTick;

/**
 * The end taken early (StreamTasks.#early): whether it is done, its error,
 * and the callbacks that wait for it (an Array once one does).
 * @typedef {{ done: boolean, err: any, waiting: Function[] | undefined }} Early
 */

/** `callback` waits for the early end, after those already waiting. */
function waitEarly(early, callback) {
  const waiting = (early.waiting ??= ownArray(0));
  waiting[waiting.length] = callback;
}

class StreamTasks {
  /** What the engine lends (lib/engine/ports.js StreamPort). */
  #port;
  #handle;
  /** The error of a write after finish() (the owner's: ERR_CRYPTO_HASH_FINALIZED for a hash). */
  #lateWrite;
  #queue = new WaitQueue();
  /** finish() was called: nothing more is queued. */
  #sealed = false;
  /** update()'s copies, not yet hashed. */
  #staging;
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
  /** The run side (lib/streams/steps.js). */
  #steps;

  /**
   * `hooks`, the stream's side: output(buffer, last) -> whether its reader
   * has room (`last`: the stream's last chunk wrote it), ended(),
   * failed(err), budget().
   */
  constructor(port, handle, hooks, lateWrite) {
    this.#port = port;
    this.#handle = handle;
    this.#lateWrite = lateWrite;
    this.#debts = new StreamDebts(port, this);
    this.#staging = new Staging(this.#queue, this.#debts, () => this.#steps.kick());
    this.#steps = new Steps(port, handle, hooks, this.#queue, this.#staging, this.#debts);
  }

  get closed() {
    return this.#sealed || this.#steps.error !== undefined;
  }

  get error() {
    return this.#steps.error;
  }

  /** The tasks are over: finished, or failed. */
  get over() {
    return this.#steps.over;
  }

  /** Input bytes the kernel took in all. */
  get consumed() {
    return this.#steps.consumed;
  }

  /** The pool takes new work: a write made now is accepted. */
  get accepting() {
    return this.#port.open();
  }

  /** Nothing is queued, running or waiting for the reader. */
  get idle() {
    return (
      !this.#steps.busy && this.#queue.empty && !this.#sealed && this.#steps.error === undefined
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
    else waitEarly(early, callback);
  }

  /** `fn()` once the tasks are over (finished or failed); at once if they are. */
  whenOver(fn) {
    this.#steps.whenOver(fn);
  }

  /** write() was called (before its chunk reaches `write`): accepted while the pool is open. */
  noteWrite() {
    if (this.#steps.error === undefined) this.#debts.noteWrite();
  }

  /** A noted write the Writable refused at once (a bad chunk): no debt after all. */
  unnoteWrite() {
    this.#debts.unnoteWrite();
  }

  /** The end was asked for (end(), digest()): accepted while the pool is open. True when this noted it. */
  finishing() {
    return !this.#steps.over && this.#debts.noteFinish();
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
    if (this.#sealed || this.#steps.error !== undefined) {
      this.#debts.repay(accepted);
      callback(this.#steps.error ?? this.#lateWrite());
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
    this.#steps.kick();
  }

  /** The end, queued behind the last write (endWith()); finish() waits for it. */
  #finishEarly() {
    /** @type {Early} */
    const early = { done: false, err: undefined, waiting: undefined };
    this.finish((err) => {
      early.done = true;
      early.err = err;
      const waiting = early.waiting;
      early.waiting = undefined;
      if (waiting !== undefined) for (let i = 0; i < waiting.length; i++) waiting[i](err);
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
    if (this.#steps.stale || !this.#staging.copy(view, accepted)) this.#steps.inline(view);
  }

  /**
   * A new stream handle whose state is this stream's after everything it
   * was given, then `tail` (hash.copy()): the chunk in flight, the queue
   * and the staging are first hashed here, as by an update() past its cap,
   * then the kernel's state is copied. Throws the stream's error, or the
   * pool's once it takes no work.
   */
  fork(tail) {
    if (this.#steps.error !== undefined) throw this.#steps.error;
    // A copy on a pool that takes no work could never be digested.
    if (!this.#port.open()) throw this.#port.refusal(this.#steps.running || !this.#queue.empty);
    this.#staging.close();
    if (this.#steps.running || !this.#queue.empty || tail.byteLength !== 0)
      this.#steps.inline(tail);
    return this.#port.fork(this.#handle);
  }

  /** The end: `callback(err)` once the last chunk ran (its output handed on first). */
  finish(callback) {
    const early = this.#early;
    if (early !== undefined) {
      // Taken with the last write already.
      this.#early = undefined;
      if (early.done) callback(early.err);
      else waitEarly(early, callback);
      return;
    }
    if (this.#steps.error !== undefined) {
      callback(this.#steps.error);
      return;
    }
    this.finishing();
    this.#sealed = true;
    this.#staging.close();
    // (The debt of an accepted end was taken by finishing().)
    this.#queue.push(new Item(undefined, 0, LAST, callback, 0, this.#debts.finishAccepted));
    this.#steps.kick();
  }

  /** The reader wants more: a step that paused for it goes on, or held callbacks run. */

  /** The reader wants more: a step that paused for it goes on, or held callbacks run. */
  resume() {
    this.#steps.resume();
  }

  /**
   * Ends the stream with `err` (the first error wins); `destroyed`: the
   * writes are called back without it, as node:zlib's destroy() does (see
   * Steps.fail).
   */
  fail(err, destroyed = false) {
    this.#steps.fail(err, destroyed);
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
