'use strict';
// What a zlib module does with one case, as plain data two modules'
// answers can be compared by (`assert.deepStrictEqual`): whether making
// the stream throws (the error's class, code and message), and otherwise
// what a stream and the async one-shot give: an error's class, code, errno
// and message, or the output. An encoder's bytes may differ from
// node:zlib's (docs/zlib.md, "the compressed bytes"), so its output is
// compared by what node:zlib's decoder makes of it.

const { createHash } = require('node:crypto');
const nodeZlib = require('node:zlib');

/**
 * The longest a stream or a one-shot may take before it counts as a hang:
 * a hang guard, not a timing claim. The heaviest case (zstd at level 22,
 * ~0.4 s of CPU and ~700 MB of tables) runs on the pool's threads, niced
 * by 10 (`niceIncrement`): on a machine busy with work at nice 0 they get
 * about a tenth of a core, and it took past 10 s there.
 */
const HANG_MS = 60_000;

/** An error as compared: what a caller can see of it. */
function errorOf(err) {
  if (err === null || typeof err !== 'object') return { thrown: String(err) };
  return { class: err.constructor?.name, code: err.code, errno: err.errno, message: err.message };
}

/** Bytes as compared: their length and a short digest. */
function bytesOf(bytes) {
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  return `${bytes.length} bytes ${digest}`;
}

/** node:zlib's decoder of each encoder class, reading what it was told to write. */
const DECODERS = {
  Gzip: 'gunzipSync',
  Deflate: 'inflateSync',
  DeflateRaw: 'inflateRawSync',
  BrotliCompress: 'brotliDecompressSync',
  ZstdCompress: 'zstdDecompressSync',
};

/** A decoder's options that read what `options` made (its dictionary, a large window). */
function readerOptions(cls, options, finish) {
  const c = nodeZlib.constants;
  const given = options !== null && typeof options === 'object' ? options : {};
  const reader = {};
  const { dictionary } = given;
  if (dictionary !== undefined && cls !== 'Gzip') reader.dictionary = dictionary;
  if (cls === 'BrotliCompress') {
    reader.params = { [c.BROTLI_DECODER_PARAM_LARGE_WINDOW]: true };
    if (!finish) reader.finishFlush = c.BROTLI_OPERATION_FLUSH;
  } else if (cls === 'ZstdCompress') {
    if (!finish) reader.finishFlush = c.ZSTD_e_flush;
  } else if (!finish) {
    reader.finishFlush = c.Z_SYNC_FLUSH;
  }
  return reader;
}

/**
 * An encoder's output as compared: what node:zlib decodes from it, without
 * and with its end required (an encoder told not to finish leaves its
 * stream open, which only the first reads).
 */
function encodedOf(cls, options, bytes) {
  const decode = nodeZlib[DECODERS[cls]];
  const read = (finish) => {
    try {
      return bytesOf(decode(bytes, readerOptions(cls, options, finish)));
    } catch (err) {
      return { error: err.code };
    }
  };
  return { decoded: read(false), finished: read(true) };
}

/** What is compared of an output: a decoder's bytes, an encoder's decoded. */
function outputOf(cls, options, bytes) {
  return cls in DECODERS ? encodedOf(cls, options, bytes) : bytesOf(bytes);
}

/** `promise`, or 'hang' after HANG_MS. */
function withinTime(promise) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ hang: true }), HANG_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** `input` (bytes, or a string) cut in `pieces` writes of about equal size (of an even length). */
function piecesOf(input, pieces) {
  const out = [];
  const step = 2 * Math.ceil(input.length / pieces / 2) || 2;
  for (let at = 0; at < input.length; at += step) out.push(input.slice(at, at + step));
  return out;
}

/**
 * A stream of class `cls` made with `options`, given `input` in `pieces`
 * writes and ended: its construction error, or its output and error.
 */
async function streamRun(zlib, cls, options, input, pieces = 3) {
  let stream;
  try {
    stream = new zlib[cls](options);
  } catch (err) {
    return { threw: errorOf(err) };
  }
  const chunks = [];
  let types = new Set();
  let chunkSize = 0;
  stream.on('data', (chunk) => {
    types.add(Buffer.isBuffer(chunk) ? 'Buffer' : typeof chunk);
    if (Buffer.isBuffer(chunk)) {
      chunks.push(chunk);
      chunkSize = Math.max(chunkSize, chunk.length);
    }
  });
  const settled = new Promise((resolve) => {
    stream.on('end', () => resolve({ ended: true }));
    stream.on('error', (err) => resolve({ error: errorOf(err) }));
  });
  try {
    for (const piece of piecesOf(input, pieces)) stream.write(piece);
    stream.end();
  } catch (err) {
    stream.destroy();
    return { writeThrew: errorOf(err) };
  }
  const result = await withinTime(settled);
  if (result.hang) {
    stream.destroy();
    return result;
  }
  if (result.error) return result;
  const wanted = options !== null && typeof options === 'object' ? options.chunkSize : undefined;
  return {
    output: outputOf(cls, options, Buffer.concat(chunks)),
    types: [...types].sort(),
    // Each pushed piece at most chunkSize (16 KiB by default).
    withinChunkSize: chunkSize <= (Number.isFinite(wanted) && wanted >= 64 ? wanted : 16384),
  };
}

/** The async one-shot `fn` of class `cls` on `input` with `options`: its throw, error or output. */
async function oneShotRun(zlib, fn, cls, options, input) {
  let settle;
  const settled = new Promise((resolve) => {
    settle = resolve;
  });
  try {
    zlib[fn](input, options, (err, result) => settle({ err, result }));
  } catch (err) {
    return { threw: errorOf(err) };
  }
  const got = await withinTime(settled);
  if (got.hang) return got;
  if (got.err) return { error: errorOf(got.err) };
  const { result } = got;
  if (Buffer.isBuffer(result)) return { output: outputOf(cls, options, result) };
  return {
    info: result.engine instanceof zlib[cls],
    output: outputOf(cls, options, result.buffer),
  };
}

module.exports = { streamRun, oneShotRun, errorOf, bytesOf, piecesOf, DECODERS };
