'use strict';
// pool.createHash(): an incremental hash whose chunks run on the pool's
// threads, with the kernel's state kept in Rust between them (the core's
// stream.rs).
//
// `update()` never waits: it checks the chunk and queues it here. One task
// of the stream is in flight at a time (so the chunks run in order, each on
// whichever thread is free); the chunks that arrive meanwhile go together
// in the next task, read in place as one input (an Array of binaries). The
// buffer contract of post() holds for every chunk until digest() settles.
// It is also a Writable: `await pipeline(readable, hash)`, then
// `await hash.digest()`. Written chunks are acknowledged at once while at
// most WRITE_AHEAD bytes wait for their task, and otherwise once the task
// that takes them has run: the stream's backpressure, with the next task
// always having a good batch of chunks to take.

const { Writable } = require('node:stream');
const { Buffer } = require('node:buffer');
const { snapshot, readableBytes } = require('./binary');
const { ownArray } = require('./own-array');
const { makeError, invalidArgType, invalidArgValue } = require('./errors');

const isEncoding = Buffer.isEncoding;
const isArray = Array.isArray;
const bufferFrom = Buffer.from;

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

/** Bytes written and not yet taken by a task that the Writable acknowledges at once. */
const WRITE_AHEAD = 1 << 20;

function finalized() {
  return makeError(Error, 'ERR_CRYPTO_HASH_FINALIZED', 'Digest already called');
}

class Hash extends Writable {
  /** `(data, last) => Promise<result>`: posts one chunk of this stream (index.js). */
  #post;
  /** `(reason) => void`: stops the chunk running, fails the queued ones. */
  #abort;
  /** Lets go of the caller's signal (the hash is over). */
  #release;
  /** Chunks not yet handed to a task (snapshots, checked), and their bytes when written. */
  #pending = ownArray(0);
  #pendingCount = 0;
  #pendingBytes = 0;
  /** The task in flight (a Promise), or undefined. */
  #running = undefined;
  /** Callbacks of written chunks, acknowledged when the task that took them has run. */
  #written = ownArray(0);
  #writtenCount = 0;
  /** No chunk is taken any more (digest() was called, or the stream was destroyed). */
  #finalized = false;
  #digested = false;
  /** The error that ended the stream (a failed chunk, an abort). */
  #error = undefined;

  /** `ends`: { post, abort, release } from the pool (index.js createHash). */
  constructor(ends, options) {
    super(options);
    this.#post = ends.post;
    this.#abort = ends.abort;
    this.#release = ends.release;
  }

  /**
   * Adds `data` (a binary, or a string in `inputEncoding`, 'utf8' by
   * default) to the hash; returns this hash at once.
   */
  update(data, inputEncoding) {
    if (this.#finalized) throw this.#digested ? finalized() : this.#error;
    this.#pending[this.#pendingCount++] = chunkOf(data, inputEncoding);
    this.#kick();
    return this;
  }

  /**
   * Finishes the hash: a Promise of the digest, a Buffer or a string in
   * `encoding`. The hash takes no chunk after this.
   */
  digest(encoding) {
    if (encoding !== undefined && encoding !== 'buffer' && (typeof encoding !== 'string' || !isEncoding(encoding))) {
      throw invalidArgValue('encoding', `is not a known encoding (${String(encoding)})`);
    }
    if (this.#digested) throw finalized();
    this.#digested = true;
    this.#finalized = true;
    const last = () => {
      if (this.#error !== undefined) throw this.#error;
      return this.#post(this.#take(), true);
    };
    const done = this.#running === undefined ? Promise.resolve().then(last) : this.#running.then(last);
    return done.then(
      (result) => {
        this.#release();
        return encoding === undefined || encoding === 'buffer' ? result : result.toString(encoding);
      },
      (err) => {
        this.#release();
        throw err;
      },
    );
  }

  /** Writable: one chunk. */
  _write(chunk, encoding, callback) {
    this._writev([{ chunk, encoding }], callback);
  }

  /** Writable: the chunks buffered while a task ran, in one go. */
  _writev(chunks, callback) {
    if (this.#finalized) {
      callback(this.#error ?? finalized());
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
      this.#pendingBytes += checked[i].byteLength;
    }
    // Room left: more may come now. Else acknowledged by the task that takes
    // these chunks (see #kick).
    const now = this.#pendingBytes <= WRITE_AHEAD;
    if (!now) this.#written[this.#writtenCount++] = callback;
    this.#kick();
    if (now) callback();
  }

  /** Writable: nothing to flush (the digest comes from digest()). */
  _final(callback) {
    callback(this.#error);
  }

  /**
   * Writable: destroyed. After a normal end (autoDestroy once the writes
   * are done) digest() is still to come; destroyed early or with an error,
   * the hash takes nothing more and digest() rejects.
   */
  _destroy(err, callback) {
    if (err != null || !this.writableFinished) {
      const reason = err ?? makeError(Error, 'ERR_STREAM_DESTROYED', 'Cannot call digest after the stream was destroyed');
      this.#fail(reason);
      // The chunk running stops at its next 256 KiB; the state goes with it.
      this.#abort(reason);
      this.#release();
    }
    callback(err);
  }

  /** The pending chunks, as one input. */
  #take() {
    const count = this.#pendingCount;
    const chunks = this.#pending;
    this.#pending = ownArray(0);
    this.#pendingCount = 0;
    this.#pendingBytes = 0;
    return count === 1 ? chunks[0] : ownArray(count, (i) => chunks[i]);
  }

  /** Starts a task for the pending chunks unless one is in flight. */
  #kick() {
    if (this.#running !== undefined || this.#pendingCount === 0 || this.#finalized) return;
    const written = this.#written;
    const writtenCount = this.#writtenCount;
    this.#written = ownArray(0);
    this.#writtenCount = 0;
    this.#running = this.#post(this.#take(), false).then(
      (result) => {
        this.#running = undefined;
        if (result.length !== 0) {
          // A kernel that writes before its end is not a hash.
          this.#fail(
            makeError(Error, 'ERR_TIDEPOOL_KERNEL_CONTRACT', 'The kernel produced output before the end of the stream: it is not a hash'),
          );
        }
        for (let i = 0; i < writtenCount; i++) written[i](this.#error);
        this.#kick();
      },
      (err) => {
        this.#running = undefined;
        this.#fail(err);
        for (let i = 0; i < writtenCount; i++) written[i](err);
      },
    );
    // digest() waits on it and reports the error itself.
    this.#running.catch(() => {});
  }

  /** The hash takes nothing more; update() throws `err`, digest() rejects with it. */
  #fail(err) {
    if (this.#error === undefined) this.#error = err;
    this.#finalized = true;
    this.#pending = ownArray(0);
    this.#pendingCount = 0;
    this.#pendingBytes = 0;
  }
}

module.exports = { Hash };
