#!/usr/bin/env node
'use strict';
// A seeded property test of the pool's streams against Node's contracts,
// run as its own process so that a crash shows up as a failed run.
//
//   node __test__/fuzz/streams.js [--seconds 3] [--seed N]
//
// Each case is a codec stream or a hash driven the way real producers and
// consumers drive them, at random: chunks of random sizes written from ONE
// Buffer that the producer refills as soon as each write's callback runs
// (or update() returns), flush() calls, writes without waiting, random
// highWaterMarks on both sides, a reader that pauses, reads random sizes
// with read(n), or stops for a while; sometimes a destroy() or an abort in
// the middle. The oracles:
//   - the output decodes (node:zlib, or the pool's decoder where Node has
//     none) to exactly what was written; a digest is node:crypto's;
//   - the readable side never holds more than its highWaterMark plus one
//     step of output (OUTPUT_BOUND);
//   - every write callback runs exactly once; after a destroy or an abort
//     every callback has run and the stream closed;
//   - when the case is over, nothing of it is pending in the pool.

const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { Pool } = require('../..');
const zlibModule = require('../../lib/zlib');
const { seeded } = require('./seeded');

const { SECONDS, SEED, int, pick, chance } = seeded();

/**
 * Most bytes a reader's buffer may hold past its highWaterMark: one step's
 * budget (64 KiB) plus one call's worth of a codec's output (64 KiB). An
 * LZ4 decoder stops between blocks: it may add one whole block (the
 * stream encoders here use 64 KiB blocks, the one-shot kernel up to 4 MiB).
 */
const OUTPUT_BOUND = 128 * 1024 + 64;
const LZ4_BLOCK_BOUND = (4 << 20) + 64;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** `n` bytes, some text-like (compressible), some noise. */
function data(n) {
  const out = Buffer.alloc(n);
  let at = 0;
  while (at < n) {
    const run = Math.min(n - at, 1 + int(20_000));
    if (chance(0.7)) {
      const word = pick(['tide', 'pool ', 'stream ', '{"id":42}', '\n', 'aaaaaaaa']);
      for (let i = 0; i < run; i++) out[at + i] = word.charCodeAt(i % word.length);
    } else {
      crypto.randomFillSync(out, at, run);
    }
    at += run;
  }
  return out;
}

/** [encoder name, decoder name, node:zlib's one-shot decoder (or none)]. */
const CODECS = [
  ['createGzip', 'createGunzip', zlib.gunzipSync, zlib.gzipSync],
  ['createDeflate', 'createInflate', zlib.inflateSync, zlib.deflateSync],
  ['createDeflateRaw', 'createInflateRaw', zlib.inflateRawSync, zlib.deflateRawSync],
  [
    'createBrotliCompress',
    'createBrotliDecompress',
    zlib.brotliDecompressSync,
    zlib.brotliCompressSync,
  ],
  ['createZstdCompress', 'createZstdDecompress', undefined, undefined],
  ['createLz4Compress', 'createLz4Decompress', undefined, undefined],
];

function fail(message) {
  throw new Error(`${message} (seed ${SEED})`);
}

/** Calls `check` on every change of the reader's buffer. */
function watchBuffer(stream, highWaterMark, what, bound = OUTPUT_BOUND) {
  const pushes = [];
  const push = stream.push;
  stream.push = function (chunk, encoding) {
    const before = stream.readableLength;
    const more = push.call(this, chunk, encoding);
    pushes.push(`${before}+${chunk === null ? 'null' : chunk.length}`);
    // (A read(n) of more than the highWaterMark raises it: the reader asked for n.)
    const mark = Math.max(highWaterMark, stream.readableHighWaterMark);
    if (stream.readableLength > mark + bound) {
      fail(
        `${what}: the reader's buffer holds ${stream.readableLength} bytes at a highWaterMark of ${mark} (pushes: ${pushes.slice(-6).join(' ')})`,
      );
    }
    return more;
  };
}

/**
 * Drives `stream` as a producer that refills one Buffer: `input` in random
 * pieces, random flushes, and a reader of random habits. Resolves with what
 * was read. `stop` (optional): after how many writes to destroy (or abort).
 */
async function drive(stream, input, { flushKind, stop, abort, controls }) {
  const out = [];
  let callbacks = 0;
  let writes = 0;
  let ended = false;
  const closed = new Promise((resolve) => stream.on('close', resolve));
  const finished = new Promise((resolve, reject) => {
    stream.on('end', () => {
      ended = true;
      resolve();
    });
    stream.on('error', reject);
  });
  // The reader.
  const readerMode = pick(['flowing', 'read', 'lazy']);
  let reading = true;
  if (readerMode === 'flowing') {
    stream.on('data', (chunk) => {
      out.push(chunk);
      if (chance(0.1)) {
        stream.pause();
        setTimeout(() => stream.resume(), int(3));
      }
    });
  } else {
    const pull = async () => {
      while (reading) {
        let chunk;
        while ((chunk = stream.read(chance(0.5) ? undefined : 1 + int(100_000))) !== null)
          out.push(chunk);
        if (!reading || ended) return;
        await (readerMode === 'lazy' && chance(0.3)
          ? new Promise((r) => setTimeout(r, int(5)))
          : new Promise((r) => stream.once('readable', r)));
      }
    };
    pull();
  }
  // The producer: one Buffer, refilled once each write is called back.
  const buffer = Buffer.alloc(256 * 1024);
  const wait = chance(0.8);
  // The last piece written with end(piece) (one task with the end on an idle stream).
  const endWithLast = chance(0.3);
  let wroteEnd = false;
  const pending = [];
  for (let at = 0; at < input.length;) {
    const size = Math.min(input.length - at, pick([1, 100, 4096, 65536, 1 + int(256 * 1024)]));
    const view = buffer.subarray(0, size);
    input.copy(view, 0, at, at + size);
    at += size;
    const copy = wait ? view : Buffer.from(view); // without waiting, fresh memory each time
    const last = at === input.length && stop === undefined && endWithLast;
    const called = new Promise((resolve) => {
      const callback = (err) => {
        callbacks++;
        resolve(err);
      };
      // end(chunk, callback): the callback comes with 'finish' (or the error).
      if (last) stream.end(copy, callback);
      else stream.write(copy, callback);
    });
    writes++;
    if (last) {
      // Nothing after the end.
      wroteEnd = true;
      if (wait) await called;
      else pending.push(called);
      break;
    }
    if (stop !== undefined && writes === stop) {
      // The write in flight is called back once its task stopped.
      pending.push(called);
      if (abort !== undefined) abort.abort(new Error('fuzz abort'));
      else stream.destroy();
      break;
    }
    if (flushKind !== undefined && chance(0.1)) stream.flush(flushKind);
    // The deflate family's controls: none changes what the output decodes to.
    if (controls && chance(0.05)) stream.params(int(11) - 1, int(5));
    if (controls && chance(0.05)) {
      writes++;
      stream.write(Buffer.alloc(0), () => callbacks++);
    }
    if (wait) await called;
    else pending.push(called);
    if (chance(0.05)) await tick();
  }
  if (stop !== undefined) {
    finished.catch(() => {}); // the AbortError, or nothing
    await closed;
    await Promise.all(pending);
    if (callbacks !== writes) fail(`${writes} writes, ${callbacks} callbacks after a destroy`);
    reading = false;
    return undefined;
  }
  if (!wroteEnd) stream.end();
  await finished;
  await Promise.all(pending);
  reading = false;
  if (callbacks !== writes) fail(`${writes} writes, ${callbacks} callbacks`);
  return Buffer.concat(out);
}

async function codecCase(pool, what) {
  const [enc, dec, nodeDecode, nodeEncode] = pick(CODECS);
  const input = data(pick([0, 1, 1000, 100_000, 300_000, 1 << 20]));
  const highWaterMark = pick([16, 1024, 16 * 1024, 64 * 1024, 1 << 20]);
  const lz4 = enc === 'createLz4Compress' ? { params: { blockSize: 65536 } } : {};
  const flushKind =
    enc === 'createLz4Compress' || enc === 'createZstdCompress' || enc === 'createBrotliCompress'
      ? 1
      : pick([1, 2, 3]);
  // Sometimes node:zlib's class from @tidepool-rs/pool/zlib, with a chunkSize.
  const viaModule = enc !== 'createLz4Compress' && enc !== 'createZstdCompress' && chance(0.3);
  const encoder = viaModule
    ? zlibModule[enc]({ highWaterMark, chunkSize: pick([64, 1024, 16 * 1024, 100_000]) })
    : pool[enc]({ highWaterMark, ...lz4 });
  watchBuffer(encoder, highWaterMark, `${what} ${enc}${viaModule ? ' (module)' : ''}`);
  const controls = ['createGzip', 'createDeflate', 'createDeflateRaw'].includes(enc);
  const packed = await drive(encoder, input, { flushKind, controls });
  let back;
  if (nodeDecode !== undefined) {
    back = nodeDecode(packed);
  } else {
    const decoder = pool[dec]({ highWaterMark: 1 << 20 });
    back = await drive(decoder, packed, {});
  }
  if (!back.equals(input))
    fail(`${what} ${enc}: ${input.length} bytes came back as ${back.length} different ones`);
  // The decoder side, fed node's (or the pool's one-shot) output.
  const whole =
    nodeEncode !== undefined
      ? nodeEncode(input)
      : (await pool.post(input, { kernel: enc.slice(6, 7).toLowerCase() + enc.slice(7) })).result;
  const decoder = pool[dec]({ highWaterMark });
  watchBuffer(
    decoder,
    highWaterMark,
    `${what} ${dec}`,
    dec === 'createLz4Decompress' ? LZ4_BLOCK_BOUND : OUTPUT_BOUND,
  );
  const decoded = await drive(decoder, whole, {});
  if (!decoded.equals(input))
    fail(`${what} ${dec}: decoded ${decoded.length} bytes, not the ${input.length} encoded`);
}

async function hashCase(pool, what) {
  const name = pick(['sha256', 'sha1', 'md5', 'sha512']);
  const hash = pool.createHash(name, { highWaterMark: pick([16, 16 * 1024, 1 << 20]) });
  const reference = crypto.createHash(name);
  const buffer = Buffer.alloc(6 << 20);
  // Writes awaited (the buffer reused after each), or not (fresh memory, so
  // updates come while writes are under way: hashed in call order).
  const awaitWrites = chance(0.5);
  const pending = [];
  const copies = [];
  for (let round = int(40); round >= 0; round--) {
    const size = pick([0, 1, 100, 16 * 1024, 16 * 1024 + 1, 1 << 20, 5 << 20, int(300_000)]);
    const view = buffer.subarray(0, size);
    crypto.randomFillSync(view);
    reference.update(view);
    if (chance(0.6)) {
      hash.update(view);
    } else if (awaitWrites) {
      await new Promise((resolve, reject) =>
        hash.write(view, (err) => (err ? reject(err) : resolve())),
      );
    } else {
      const copy = Buffer.from(view);
      pending.push(
        new Promise((resolve, reject) =>
          hash.write(copy, (err) => (err ? reject(err) : resolve())),
        ),
      );
    }
    buffer.fill(0xa5, 0, size); // reused at once
    if (chance(0.1)) copies.push(copyCase(hash, reference, what, name));
    if (chance(0.2)) await tick();
  }
  await Promise.all(copies);
  const digest = chance(0.5)
    ? await hash.digest('hex')
    : await new Promise((resolve) => hash.end().once('data', (d) => resolve(d.toString('hex'))));
  await Promise.all(pending);
  const expected = reference.digest('hex');
  if (digest !== expected) fail(`${what} ${name}: ${digest}, not node:crypto's ${expected}`);
}

/**
 * hash.copy() at a random point: of everything so far (node:crypto's copy
 * of `reference`, the control), going on apart; refused with its typed
 * error only while writes wait in the stream's buffer.
 */
const copied = { made: 0, refused: 0 };
async function copyCase(hash, reference, what, name) {
  let copy;
  try {
    copy = hash.copy();
    copied.made++;
  } catch (err) {
    if (err.code !== 'ERR_TIDEPOOL_HASH_COPY' || hash.writableLength === 0)
      fail(`${what} ${name}: copy() threw ${err.code} (${hash.writableLength} bytes written)`);
    copied.refused++;
    return;
  }
  const control = reference.copy();
  const tail = crypto.randomBytes(int(70_000));
  copy.update(tail);
  control.update(tail);
  const digest = await copy.digest('hex');
  const expected = control.digest('hex');
  if (digest !== expected) fail(`${what} ${name} copy: ${digest}, not node:crypto's ${expected}`);
}

/**
 * Streams at work on a pool of their own, closed at a random moment: close()
 * resolves; every callback runs once; each stream either ends with every
 * byte it was given before close() or fails with ERR_TIDEPOOL_CLOSED.
 */
async function closeCase(what) {
  const pool = new Pool({ maxThreads: 1 + int(2) });
  const runs = Array.from({ length: 1 + int(4) }, async (_, i) => {
    const enc = pick(['createGzip', 'createDeflateRaw', 'createBrotliCompress']);
    // (brotli's default quality, 11, takes seconds per MiB: a task stops only between its calls.)
    const params = enc === 'createBrotliCompress' ? { quality: 4 } : {};
    const stream = pool[enc]({ highWaterMark: pick([16, 16 * 1024]), params });
    const out = [];
    stream.on('data', (c) => out.push(c));
    const ended = new Promise((resolve) => {
      stream.on('end', () => resolve('end'));
      stream.on('error', (err) => resolve(err.code));
    });
    let callbacks = 0;
    let writes = 0;
    for (let k = int(6); k >= 0; k--) {
      writes++;
      stream.write(data(pick([100, 100_000, 1 << 20])), () => callbacks++);
      if (chance(0.5)) await tick();
    }
    if (chance(0.7)) stream.end();
    const outcome = await Promise.race([
      ended,
      new Promise((resolve) => setTimeout(() => resolve('open'), 2000)),
    ]);
    if (outcome === 'open') stream.destroy();
    if (outcome !== 'end' && outcome !== 'open' && outcome !== 'ERR_TIDEPOOL_CLOSED')
      fail(`${what} ${i}: ${outcome}`);
    for (let t = 0; t < 2000 && callbacks !== writes; t++)
      await new Promise((r) => setTimeout(r, 5));
    if (callbacks !== writes)
      fail(`${what} ${i}: ${writes} writes, ${callbacks} callbacks (outcome ${outcome})`);
  });
  await new Promise((resolve) => setTimeout(resolve, int(30)));
  const closed = pool.close();
  const late = await Promise.race([
    closed.then(() => false),
    new Promise((resolve) => setTimeout(() => resolve(true), 30_000)),
  ]);
  if (late) fail(`${what}: close() did not resolve`);
  await Promise.all(runs);
}

async function destroyCase(pool, what) {
  const [enc] = pick(CODECS);
  const abort = chance(0.5) ? new AbortController() : undefined;
  const stream = pool[enc]({ highWaterMark: pick([16, 16 * 1024]), signal: abort?.signal });
  stream.on('error', () => {});
  await drive(stream, data(1 << 20), { stop: 1 + int(6), abort });
  if (!stream.destroyed) fail(`${what} ${enc}: not destroyed`);
}

async function main() {
  const pool = new Pool({ maxThreads: 1 + int(3) });
  const deadline = Date.now() + SECONDS * 1000;
  let cases = 0;
  // A case that waits for what never comes would let the process exit
  // quietly (nothing keeps the loop alive): a watchdog keeps it, and fails
  // a case that takes this long.
  let started = Date.now();
  const watchdog = setInterval(() => {
    if (Date.now() - started > 30_000) {
      console.error(`case ${cases} did not finish in 30 s (seed ${SEED})`);
      process.exit(1);
    }
  }, 1000);
  while (Date.now() < deadline) {
    started = Date.now();
    const what = `case ${cases}`;
    const kind = int(11);
    if (kind < 5) await codecCase(pool, what);
    else if (kind < 8) await hashCase(pool, what);
    else if (kind < 10) await destroyCase(pool, what);
    else await closeCase(what);
    cases++;
    // Nothing of a finished case is left in the pool (a step cut short
    // settles once its thread sees it: 10 s is a hang guard, not a speed).
    const settledBy = Date.now() + 10_000;
    while (pool.stats().pending !== 0 && Date.now() < settledBy)
      await new Promise((r) => setTimeout(r, 1));
    if (pool.stats().pending !== 0) fail(`${what}: ${pool.stats().pending} tasks still pending`);
  }
  clearInterval(watchdog);
  await pool.close();
  console.log(
    `stream fuzz: ${cases} cases (hash copies: ${copied.made} made, ${copied.refused} refused), seed ${SEED}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
