'use strict';
// pool.createHash(): an incremental hash whose chunks run on the pool's
// threads, the kernel's state kept in Rust between them (the core's
// stream.rs), its chunks handled by lib/stream-chunks.js.
//
// `update()` never waits: it checks the chunk and queues it. The buffer
// contract of post() holds for every chunk until digest() settles. It is
// also a Writable: `await pipeline(readable, hash)`, then
// `await hash.digest()`.

const { Writable } = require('node:stream');
const { Buffer } = require('node:buffer');
const { StreamChunks, chunkOf } = require('./stream-chunks');
const { makeError, invalidArgValue } = require('./errors');

const isEncoding = Buffer.isEncoding;

function finalized() {
  return makeError(Error, 'ERR_CRYPTO_HASH_FINALIZED', 'Digest already called');
}

function destroyed() {
  return makeError(Error, 'ERR_STREAM_DESTROYED', 'Cannot call digest after the stream was destroyed');
}

class Hash extends Writable {
  #chunks;
  #digested = false;

  /** `ends`: { post, abort, release } from the pool (index.js #openStream). */
  constructor(ends, options) {
    super(options);
    this.#chunks = new StreamChunks(
      ends,
      (result) => {
        // A kernel that writes before its end is not a hash.
        if (result.length !== 0) {
          this.#chunks.fail(
            makeError(Error, 'ERR_TIDEPOOL_KERNEL_CONTRACT', 'The kernel produced output before the end of the stream: it is not a hash'),
          );
        }
      },
      () => {},
      finalized,
    );
  }

  /**
   * Adds `data` (a binary, or a string in `inputEncoding`, 'utf8' by
   * default) to the hash; returns this hash at once.
   */
  update(data, inputEncoding) {
    const chunks = this.#chunks;
    if (chunks.closed) throw this.#digested ? finalized() : chunks.error;
    chunks.add(chunkOf(data, inputEncoding));
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
    return this.#chunks.finish().then(
      (result) => {
        this.#chunks.release();
        return encoding === undefined || encoding === 'buffer' ? result : result.toString(encoding);
      },
      (err) => {
        this.#chunks.release();
        throw err;
      },
    );
  }

  _write(chunk, encoding, callback) {
    this.#chunks.write([{ chunk, encoding }], callback);
  }

  _writev(chunks, callback) {
    this.#chunks.write(chunks, callback);
  }

  /** Writable: nothing to flush (the digest comes from digest()). */
  _final(callback) {
    callback(this.#chunks.error);
  }

  /**
   * Writable: destroyed. After a normal end (autoDestroy once the writes
   * are done) digest() is still to come; destroyed early or with an error,
   * the hash takes nothing more and digest() rejects.
   */
  _destroy(err, callback) {
    if (this.#digested) {
      // The digest is under way (a write after it errored the Writable, or
      // destroy() came late): it goes on, and lets go of the signal itself.
    } else if (err != null || !this.writableFinished) {
      const reason = err ?? destroyed();
      this.#chunks.fail(reason);
      // The chunk running stops at its next 256 KiB; the state goes with it.
      this.#chunks.abort(reason);
      this.#chunks.release();
    } else {
      // Finished, destroyed without a digest: the hash may still give one,
      // but the caller's signal is let go (it would keep the stream alive).
      this.#chunks.release();
    }
    callback(err);
  }
}

module.exports = { Hash };
