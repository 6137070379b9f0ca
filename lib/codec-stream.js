'use strict';
// pool.createGzip() and the other codec streams: a Transform whose chunks
// run on the pool's threads, the codec's state kept in Rust between them
// (the core's stream.rs), its chunks handled by lib/stream-chunks.js.
//
// Each task's output is pushed as it comes, in order; the last task (from
// _flush, when the writable side ends) finishes the codec. When the reader
// is full (push() says so), no task starts until it reads again, so memory
// stays bounded by WRITE_AHEAD of input and highWaterMark of output.

const { Buffer } = require('node:buffer');
const { Transform } = require('node:stream');
const { StreamChunks } = require('./stream-chunks');
const { makeError, invalidArgType, outOfRange } = require('./errors');

const nextTick = process.nextTick;

/**
 * The flush kinds of each codec family, as node:zlib names them, and the
 * kind flush() takes by default (node:zlib's: Z_FULL_FLUSH for the deflate
 * family, BROTLI_OPERATION_FLUSH for brotli, ZSTD_e_flush for zstd). Kind 0
 * (no flush) only waits for the writes before it. Finishing kinds
 * (Z_FINISH...) are end()'s, and refused here.
 */
/** A family's flush kinds: the default, the kinds taken, their names for an error. */
function family(fallback, kinds, names) {
  return Object.freeze({ __proto__: null, fallback, kinds: Object.freeze(kinds), names });
}
const DEFLATE_FLUSHES = family(
  3,
  [0, 1, 2, 3, 5],
  'Z_NO_FLUSH (0), Z_PARTIAL_FLUSH (1), Z_SYNC_FLUSH (2), Z_FULL_FLUSH (3) or Z_BLOCK (5)',
);
const BROTLI_FLUSHES = family(1, [0, 1], 'BROTLI_OPERATION_PROCESS (0) or BROTLI_OPERATION_FLUSH (1)');
const ZSTD_FLUSHES = family(1, [0, 1], 'ZSTD_e_continue (0) or ZSTD_e_flush (1)');
const LZ4_FLUSHES = family(1, [0, 1], '0 (no flush) or 1 (write the block gathered so far)');
const FLUSHES = Object.freeze({
  __proto__: null,
  gzip: DEFLATE_FLUSHES,
  gunzip: DEFLATE_FLUSHES,
  deflate: DEFLATE_FLUSHES,
  inflate: DEFLATE_FLUSHES,
  deflateRaw: DEFLATE_FLUSHES,
  inflateRaw: DEFLATE_FLUSHES,
  brotliCompress: BROTLI_FLUSHES,
  brotliDecompress: BROTLI_FLUSHES,
  zstdCompress: ZSTD_FLUSHES,
  zstdDecompress: ZSTD_FLUSHES,
  lz4Compress: LZ4_FLUSHES,
  lz4Decompress: LZ4_FLUSHES,
});

/**
 * What flush() writes: one empty Buffer per kind, told apart by identity
 * when it reaches _transform (the Writable keeps it in order with the
 * other writes, as node:zlib's flush buffers are).
 */
const MARKERS = Object.freeze([0, 1, 2, 3, 4, 5].map(() => Buffer.alloc(0)));

/** The flush kind `chunk` marks, or -1 for a chunk of data. */
function markedKind(chunk) {
  for (let kind = 0; kind < MARKERS.length; kind++) {
    if (chunk === MARKERS[kind]) return kind;
  }
  return -1;
}

class CodecStream extends Transform {
  #chunks;
  /** The codec finished (the last task ran): nothing left to stop. */
  #done = false;
  /** The codec family's flush kinds (FLUSHES). */
  #flushes;

  /** `ends`: { post, abort, release } from the pool (index.js #openStream); `kernel`: the codec's name. */
  constructor(ends, kernel, options) {
    super(options);
    this.#flushes = FLUSHES[kernel] ?? LZ4_FLUSHES;
    this.#chunks = new StreamChunks(
      ends,
      (result) => {
        if (result.length !== 0 && !this.push(result)) this.#chunks.pause();
      },
      (err) => this.destroy(err),
      () => makeError(Error, 'ERR_STREAM_WRITE_AFTER_END', 'write after end'),
    );
  }

  /**
   * node:zlib's flush([kind, ]callback): what was written so far comes out
   * (decodable on its own) before `callback`. `kind` is the codec family's
   * constant (see FLUSHES); by default node:zlib's for the family.
   */
  flush(kind, callback) {
    if (typeof kind === 'function' || (kind === undefined && callback === undefined)) {
      callback = kind;
      kind = this.#flushes.fallback;
    } else if (kind === undefined) {
      kind = this.#flushes.fallback;
    }
    if (typeof kind !== 'number') throw invalidArgType('kind', 'of type number', kind);
    const kinds = this.#flushes.kinds;
    let known = false;
    for (let i = 0; i < kinds.length; i++) known ||= kinds[i] === kind;
    if (!known) throw outOfRange('kind', this.#flushes.names, kind);
    if (callback !== undefined && typeof callback !== 'function') throw invalidArgType('callback', 'of type function', callback);
    // As node:zlib: after the end, the callback waits for it (or runs at once).
    if (this.writableFinished) {
      if (callback !== undefined) nextTick(callback);
    } else if (this.writableEnded) {
      if (callback !== undefined) this.once('end', callback);
    } else {
      this.write(MARKERS[kind], callback);
    }
  }

  /** node:zlib's params() changes the level mid-stream, which zlib-rs cannot: a clear error instead. */
  params() {
    throw makeError(
      Error,
      'ERR_METHOD_NOT_IMPLEMENTED',
      'The params() method is not implemented: tidepool streams keep the params they were created with (options.params)',
    );
  }

  _transform(chunk, encoding, callback) {
    const kind = markedKind(chunk);
    if (kind >= 0) this.#chunks.flush(kind, callback);
    else this.#chunks.write([{ chunk, encoding }], callback);
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
