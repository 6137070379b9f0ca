'use strict';
// What a codec stream's flush(), params() and reset() write, and how a
// write is told from them: each is an empty Buffer marking a flush kind
// (the Writable keeps it in order with the other writes, as node:zlib's
// flush buffers are), and a codec family's kinds, from the kernel table.

const { Buffer } = require('node:buffer');
const { factsOf, STREAM_CONTROLS } = require('../addon/binding');
const { mapGet, mapSet } = require('../base/collections');

/**
 * A codec family's flush kinds: the default, the kinds taken (the kernel
 * table's: the core's kernels/facts.rs), their names for an error (as
 * node:zlib names them: Z_FULL_FLUSH for the deflate family,
 * BROTLI_OPERATION_FLUSH for brotli, ZSTD_e_flush for zstd, by default);
 * and whether it is the deflate family (params(), and empty writes that
 * are writes: see deflateMarkedKind). Kind 0 (no flush) only waits for the
 * writes before it. Finishing kinds (Z_FINISH...) are end()'s, and
 * refused here.
 */
function family(fallback, kinds, names, deflate) {
  return Object.freeze({ __proto__: null, fallback, kinds, names, deflate });
}
const FLUSH_NAMES = Object.freeze({
  __proto__: null,
  deflate: 'Z_NO_FLUSH (0), Z_PARTIAL_FLUSH (1), Z_SYNC_FLUSH (2), Z_FULL_FLUSH (3) or Z_BLOCK (5)',
  brotli: 'BROTLI_OPERATION_PROCESS (0) or BROTLI_OPERATION_FLUSH (1)',
  zstd: 'ZSTD_e_continue (0) or ZSTD_e_flush (1)',
  lz4: '0 (no flush) or 1 (write the block gathered so far)',
});
/** A loaded kernel's stream: 1 asks it to write what it gathered. */
const OTHER_FLUSHES = family(1, Object.freeze([0, 1]), '0 (no flush) or 1 (flush)', false);
/** Each kernel's family, made once (by kernel name). */
const FLUSHES = { __proto__: null };

/** The flush kinds of `kernel`'s stream (see family()). */
function flushesOf(kernel) {
  let flushes = FLUSHES[kernel];
  if (flushes === undefined) {
    const facts = factsOf(kernel);
    flushes =
      facts === undefined || facts.family === ''
        ? OTHER_FLUSHES
        : family(
            facts.defaultFlush,
            facts.flushKinds,
            FLUSH_NAMES[facts.family],
            facts.family === 'deflate',
          );
    FLUSHES[kernel] = flushes;
  }
  return flushes;
}

/**
 * The controls, as flush kinds above every family's (the core's
 * kernels::ZLIB_PARAMS, stream::RESET, kernels::ZLIB_EMPTY_WRITE, told by
 * the binding): the deflate family's params(level, strategy) is
 * `PARAMS + (level + 1) * 8 + strategy`, a sync flush then the change; any
 * codec's reset() starts it over; an empty write, which node:zlib hands its
 * deflate too. Each applies after the writes before it.
 */
const { params: PARAMS, reset: RESET, emptyWrite: EMPTY_WRITE } = STREAM_CONTROLS;

/**
 * What flush(), params() and reset() write: an empty Buffer per kind, told
 * apart by identity when it reaches _write (the Writable keeps it in order
 * with the other writes, as node:zlib's flush buffers are). Made on first
 * use; a prototype-free map from the Buffer to its kind.
 */
const MARKED = new Map();
const MARKERS = [];

/** The empty Buffer that marks flush kind `kind`. */
function marker(kind) {
  let buffer = MARKERS[kind];
  if (buffer === undefined) {
    buffer = MARKERS[kind] = Buffer.alloc(0);
    mapSet(MARKED, buffer, kind);
  }
  return buffer;
}

/** The flush kind `chunk` marks, or -1 for a chunk of data. */
function markedKind(chunk) {
  return chunk.length === 0 ? (mapGet(MARKED, chunk) ?? -1) : -1;
}

/** markedKind() of the deflate family, where an empty write is one too (EMPTY_WRITE). */
function deflateMarkedKind(chunk) {
  return chunk.length === 0 ? (mapGet(MARKED, chunk) ?? EMPTY_WRITE) : -1;
}

module.exports = { flushesOf, marker, markedKind, deflateMarkedKind, PARAMS, RESET };
