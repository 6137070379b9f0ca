'use strict';
// pool.createHash(): an incremental hash whose chunks run on the pool's
// threads, the kernel's state kept in Rust between them (the core's
// stream/), its chunks handled by lib/streams/tasks.js.
//
// As node:crypto's Hash, it is a Transform: what is written is hashed, and
// the digest is its readable side's one chunk once the writing ends
// (`readable.pipe(hash).on('data', …)`). `update()` keeps node:crypto's
// contract (the caller may reuse its buffer as soon as it returns: the
// bytes are copied, or hashed at once; see streams/tasks.js); `digest()`
// returns a Promise of the digest, since the last chunk runs on the pool.

const { Transform } = require('node:stream');
const { createHash: createNodeHash } = require('node:crypto');
const { Buffer } = require('node:buffer');
const { StreamTasks } = require('./tasks');
const { noted, notedEnd } = require('./debts');
const { updateBytes } = require('./input');
const { ABORT, WHEN_OVER } = require('../symbols');
const { makeError } = require('../errors');
const { NativePromise } = require('../base/intrinsics');

const isEncoding = Buffer.isEncoding;

function finalized() {
  return makeError(Error, 'ERR_CRYPTO_HASH_FINALIZED', 'Digest already called');
}

function updateFailed() {
  return makeError(Error, 'ERR_CRYPTO_HASH_UPDATE_FAILED', 'Hash update failed');
}

/**
 * What node:crypto's Hash of this Node does with bytes it can no longer
 * take, found by trying it once (a feature, not a version): an update()
 * after end() throws ERR_CRYPTO_HASH_UPDATE_FAILED from Node 22 (Node 20
 * drops it), and a write after digest() fails with it from Node 24 (20
 * and 22 drop it). Where node:crypto drops them, this hash refuses them
 * with ERR_CRYPTO_HASH_FINALIZED instead: no data is lost silently (a
 * documented difference).
 */
const LATE = (() => {
  const ended = createNodeHash('sha256');
  ended.end();
  let update = false;
  try {
    ended.update('x');
  } catch (err) {
    update = err?.code === 'ERR_CRYPTO_HASH_UPDATE_FAILED';
  }
  const digested = createNodeHash('sha256');
  digested.on('error', () => {});
  digested.digest();
  let failed;
  try {
    digested.write('x');
    failed = digested.errored;
  } catch (err) {
    failed = err; // (Deno's Hash throws it out of write())
  }
  const write = failed?.code === 'ERR_CRYPTO_HASH_UPDATE_FAILED';
  return Object.freeze({
    /** The error of an update() after end() (not after digest(), which is always FINALIZED). */
    update: update ? updateFailed : finalized,
    /** The error of a write after digest(). */
    write: write ? updateFailed : finalized,
  });
})();

function destroyed() {
  return makeError(
    Error,
    'ERR_STREAM_DESTROYED',
    'Cannot call digest after the stream was destroyed',
  );
}

/** A copy of update()'s bytes, for the Writable's buffer. */
function copyOf(view) {
  const copy = Buffer.allocUnsafeSlow(view.byteLength);
  copy.set(view);
  return copy;
}

/** The block that the copies of updates made while writes are under way share (see #behind). */
const TRAIL_BLOCK = 64 << 10;
const { setImmediate: scheduleImmediate } = require('node:timers');

function contractError() {
  return makeError(
    Error,
    'ERR_TIDEPOOL_KERNEL_CONTRACT',
    'The kernel produced output before the end of the stream: it is not a hash',
  );
}

function notCopyable(why) {
  return makeError(Error, 'ERR_TIDEPOOL_HASH_COPY', `The hash cannot be copied: ${why}`);
}

const EMPTY = new Uint8Array(0);

/** A hash has no flush: every written chunk is data. */
const noFlush = () => -1;

class Hash extends Transform {
  #tasks;
  /** digest() was called. */
  #digested = false;
  /** The last chunk's Promise (digest() and the end of the writing share it). */
  #last = undefined;
  /** digest() calls made after end() while writes still ran: they wait for _flush. */
  #waiters = undefined;
  /** Copies of updates made while writes were under way, not yet written (see #behind). */
  #trail = undefined;
  #trailUsed = 0;
  #trailScheduled = false;
  #result = undefined;
  /** The Promise of the digest's bytes, once digest() was called. */
  #digest = undefined;
  /** copy()'s maker (lib/streams/factory.js), or undefined: the kernel's state cannot be copied. */
  #copier;
  /**
   * Bytes of the writes the tasks hold (reached _write, not called back):
   * the Writable's length beyond them waits in its buffer (see copy()).
   */
  #taken = 0;

  /**
   * `port`, `handle`: the engine's StreamPort (lib/engine/ports.js) and this
   * hash's stream; `copier(options, fork)`: checks copy()'s options, then
   * makes the copy over the handle `fork()` returns.
   */
  constructor(port, handle, options, copier) {
    super(options);
    this.#copier = copier;
    this.#tasks = new StreamTasks(
      port,
      handle,
      {
        output: (result, last) => {
          if (last) this.#result = result;
          else if (result.length !== 0) {
            // Only the last chunk writes: anything before is no hash's.
            this.#tasks.fail(contractError());
            return false;
          }
          return true;
        },
        ended: () => {},
        failed: () => {},
        budget: () => Infinity,
      },
      LATE.write,
    );
  }

  /**
   * Its signal fired: the hash stops and digest() rejects with `err` (even
   * once asked for). A hash with an 'error' listener (in a pipeline, say)
   * is destroyed with it, as a node:zlib stream is; one without (used
   * through update() and digest() alone) closes without an 'error' event,
   * which nobody would hear but the process.
   */
  [ABORT](err) {
    if (this.#result === undefined) this.#tasks.fail(err, true);
    if (this.listenerCount('error') !== 0) this.destroy(err);
    else this.destroy();
  }

  /** `fn()` once the hash's tasks are over (pool.js lets go of its signal then). */
  [WHEN_OVER](fn) {
    this.#tasks.whenOver(fn);
  }

  /**
   * Adds `data` (a binary, or a string in `inputEncoding`, 'utf8' by
   * default and for an unknown one, as node:crypto) to the hash; returns
   * this hash at once. The caller may reuse `data` as soon as update()
   * returns.
   */
  update(data, inputEncoding) {
    const tasks = this.#tasks;
    if (tasks.closed) {
      if (this.#digested) throw finalized();
      throw tasks.error ?? LATE.update();
    }
    // After digest() or end() (which asks for the digest on the readable
    // side), the digest is of what came before: node:crypto's end() digests
    // at once, and its update() after digest() throws. Writes may still be
    // under way here, and an update must not go before them.
    if (this.#digested) throw finalized();
    if (this.writableEnded) throw LATE.update();
    if (this.writableLength !== 0 || this.#trailUsed !== 0) {
      this.#behind(updateBytes(data, inputEncoding));
      return this;
    }
    tasks.update(data, inputEncoding);
    return this;
  }

  /**
   * An update made while writes are under way (in flight, or waiting in the
   * Writable's buffer): node:crypto hashes in call order, so its copy goes
   * behind them, as a write. Small ones share a block, written when full,
   * before the next write or the end, or when the event loop turns.
   */
  #behind(view) {
    const bytes = view.byteLength;
    if (bytes === 0) return;
    if (bytes > TRAIL_BLOCK / 2) {
      this.#flushTrail();
      this.#tasks.noteWrite();
      super.write(copyOf(view));
      return;
    }
    if (this.#trail !== undefined && this.#trailUsed + bytes > TRAIL_BLOCK) this.#flushTrail();
    this.#trail ??= Buffer.allocUnsafeSlow(TRAIL_BLOCK);
    this.#trail.set(view, this.#trailUsed);
    this.#trailUsed += bytes;
    if (!this.#trailScheduled) {
      this.#trailScheduled = true;
      scheduleImmediate(() => {
        this.#trailScheduled = false;
        if (!this.destroyed) this.#flushTrail();
      });
    }
  }

  /** The trail block, if it holds anything, to the Writable. */
  #flushTrail() {
    if (this.#trailUsed === 0) return;
    const block = this.#trail.subarray(0, this.#trailUsed);
    this.#trail = undefined;
    this.#trailUsed = 0;
    this.#tasks.noteWrite();
    super.write(block);
  }

  /**
   * Finishes the hash: a Promise of the digest, a Buffer or a string in
   * `encoding` (a Buffer for an unknown one, as node:crypto). The hash
   * takes no chunk after this.
   */
  digest(encoding) {
    if (this.#digested) throw finalized();
    // As node:crypto: a truthy encoding is made a string first (what its
    // toString() throws is thrown, and the hash is not finalized).
    if (encoding) encoding = `${encoding}`;
    this.#digested = true;
    if (this.destroyed && this.#last === undefined)
      return NativePromise.reject(this.#tasks.error ?? destroyed());
    const text = typeof encoding === 'string' && encoding !== 'buffer' && isEncoding(encoding);
    this.#flushTrail();
    if (this.#last === undefined && this.writableLength !== 0 && !this.writableEnded) {
      // Writes are under way (node:crypto's would all be hashed by now):
      // the digest ends the writing, and is the one made after them.
      this.end();
    }
    let last;
    if (this.#last === undefined && this.writableEnded && !this.writableFinished) {
      last = new NativePromise((resolve, reject) =>
        (this.#waiters ??= []).push({ resolve, reject }),
      );
    } else {
      last = this.#finish();
    }
    this.#digest = last;
    return last.then((result) => (text ? result.toString(encoding) : result));
  }

  /**
   * A new Hash whose state is this one's now (node:crypto's copy()): of
   * everything written and updated so far; the two go on apart. `options`:
   * the copy's `highWaterMark` and `signal`. The chunk in flight, if any,
   * is finished on this thread first (as node:crypto's update() would have
   * hashed it by now). Writes still waiting in the stream's buffer behind
   * it cannot be taken from there: copy() refuses then
   * (ERR_TIDEPOOL_HASH_COPY), as for a loaded kernel, whose state is its
   * own.
   */
  copy(options) {
    const tasks = this.#tasks;
    if (this.#digested || this.writableEnded) throw finalized();
    if (tasks.closed) throw tasks.error ?? finalized();
    const copier = this.#copier;
    if (copier === undefined) throw notCopyable("a loaded kernel's state is its own");
    if (this.writableLength > this.#taken) {
      throw notCopyable(
        "written chunks wait in the stream's buffer; copy once their callbacks ran, or hash with update()",
      );
    }
    return copier(options, () => {
      const tail = this.#trailUsed === 0 ? EMPTY : this.#trail.subarray(0, this.#trailUsed);
      const handle = tasks.fork(tail);
      this.#trail = undefined;
      this.#trailUsed = 0;
      return handle;
    });
  }

  /** The last chunk, once: a Promise of the digest. */
  #finish() {
    this.#last ??= new NativePromise((resolve, reject) => {
      this.#tasks.finish((err) => {
        if (err !== undefined) reject(err);
        else if (this.#result === undefined) reject(contractError());
        else resolve(this.#result);
      });
    });
    return this.#last;
  }

  /** A write comes after the updates before it, and counts for the pool's close(). */
  write(chunk, encoding, callback) {
    // After digest(), whether it ended the writing or not: a write failing
    // in the Writable would destroy the stream at once (Node 24's Writable
    // does so synchronously), and so fail the digest asked for before it.
    if (this.#digested && !this.destroyed) return this.#refuseLate(encoding, callback);
    this.#flushTrail();
    return noted(this, this.#tasks, chunk, encoding, callback);
  }

  /**
   * A write after digest(): Writable would destroy the stream (with
   * ERR_STREAM_WRITE_AFTER_END, or the write's error) and so fail the
   * digest asked for before it. Refused as once the digest is done
   * (node:crypto's error of this Node, LATE.write, to its callback), and
   * the stream fails with it only once the digest settled.
   */
  #refuseLate(encoding, callback) {
    const cb = typeof encoding === 'function' ? encoding : callback;
    const err = LATE.write();
    if (typeof cb === 'function') process.nextTick(cb, err);
    const fail = () => this.destroy(err);
    this.#digest.then(fail, fail);
    return false;
  }

  /** Its end is asked for: a pool closed from now on finishes it first. */
  end(chunk, encoding, callback) {
    this.#flushTrail();
    return notedEnd(this, this.#tasks, chunk, encoding, callback);
  }

  _write(chunk, encoding, callback) {
    this._writev([{ chunk, encoding }], callback);
  }

  _writev(chunks, callback) {
    let bytes = 0;
    for (let i = 0; i < chunks.length; i++) bytes += chunks[i].chunk.length;
    // Empty writes made before digest() that reach here after it: nothing to hash.
    if (bytes === 0 && this.#digested) {
      callback();
      return;
    }
    this.#taken += bytes;
    this.#tasks.write(
      chunks,
      (err) => {
        this.#taken -= bytes;
        callback(err);
      },
      noFlush,
    );
  }

  /** The writing ended: the digest is the readable side's one chunk (node:crypto's Hash does the same). */
  _flush(callback) {
    const last = this.#finish();
    const waiters = this.#waiters;
    this.#waiters = undefined;
    if (waiters !== undefined)
      for (const { resolve, reject } of waiters) last.then(resolve, reject);
    last.then(
      (digest) => callback(null, digest),
      (err) => callback(err),
    );
  }

  /**
   * Destroyed before its digest came (asked for or not): the chunk running
   * stops at its next piece (its state goes with it), and digest() rejects.
   */
  _destroy(err, callback) {
    // (A write refused because digest() was asked for first does not fail that digest.)
    const late = this.#digested && err?.code === 'ERR_CRYPTO_HASH_FINALIZED';
    if (this.#result === undefined && !late) this.#tasks.fail(err ?? destroyed(), true);
    const waiters = this.#waiters;
    this.#waiters = undefined;
    if (waiters !== undefined)
      for (const { reject } of waiters) reject(this.#tasks.error ?? err ?? destroyed());
    callback(err);
  }
}

module.exports = { Hash };
