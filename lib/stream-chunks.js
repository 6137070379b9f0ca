'use strict';
// The chunks of one stream of the pool (createHash, createGzip...), on
// their way to its tasks.
//
// One task of a stream is in flight at a time, so its chunks run in order
// (each task on whichever thread is free, the kernel's state kept in Rust
// between them); the chunks that arrive meanwhile go together in the next
// task, read in place as one input (an Array of binaries). Written chunks
// are acknowledged at once while at most WRITE_AHEAD bytes wait for a task,
// and otherwise once the task that takes them has run: that is the
// stream's backpressure, and the next task always has a good batch to take.

const { Buffer } = require('node:buffer');
const { snapshot, readableBytes } = require('./binary');
const { ownArray } = require('./own-array');
const { invalidArgType, invalidArgValue, throwLater } = require('./errors');

const isEncoding = Buffer.isEncoding;
const bufferFrom = Buffer.from;
const isArray = Array.isArray;

/** No callbacks (never written to: #takeWaiting makes a new Array to fill). */
const NO_CALLBACKS = Object.freeze(ownArray(0));

/** Bytes written and not yet taken by a task that are acknowledged at once. */
const WRITE_AHEAD = 1 << 20;

/**
 * Calls `count` write callbacks with `err`. One that throws (user code
 * behind a Writable's callback) surfaces as an uncaught exception, as it
 * would from any stream, after the others have run.
 */
function acknowledge(callbacks, count, err) {
  let thrown;
  for (let i = 0; i < count; i++) {
    try {
      callbacks[i](err);
    } catch (e) {
      (thrown ??= ownArray(0))[thrown.length] = e;
    }
  }
  if (thrown !== undefined) throwLater(thrown);
}

/** A chunk as a task reads it: a string encoded, a binary checked (one binary, not an Array). */
function chunkOf(data, inputEncoding) {
  if (typeof data === 'string') {
    if (inputEncoding !== undefined && (typeof inputEncoding !== 'string' || !isEncoding(inputEncoding))) {
      throw invalidArgValue('inputEncoding', `is not a known encoding (${String(inputEncoding)})`);
    }
    return bufferFrom(data, inputEncoding);
  }
  if (isArray(data)) {
    throw invalidArgType('data', 'of type string or an instance of Buffer, TypedArray, DataView or ArrayBuffer', data);
  }
  const chunk = snapshot(data, 'data');
  readableBytes(chunk, 'data');
  return chunk;
}

class StreamChunks {
  /** `(data, last) => Promise<result>`: posts one task of the stream. */
  #post;
  /** Called with each non-last task's output, in order. */
  #onOutput;
  /** Called once with the error of a failed task. */
  #onError;
  #pending = ownArray(0);
  #pendingCount = 0;
  #pendingBytes = 0;
  /** The task in flight (a Promise that never rejects), or undefined. */
  #running = undefined;
  /**
   * Write callbacks waiting for the task that takes their chunks, each with
   * the count of pending chunks once its own were added (#writtenAt).
   */
  #written = ownArray(0);
  #writtenAt = ownArray(0);
  #writtenCount = 0;
  /**
   * Flushes asked for ({ at, kind, callback }: after the first `at` pending
   * chunks), in order. A task stops at the first: it takes the chunks
   * before it and flushes.
   */
  #cuts = ownArray(0);
  #cutCount = 0;
  /** No task is started while paused (the reader is full). */
  #paused = false;
  /** No chunk is taken any more (finished, failed or cleared). */
  #closed = false;
  #error = undefined;
  /** The error of a write after finish() (the owner's: ERR_CRYPTO_HASH_FINALIZED for a hash). */
  #lateWrite;

  /** `(reason) => void`: stops the chunk running (the stream's own signal). */
  #abort;
  /** Lets go of the caller's signal (the stream is over). */
  #release;

  /** `ends`: { post, abort, release } from the pool (index.js #openStream). */
  constructor(ends, onOutput, onError, lateWrite) {
    this.#post = ends.post;
    this.#abort = ends.abort;
    this.#release = ends.release;
    this.#onOutput = onOutput;
    this.#onError = onError;
    this.#lateWrite = lateWrite;
  }

  /** Stops the chunk running (it fails with an AbortError whose cause is `reason`). */
  abort(reason) {
    this.#abort(reason);
  }

  /** The stream is over: the caller's signal is let go. */
  release() {
    this.#release();
  }

  get closed() {
    return this.#closed;
  }

  get error() {
    return this.#error;
  }

  /** Queues one chunk (already checked by chunkOf) and starts a task if none runs. */
  add(chunk) {
    this.#pending[this.#pendingCount++] = chunk;
    // The engine's length (readableBytes), not a property the chunk may fake.
    this.#pendingBytes += readableBytes(chunk, 'data');
    this.#kick();
  }

  /**
   * A Writable's chunks ({ chunk, encoding } each): checked all first (the
   * callback gets the first refusal), then queued; `callback` now or when
   * their task has run (see WRITE_AHEAD).
   */
  write(chunks, callback) {
    if (this.#closed) {
      callback(this.#error ?? this.#lateWrite());
      return;
    }
    const checked = ownArray(chunks.length);
    try {
      for (let i = 0; i < chunks.length; i++) {
        const { chunk, encoding } = chunks[i];
        checked[i] = chunkOf(chunk, encoding === 'buffer' ? undefined : encoding);
      }
    } catch (err) {
      callback(err);
      return;
    }
    for (let i = 0; i < checked.length; i++) {
      this.#pending[this.#pendingCount++] = checked[i];
      this.#pendingBytes += readableBytes(checked[i], 'data');
    }
    const now = this.#pendingBytes <= WRITE_AHEAD;
    if (!now) this.#wait(callback);
    this.#kick();
    if (now) callback();
  }

  /**
   * A flush of `kind` (the codec's constant, checked by the caller) after
   * the chunks written so far: `callback` once the task that flushes has
   * run and its output was handed on, or with the stream's error.
   */
  flush(kind, callback) {
    if (this.#closed) {
      callback(this.#error ?? this.#lateWrite());
      return;
    }
    this.#cuts[this.#cutCount++] = { __proto__: null, at: this.#pendingCount, kind, callback };
    this.#kick();
  }

  #wait(callback) {
    this.#written[this.#writtenCount] = callback;
    this.#writtenAt[this.#writtenCount++] = this.#pendingCount;
  }

  /** Stops starting tasks until resume() (the reader's buffer is full). */
  pause() {
    this.#paused = true;
  }

  resume() {
    if (!this.#paused) return;
    this.#paused = false;
    this.#kick();
  }

  /**
   * The last task: waits for the one in flight, then runs the chunks left
   * with the kernel's finish. A Promise of its output; rejects with the
   * stream's error.
   */
  finish() {
    this.#closed = true;
    const last = () => {
      if (this.#error !== undefined) throw this.#error;
      // Every chunk left, and the flushes still asked for: the finish
      // flushes them all. Their callbacks come when this last task has run.
      const waiting = this.#takeWaiting(this.#pendingCount, this.#cutCount);
      // (Inside a then: a post that throws rejects the digest.)
      return this.#post(this.#take(this.#pendingCount), true).then(
        (result) => {
          acknowledge(waiting, waiting.length, undefined);
          return result;
        },
        (err) => {
          acknowledge(waiting, waiting.length, err);
          throw err;
        },
      );
    };
    return this.#running === undefined ? Promise.resolve().then(last) : this.#running.then(last);
  }

  /** Ends the stream with `err` (nothing more is taken; the first error wins). */
  fail(err) {
    if (this.#error === undefined) this.#error = err;
    this.#closed = true;
    const waiting = this.#takeWaiting(this.#pendingCount, this.#cutCount);
    this.#pending = ownArray(0);
    this.#pendingCount = 0;
    this.#pendingBytes = 0;
    acknowledge(waiting, waiting.length, this.#error);
  }

  /**
   * The callbacks of the writes among the first `count` pending chunks and
   * of the first `cuts` flushes, taken out of the waiting lists (the writes
   * first: a flush's callback comes after the writes before it).
   */
  #takeWaiting(count, cuts) {
    if (this.#writtenCount === 0 && cuts === 0) return NO_CALLBACKS;
    const taken = ownArray(0);
    const written = this.#written;
    const writtenAt = this.#writtenAt;
    const total = this.#writtenCount;
    let i = 0;
    for (; i < total && writtenAt[i] <= count; i++) taken[taken.length] = written[i];
    this.#written = ownArray(total - i, (j) => written[i + j]);
    this.#writtenAt = ownArray(total - i, (j) => writtenAt[i + j] - count);
    this.#writtenCount = total - i;
    const allCuts = this.#cuts;
    for (let c = 0; c < cuts; c++) taken[taken.length] = allCuts[c].callback;
    this.#cuts = ownArray(this.#cutCount - cuts, (j) => {
      const cut = allCuts[cuts + j];
      cut.at -= count;
      return cut;
    });
    this.#cutCount -= cuts;
    return taken;
  }

  /** The first `count` pending chunks, as one input. */
  #take(count) {
    const total = this.#pendingCount;
    const chunks = this.#pending;
    if (count === total) {
      this.#pending = ownArray(0);
      this.#pendingCount = 0;
      this.#pendingBytes = 0;
    } else {
      // Only where a flush cuts the chunks: the rest stay, counted again.
      this.#pending = ownArray(total - count, (i) => chunks[count + i]);
      this.#pendingCount = total - count;
      let bytes = 0;
      for (let i = 0; i < total - count; i++) bytes += readableBytes(this.#pending[i], 'data');
      this.#pendingBytes = bytes;
    }
    return count === 1 ? chunks[0] : ownArray(count, (i) => chunks[i]);
  }

  #kick() {
    if (this.#running !== undefined || this.#closed || this.#paused) return;
    if (this.#pendingCount === 0 && this.#cutCount === 0) return;
    // Up to the first flush asked for, and that flush; or every chunk.
    const cut = this.#cutCount !== 0;
    const count = cut ? this.#cuts[0].at : this.#pendingCount;
    const end = cut ? this.#cuts[0].kind : 0;
    const waiting = this.#takeWaiting(count, cut ? 1 : 0);
    let task;
    try {
      task = this.#post(this.#take(count), end);
    } catch (err) {
      // Refused at once (the signal fired, the chunks were detached): the
      // stream fails as if the task had.
      task = Promise.reject(err);
    }
    this.#running = task.then(
      (result) => {
        this.#running = undefined;
        if (this.#error === undefined) this.#onOutput(result);
        this.#kick();
        acknowledge(waiting, waiting.length, this.#error);
      },
      (err) => {
        this.#running = undefined;
        const first = this.#error === undefined;
        this.fail(err);
        acknowledge(waiting, waiting.length, err);
        if (first) this.#onError(err);
      },
    );
  }
}

module.exports = { StreamChunks, chunkOf };
