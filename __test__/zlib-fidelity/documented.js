'use strict';
// The differences from node:zlib that are on purpose: each is a typed error
// of the drop-in and a line of docs/zlib.md's "What differs" table. For a
// case that falls under one (and that node:zlib takes), `documented()` says
// which line, and what the drop-in must do instead.

const nodeZlib = require('node:zlib');
const { types } = require('node:util');

const c = nodeZlib.constants;
const UNSUPPORTED = 'ERR_TIDEPOOL_ZLIB_UNSUPPORTED';
const INFLATERS = ['Gunzip', 'Inflate', 'InflateRaw', 'Unzip'];

/** The table's lines, as docs/zlib.md has them (the test checks they are there). */
const LINES = {
  flushKinds:
    '| `finishFlush` other than the finishing kind on a brotli or zstd encoder; the `flush` option `Z_FINISH`, `Z_BLOCK` on a decoder, or beyond a flush on brotli/zstd | `ERR_TIDEPOOL_ZLIB_UNSUPPORTED`, when the stream is made |',
  zstdWindow:
    '| a zstd frame whose window is larger than the power of two above `maxOutputLength` |',
  brotliDictionary:
    '| brotli `dictionary` (Node 24+) | `ERR_TIDEPOOL_ZLIB_UNSUPPORTED`, when the stream is made (an empty one is none, as there) |',
};

/** True where node:zlib's brotli takes a dictionary (Node 24+; before, it is no option). */
const BROTLI_DICTIONARY = (() => {
  try {
    new nodeZlib.BrotliCompress({ dictionary: 1 }).close();
    return false;
  } catch {
    return true;
  }
})();

/** A dictionary node:zlib would use: a binary with bytes. */
function usable(dictionary) {
  return (
    (ArrayBuffer.isView(dictionary) || types.isAnyArrayBuffer(dictionary)) &&
    dictionary.byteLength > 0
  );
}

/** The drop-in refuses the options with ERR_TIDEPOOL_ZLIB_UNSUPPORTED, in the stream and the one-shot. */
function refused(line) {
  return {
    line,
    matches: (got) =>
      got.stream.threw?.code === UNSUPPORTED && got.oneShot.threw?.code === UNSUPPORTED,
  };
}

/** An own numeric option as node:zlib's binding reads it (NaN: not given). */
function kind(options, name) {
  const v = options !== null && typeof options === 'object' ? options[name] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : undefined;
}

/**
 * A zstd frame's window past the one-shot's output limit: refused as too
 * large (the stream, whose output is not limited, reads it as there).
 */
function tooLarge(line, truth) {
  return {
    line,
    matches: (got) =>
      got.oneShot.error?.code === 'ERR_BUFFER_TOO_LARGE' &&
      JSON.stringify(got.stream) === JSON.stringify(truth.stream),
  };
}

/** The documented difference `kase` falls under, given node:zlib's answer `truth`. */
function documented(kase, truth) {
  if (kase.purpose === 'zstdWindow') return tooLarge(LINES.zstdWindow, truth);
  // What node:zlib refuses, the drop-in refuses alike: no difference to allow.
  if (truth.stream.threw !== undefined) return undefined;
  const { cls, options } = kase;
  const flush = kind(options, 'flush');
  const finishFlush = kind(options, 'finishFlush');
  switch (cls) {
    case 'Gzip':
    case 'Gunzip':
    case 'Deflate':
    case 'Inflate':
    case 'DeflateRaw':
    case 'InflateRaw':
    case 'Unzip':
      if (flush === c.Z_FINISH) return refused(LINES.flushKinds);
      if (flush === c.Z_BLOCK && INFLATERS.includes(cls)) return refused(LINES.flushKinds);
      return undefined;
    case 'BrotliCompress':
    case 'BrotliDecompress':
      if (
        cls === 'BrotliCompress' &&
        finishFlush !== undefined &&
        finishFlush !== c.BROTLI_OPERATION_FINISH
      )
        return refused(LINES.flushKinds);
      if (flush !== undefined && flush > c.BROTLI_OPERATION_FLUSH) return refused(LINES.flushKinds);
      if (BROTLI_DICTIONARY && usable(options?.dictionary)) return refused(LINES.brotliDictionary);
      return undefined;
    case 'ZstdCompress':
    case 'ZstdDecompress': {
      const encoder = cls === 'ZstdCompress';
      if (encoder && finishFlush !== undefined && finishFlush !== c.ZSTD_e_end)
        return refused(LINES.flushKinds);
      if (flush !== undefined && flush > c.ZSTD_e_flush) return refused(LINES.flushKinds);
      return undefined;
    }
    default:
      return undefined;
  }
}

module.exports = { documented, LINES };
