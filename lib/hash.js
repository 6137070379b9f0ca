'use strict';
// pool.createHash(): an incremental hash whose chunks run on the pool's
// threads, the kernel's state kept in Rust between them (the core's
// stream.rs), its chunks handled by lib/stream-tasks.js.
//
// As node:crypto's Hash, it is a Transform: what is written is hashed, and
// the digest is its readable side's one chunk once the writing ends
// (`readable.pipe(hash).on('data', …)`). `update()` keeps node:crypto's
// contract (the caller may reuse its buffer as soon as it returns: the
// bytes are copied, or hashed at once; see stream-tasks.js); `digest()`
// returns a Promise of the digest, since the last chunk runs on the pool.

const { Transform } = require('node:stream');
const { Buffer } = require('node:buffer');
const { StreamTasks, chunkOf, ABORT } = require('./stream-tasks');
const { makeError, invalidArgValue } = require('./errors');

const isEncoding = Buffer.isEncoding;
const NativePromise = Promise;

function finalized() {
  return makeError(Error, 'ERR_CRYPTO_HASH_FINALIZED', 'Digest already called');
}

function destroyed() {
  return makeError(Error, 'ERR_STREAM_DESTROYED', 'Cannot call digest after the stream was destroyed');
}

function contractError() {
  return makeError(Error, 'ERR_TIDEPOOL_KERNEL_CONTRACT', 'The kernel produced output before the end of the stream: it is not a hash');
}

/** A hash has no flush: every written chunk is data. */
const noFlush = () => -1;

class Hash extends Transform {
  #tasks;
  /** digest() was called. */
  #digested = false;
  /** The last chunk's Promise (digest() and the end of the writing share it). */
  #last = undefined;
  #result = undefined;

  /** `port`, `handle`: the pool's stream port and this hash's stream (index.js). */
  constructor(port, handle, options) {
    super(options);
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
      finalized,
    );
  }

  /**
   * Its signal fired: the hash stops and digest() rejects with `err`. A
   * hash with an 'error' listener (in a pipeline, say) is destroyed with
   * it, as a node:zlib stream is; one without (used through update() and
   * digest() alone) closes without an 'error' event, which nobody would
   * hear but the process.
   */
  [ABORT](err) {
    if (this.#last === undefined) this.#tasks.fail(err, true);
    if (this.listenerCount('error') !== 0) this.destroy(err);
    else this.destroy();
  }

  /**
   * Adds `data` (a binary, or a string in `inputEncoding`, 'utf8' by
   * default) to the hash; returns this hash at once. The caller may reuse
   * `data` as soon as update() returns.
   */
  update(data, inputEncoding) {
    const tasks = this.#tasks;
    if (tasks.closed) throw this.#digested || tasks.error === undefined ? finalized() : tasks.error;
    tasks.update(chunkOf(data, inputEncoding));
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
    if (this.destroyed && this.#last === undefined) return NativePromise.reject(this.#tasks.error ?? destroyed());
    return this.#finish().then((result) => (encoding === undefined || encoding === 'buffer' ? result : result.toString(encoding)));
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

  /** Its end is asked for: a pool closed from now on finishes it first. */
  end(...args) {
    this.#tasks.finishing();
    return super.end(...args);
  }

  _write(chunk, encoding, callback) {
    this.#tasks.write([{ chunk, encoding }], callback, noFlush);
  }

  _writev(chunks, callback) {
    this.#tasks.write(chunks, callback, noFlush);
  }

  /** The writing ended: the digest is the readable side's one chunk (node:crypto's Hash does the same). */
  _flush(callback) {
    this.#finish().then(
      (digest) => callback(null, digest),
      (err) => callback(err),
    );
  }

  /**
   * Destroyed before its digest: the chunk running stops at its next piece
   * (its state goes with it), and digest() rejects.
   */
  _destroy(err, callback) {
    if (this.#last === undefined) this.#tasks.fail(err ?? destroyed(), true);
    callback(err);
  }
}

module.exports = { Hash };
