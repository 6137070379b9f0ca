'use strict';
// What the pool's close() still waits for from one stream.
//
// The pool's close() waits for the work a stream was given before it (the
// writes made, the updates, the end asked for), and refuses the rest: an
// item is `accepted` when it came while the pool was open, and the stream
// holds the pool open (`port.hold()`) while it has accepted work left. A
// write counts from the moment it is made (`noted`), not when the Writable
// hands it to the tasks, since the pool may close in between. The tasks
// (lib/streams/tasks.js) only say what they owe and what ran; the counting
// is kept here, in one place.

/**
 * `stream.write()` (Writable's), noted for the pool's close() when the
 * Writable will take it (not ended, destroyed or errored: those it refuses
 * before any reaches `write`); a write it throws for is no debt.
 */
const writableWrite = require('node:stream').Writable.prototype.write;
function noted(stream, tasks, chunk, encoding, callback) {
  const taken = !stream.writableEnded && !stream.destroyed && stream.errored === null;
  if (taken) tasks.noteWrite();
  try {
    return writableWrite.call(stream, chunk, encoding, callback);
  } catch (err) {
    if (taken) tasks.unnoteWrite();
    throw err;
  }
}

/**
 * `stream.end([chunk])` (Writable's), its chunk and its end noted for the
 * pool's close() (as noted() notes a write); an end the Writable throws
 * for (a bad chunk) leaves no debt.
 */
const writableEnd = require('node:stream').Writable.prototype.end;
function notedEnd(stream, tasks, chunk, encoding, callback) {
  const writes = chunk !== undefined && chunk !== null && typeof chunk !== 'function';
  const taken = writes && !stream.writableEnded && !stream.destroyed && stream.errored === null;
  if (taken) tasks.noteWrite();
  const finishing = tasks.finishing();
  try {
    return writableEnd.call(stream, chunk, encoding, callback);
  } catch (err) {
    if (taken) tasks.unnoteWrite();
    if (finishing) tasks.unfinishing();
    throw err;
  }
}

class StreamDebts {
  /** The pool's side (lib/engine/ports.js): open, hold, release. */
  #port;
  /** What the pool is held for: the stream's tasks, which the pool watches for a stream dropped with work. */
  #tasks;
  /** Writes the stream was given while the pool was open, and writes that reached the tasks. */
  #writesAccepted = 0;
  #writesTaken = 0;
  /** The end was asked for while the pool was open. */
  #finishAccepted = false;
  /** Accepted items not yet consumed (the pool's close() waits while there are any). */
  #owed = 0;

  constructor(port, tasks) {
    this.#port = port;
    this.#tasks = tasks;
  }

  /** The end was asked for while the pool was open: it is accepted work. */
  get finishAccepted() {
    return this.#finishAccepted;
  }

  /** A write was made (before it reaches the tasks): accepted while the pool is open. */
  noteWrite() {
    if (!this.#port.open()) return;
    this.#writesAccepted++;
    this.owe(1);
  }

  /** A noted write the Writable refused at once (a bad chunk): no debt after all. */
  unnoteWrite() {
    if (this.#writesAccepted === 0) return;
    this.#writesAccepted--;
    this.repay(1);
  }

  /** The end was asked for: accepted (once) while the pool is open. True when this call noted it. */
  noteFinish() {
    if (this.#finishAccepted || !this.#port.open()) return false;
    this.#finishAccepted = true;
    this.owe(1);
    return true;
  }

  /** A noted end the Writable refused at once (its chunk was bad): no debt after all. */
  unnoteFinish() {
    if (!this.#finishAccepted) return;
    this.#finishAccepted = false;
    this.repay(1);
  }

  /** `n` writes reached the tasks, in the order they were made: how many of them were accepted. */
  takeWrites(n) {
    const first = this.#writesTaken;
    this.#writesTaken += n;
    return Math.max(0, Math.min(n, this.#writesAccepted - first));
  }

  /** Owes `n` accepted items to the pool (close() waits for them). */
  owe(n) {
    if (this.#owed === 0) this.#port.hold(this.#tasks);
    this.#owed += n;
  }

  /** `n` accepted items were consumed (or will never be). */
  repay(n) {
    if (n === 0 || this.#owed === 0) return;
    this.#owed = Math.max(0, this.#owed - n);
    if (this.#owed === 0) this.#port.release(this.#tasks);
  }

  /** The items of a chunk done: their debts repaid. */
  repayItems(items) {
    let n = 0;
    for (let i = 0; i < items.length; i++) if (items[i].accepted) n++;
    this.repay(n);
  }

  /** The stream is over: nothing is owed any more. */
  repayAll() {
    this.repay(this.#owed);
  }
}

module.exports = { StreamDebts, noted, notedEnd };
