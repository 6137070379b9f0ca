'use strict';
// pool.createGzip() and the other codec streams: a Transform whose chunks
// run on the pool's threads, the codec's state kept in Rust between them
// (the core's stream.rs), its chunks handled by lib/stream-chunks.js.
//
// Each task's output is pushed as it comes, in order; the last task (from
// _flush, when the writable side ends) finishes the codec. When the reader
// is full (push() says so), no task starts until it reads again, so memory
// stays bounded by WRITE_AHEAD of input and highWaterMark of output.

const { Transform } = require('node:stream');
const { StreamChunks } = require('./stream-chunks');
const { makeError } = require('./errors');

class CodecStream extends Transform {
  #chunks;
  /** The codec finished (the last task ran): nothing left to stop. */
  #done = false;

  /** `ends`: { post, abort, release } from the pool (index.js #openStream). */
  constructor(ends, options) {
    super(options);
    this.#chunks = new StreamChunks(
      ends,
      (result) => {
        if (result.length !== 0 && !this.push(result)) this.#chunks.pause();
      },
      (err) => this.destroy(err),
      () => makeError(Error, 'ERR_STREAM_WRITE_AFTER_END', 'write after end'),
    );
  }

  _transform(chunk, encoding, callback) {
    this.#chunks.write([{ chunk, encoding }], callback);
  }

  _read(size) {
    this.#chunks.resume();
    super._read(size);
  }

  _flush(callback) {
    this.#chunks.finish().then(
      (result) => {
        this.#done = true;
        this.#chunks.release();
        if (result.length !== 0) this.push(result);
        callback();
      },
      (err) => {
        this.#chunks.release();
        callback(err);
      },
    );
  }

  _destroy(err, callback) {
    if (!this.#done) {
      const reason = err ?? makeError(Error, 'ERR_STREAM_DESTROYED', 'The stream was destroyed');
      this.#chunks.fail(reason);
      // The chunk running stops at its next 256 KiB; the state goes with it.
      this.#chunks.abort(reason);
    }
    this.#chunks.release();
    callback(err);
  }
}

module.exports = { CodecStream };
