'use strict';
// What node:zlib of this Node does where its lines differ, found by trying
// node:zlib itself (a feature, never a version string): each answer is
// asked once, when first needed, and kept. On a Node whose node:zlib lacks
// the feature's codec (zstd before Node 22.15), the newest line's answer.
//
// The lines, for the record (Node 20, 22, 24, 26):
// - zstd's `pledgedSrcSize`: not there (20); only a negative one refused
//   (22); type-checked (24+).
// - zstd's `dictionary`: a non-view ignored (22); anything but a binary
//   refused (24+).
// - brotli's `dictionary`: not there (20, 22); taken (24+).
// - `rejectGarbageAfterEnd`: not there (20); a boolean read by the stream
//   (22.23); checked, and a gzip input's one member only (24+).
// - a zstd input's frames after the first: ignored (22); read (24+).
// - a zstd input cut short: what was decoded, no error (22);
//   Z_BUF_ERROR (24+).
// - reset() of a gzip member begun, or a zstd frame that made output:
//   taken, a cut member then a new one (20-24); ERR_ZLIB_INCOMPLETE_FRAME
//   (26).

// node:zlib as an any: its zstd functions are newer than the types installed.
const nodeZlib = /** @type {any} */ (require('node:zlib'));
const { mapGet, mapSet } = require('../base/collections');

/** The answers found so far, by question. */
const found = new Map();

/** `ask()`'s answer, asked once. */
function once(name, ask) {
  let answer = mapGet(found, name);
  if (answer === undefined) {
    answer = ask();
    mapSet(found, name, answer);
  }
  return answer;
}

/** The code node:zlib's class `cls` throws for `options`, or undefined if it takes them. */
function refusal(cls, options) {
  let stream;
  try {
    stream = new nodeZlib[cls](options);
  } catch (err) {
    return err?.code ?? 'thrown';
  }
  stream.close();
  return undefined;
}

const hasZstd = () => typeof nodeZlib.ZstdCompress === 'function';

/** 'checked' (24+), 'negative' (22: only a negative size refused). */
function pledgedChecks() {
  return once('pledged', () => {
    if (!hasZstd()) return 'checked';
    return refusal('ZstdCompress', { pledgedSrcSize: null }) === undefined ? 'negative' : 'checked';
  });
}

/** zstd's dictionary: true where anything but a binary is refused (24+), false where ignored (22). */
function zstdDictionaryChecked() {
  return once(
    'zstdDictionary',
    () => !hasZstd() || refusal('ZstdCompress', { dictionary: 1 }) !== undefined,
  );
}

/** True where node:zlib's brotli takes a dictionary (24+). */
function brotliDictionary() {
  return once('brotliDictionary', () => refusal('BrotliCompress', { dictionary: 1 }) !== undefined);
}

/**
 * `rejectGarbageAfterEnd`: 'none' (not an option here), 'stream' (22.23:
 * the stream refuses what its decoder left; a gzip input's members are
 * still read), 'checked' (24+: checked as a boolean; one gzip member).
 */
function garbageRule() {
  return once('garbage', () => {
    if (refusal('Deflate', { rejectGarbageAfterEnd: 1 }) === 'ERR_INVALID_ARG_TYPE')
      return 'checked';
    const probe = new nodeZlib.Deflate({ rejectGarbageAfterEnd: true });
    probe.close();
    return probe._rejectGarbageAfterEnd === true ? 'stream' : 'none';
  });
}

/** True where a zstd input's frames after the first are read (24+), false where ignored (22). */
function zstdFrames() {
  return once('zstdFrames', () => {
    if (!hasZstd()) return true;
    const two = Buffer.concat([nodeZlib.zstdCompressSync('a'), nodeZlib.zstdCompressSync('b')]);
    return nodeZlib.zstdDecompressSync(two).length === 2;
  });
}

/** True where a zstd input cut short fails with Z_BUF_ERROR (24+), false where it is no error (22). */
function zstdCutRefused() {
  return once('zstdCut', () => {
    if (!hasZstd()) return true;
    try {
      nodeZlib.zstdDecompressSync(nodeZlib.zstdCompressSync('a').subarray(0, 5));
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * True where reset() of a gzip stream whose member has begun (or of a zstd
 * one whose frame made output) fails the stream with
 * ERR_ZLIB_INCOMPLETE_FRAME (26+), found through node:zlib's own handle
 * (its synchronous write): false where that cannot be tried.
 */
function resetRefusesIncomplete() {
  return once('resetIncomplete', () => {
    try {
      const probe = new nodeZlib.Gzip();
      probe.on('error', () => {});
      const input = Buffer.from('x');
      const { Z_NO_FLUSH } = nodeZlib.constants;
      probe._handle.writeSync(Z_NO_FLUSH, input, 0, 1, probe._outBuffer, 0, probe._chunkSize);
      probe.reset();
      const refused = probe.errored?.code === 'ERR_ZLIB_INCOMPLETE_FRAME';
      probe.destroy();
      return refused;
    } catch {
      return false;
    }
  });
}

module.exports = {
  resetRefusesIncomplete,
  zstdCutRefused,
  pledgedChecks,
  zstdDictionaryChecked,
  brotliDictionary,
  garbageRule,
  zstdFrames,
};
