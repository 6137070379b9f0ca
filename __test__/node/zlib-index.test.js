'use strict';
// Adapted from nodejs/node test/parallel/test-zlib.js (test/parallel/zlib/
// index.js): every encoder/decoder pair (Deflate/Inflate, Gzip/Gunzip,
// Deflate/Unzip, Gzip/Unzip, DeflateRaw/InflateRaw, BrotliCompress/
// BrotliDecompress), given the same options (level, windowBits, memLevel,
// strategy), fed by an old-style stream that trickles its data in blocks
// (pausing when told) into an old-style sink: the exact bytes come out,
// for each input file. Also: gzipSync() refuses windowBits 8 (no
// segfault), createDeflateRaw() takes it, and a DeflateRaw of window 9
// read by an InflateRaw of window 8 gives the input back.
//
// Deviations:
// - Upstream's fixtures (person.jpg, elipses.txt, empty.txt) are not here:
//   the inputs are made in the test, deterministically: 45658 bytes like a
//   JPEG (mostly noise, some runs), 10000 '…' (30000 bytes of UTF-8), and
//   nothing.
// - The matrix. Upstream tests one combination (level 6, windowBits 15,
//   memLevel 8, strategy 0, chunkSize 16 KiB, trickle 1024) unless PUMMEL
//   is set, then the whole cross product (11 x 8 x 9 x 5 x 4 x 3). Here
//   each dimension takes every one of upstream's values in turn, the others
//   at that default (35 combinations), and the extremes of level,
//   windowBits and memLevel meet each strategy but the default (32 more):
//   67 instead of 47520, so that it runs in seconds. The brotli pair runs
//   only where chunkSize or trickle vary (it reads none of the others).
// - windowBits 8 only for the raw pair: zlib makes a deflate stream's 8
//   a 9 and says 9 in its header, which an inflate of window 8 refuses
//   ("invalid window size"), and Gzip refuses 8 (the first test);
//   upstream's PUMMEL matrix fails there too.
// - chunkSize is passed to both ends (upstream loops over it but passes
//   only the four options above).

const test = require('node:test');
const assert = require('node:assert/strict');
const { Readable, Stream } = require('node:stream');
const { both } = require('./harness');

/** `size` deterministic bytes like a JPEG's: xorshift32 noise, with short runs. */
function jpegLike(size) {
  const out = Buffer.alloc(size);
  let x = 0x6d2b79f5;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = (x & 0x3f) === 0 ? 0xff : (x >>> 8) & 0xff;
    if (i % 1000 < 24) out[i] = i % 1000;
  }
  return out;
}

const files = {
  'person.jpg': jpegLike(45658),
  'elipses.txt': Buffer.from('…'.repeat(10000)),
  'empty.txt': Buffer.alloc(0),
};

/** Keeps everything written; at the end, emits it as one Buffer ('data'), then 'end'. */
class BufferStream extends Stream {
  constructor() {
    super();
    this.chunks = [];
    this.length = 0;
    this.writable = true;
    this.readable = true;
  }

  write(chunk) {
    this.chunks.push(chunk);
    this.length += chunk.length;
    return true;
  }

  end(chunk) {
    if (chunk) this.write(chunk);
    this.emit('data', Buffer.concat(this.chunks, this.length));
    this.emit('end');
    return true;
  }
}

/** Emits end(chunk)'s chunk in blocks of `trickle` bytes, one per tick, while not paused. */
class SlowStream extends Stream {
  constructor(trickle) {
    super();
    this.trickle = trickle;
    this.offset = 0;
    this.readable = this.writable = true;
  }

  write() {
    throw new Error('not implemented, just call ss.end(chunk)');
  }

  pause() {
    this.paused = true;
    this.emit('pause');
  }

  resume() {
    if (this.ended) return;
    this.emit('resume');
    if (!this.chunk) return;
    this.paused = false;
    this.#emit();
  }

  #emit() {
    if (this.paused) return;
    if (this.offset >= this.length) {
      this.ended = true;
      this.emit('end');
      return;
    }
    const end = Math.min(this.offset + this.trickle, this.length);
    const block = this.chunk.subarray(this.offset, end);
    this.offset += block.length;
    this.emit('data', block);
    process.nextTick(() => this.#emit());
  }

  end(chunk) {
    this.chunk = chunk;
    this.length = chunk.length;
    this.resume();
    return this.ended;
  }
}

const PAIRS = [
  ['Deflate', 'Inflate'],
  ['Gzip', 'Gunzip'],
  ['Deflate', 'Unzip'],
  ['Gzip', 'Unzip'],
  ['DeflateRaw', 'InflateRaw'],
  ['BrotliCompress', 'BrotliDecompress'],
];

/** Upstream's values of each dimension, and the one used when another varies. */
const DIMENSIONS = {
  chunkSize: { values: [128, 1024, 1024 * 16, 1024 * 1024], fallback: 1024 * 16 },
  trickle: { values: [128, 1024, 1024 * 1024], fallback: 1024 },
  level: { values: [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], fallback: 6 },
  windowBits: { values: [8, 9, 10, 11, 12, 13, 14, 15], fallback: 15 },
  memLevel: { values: [1, 2, 3, 4, 5, 6, 7, 8, 9], fallback: 8 },
  strategy: { values: [0, 1, 2, 3, 4], fallback: 0 },
};

/** Each dimension's values in turn, the others at their fallback; the defaults once. */
function combinations() {
  const defaults = Object.fromEntries(
    Object.entries(DIMENSIONS).map(([name, { fallback }]) => [name, fallback]),
  );
  const out = [defaults];
  for (const [name, { values, fallback }] of Object.entries(DIMENSIONS)) {
    for (const value of values) if (value !== fallback) out.push({ ...defaults, [name]: value });
  }
  // And the corners together: the extremes of level, windowBits and
  // memLevel with each strategy but the default.
  for (const level of [0, 9])
    for (const windowBits of [9, 15])
      for (const memLevel of [1, 9])
        for (const strategy of [1, 2, 3, 4])
          out.push({ ...defaults, level, windowBits, memLevel, strategy });
  return out;
}

/**
 * Whether the brotli pair runs `options`: those where only chunkSize or
 * trickle differ from the defaults (brotli reads none of the others).
 */
function brotliVaries(options) {
  return ['level', 'windowBits', 'memLevel', 'strategy'].every(
    (name) => options[name] === DIMENSIONS[name].fallback,
  );
}

test('gzipSync() refuses windowBits 8; createDeflateRaw() takes it', async () => {
  await both(
    (zlib) => {
      assert.throws(() => zlib.gzipSync(Buffer.alloc(0), { windowBits: 8 }), {
        code: 'ERR_OUT_OF_RANGE',
        name: 'RangeError',
        message:
          'The value of "options.windowBits" is out of range. It must be >= 9 and <= 15. Received 8',
      });
      zlib.createDeflateRaw({ windowBits: 8 }).destroy();
    },
    { work: false },
  );
});

test('DeflateRaw windowBits 9 read by InflateRaw windowBits 8', async () => {
  // An inflater of window 8 reads the stream of a deflater that made 8 a 9
  // (most zlibs do) and still wrote a valid 8-bit-window stream.
  const file = files['person.jpg'];
  await both(async (zlib, common, who) => {
    const raw = [];
    const reinflated = [];
    const source = Readable.from([file]);
    source.on('data', (chunk) => raw.push(chunk));
    await new Promise((resolve, reject) => {
      source
        .pipe(zlib.createDeflateRaw({ windowBits: 9 }))
        .on('error', reject)
        .pipe(zlib.createInflateRaw({ windowBits: 8 }))
        .on('error', reject)
        .on('data', (chunk) => reinflated.push(chunk))
        .on(
          'end',
          common.mustCall(() =>
            assert.ok(Buffer.concat(raw).equals(Buffer.concat(reinflated)), who),
          ),
        )
        .on('close', common.mustCall(resolve, 1));
    });
  });
});

/** One pipeline: file -> SlowStream -> Def -> Inf -> BufferStream; resolves once it checked. */
function roundTrip(zlib, common, who, file, options, [Def, Inf]) {
  const input = files[file];
  const { trickle, ...opts } = options;
  const def = new zlib[Def](opts);
  const inf = new zlib[Inf](opts);
  const ss = new SlowStream(trickle);
  const buf = new BufferStream();
  return new Promise((resolve, reject) => {
    def.on('error', reject);
    inf.on('error', reject);
    // The same bytes must come out.
    buf.on(
      'data',
      common.mustCall((c) => {
        const msg = `${who}: ${file} ${JSON.stringify(options)} ${Def} -> ${Inf}`;
        assert.ok(c.equals(input), msg);
        resolve();
      }),
    );
    ss.pipe(def).pipe(inf).pipe(buf);
    ss.end(input);
  });
}

test('every pair gives back each file, option by option', async () => {
  await both(async (zlib, common, who) => {
    for (const options of combinations()) {
      const pairs = PAIRS.filter(([Def]) => {
        if (Def === 'BrotliCompress') return brotliVaries(options);
        return options.windowBits !== 8 || Def === 'DeflateRaw';
      });
      const runs = [];
      for (const file of Object.keys(files)) {
        for (const pair of pairs) runs.push(roundTrip(zlib, common, who, file, options, pair));
      }
      await Promise.all(runs);
    }
  });
});
