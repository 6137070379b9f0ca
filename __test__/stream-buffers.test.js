'use strict';
// The contracts of Node's streams about memory, kept by the pool's codec
// streams: when a producer may reuse its Buffer, what highWaterMark bounds
// on either side, and what a write's callback means. Each test runs the
// same assertions against node:zlib (the control) and the pool's stream in
// the same run; where tidepool differs on purpose, the test says so and
// asserts both sides.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { once } = require('node:events');
const { Pool } = require('..');
const { waitFor } = require('./wait');
const { fill, collect, written } = require('./stream-io');

/** The control's and the pool's version of each codec stream. */
function codecs(pool) {
  return [
    ['gzip', () => zlib.createGzip(), () => pool.createGzip(), zlib.gunzipSync],
    [
      'deflateRaw',
      () => zlib.createDeflateRaw(),
      () => pool.createDeflateRaw(),
      zlib.inflateRawSync,
    ],
    [
      'brotli',
      () => zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
      () => pool.createBrotliCompress({ params: { quality: 4 } }),
      zlib.brotliDecompressSync,
    ],
  ];
}

test('a producer that refills one Buffer after each write callback gets node:zlib’s bytes', async () => {
  const pool = new Pool();
  try {
    for (const [name, control, ours, decode] of codecs(pool)) {
      for (const [who, make] of [
        ['node:zlib', control],
        ['tidepool', ours],
      ]) {
        const stream = make();
        const out = collect(stream);
        const ended = once(stream, 'end');
        const buffer = Buffer.alloc(64 * 1024);
        const expected = [];
        for (let i = 0; i < 64; i++) {
          fill(buffer, i);
          expected.push(Buffer.from(buffer));
          // The callback says the bytes were consumed: the next round may overwrite them.
          await written(stream, buffer);
        }
        stream.end();
        await ended;
        assert.ok(decode(Buffer.concat(out)).equals(Buffer.concat(expected)), `${who} ${name}`);
      }
    }
  } finally {
    await pool.close();
  }
});

test('highWaterMark bounds the writable side: write() says false, then drain', async () => {
  const pool = new Pool();
  try {
    // (node:crypto's Hash consumes a write before write() returns, so it
    // never says false; the pool's hash consumes it on a thread, as a
    // codec stream does.)
    for (const [who, make] of [
      ['node:zlib', () => zlib.createDeflate({ level: 0, highWaterMark: 16 })],
      ['tidepool', () => pool.createDeflate({ params: { level: 0 }, highWaterMark: 16 })],
      ['tidepool hash', () => pool.createHash('sha256', { highWaterMark: 16 })],
    ]) {
      const stream = make();
      stream.resume();
      assert.equal(stream.write(Buffer.alloc(10240, 'x')), false, who);
      assert.equal(stream.writableNeedDrain, true, who);
      await once(stream, 'drain');
      assert.equal(stream.writableNeedDrain, false, who);
      stream.destroy();
    }
  } finally {
    await pool.close();
  }
});

test('inside a write callback, read() returns the output of what was written', async () => {
  const pool = new Pool();
  try {
    // A highWaterMark that holds the output of the write: past it, both
    // hold the callback until the reader reads (Transform's backpressure).
    for (const [who, make] of [
      ['node:zlib', () => zlib.createDeflate({ level: 1, highWaterMark: 1 << 20 })],
      ['tidepool', () => pool.createDeflate({ params: { level: 1 }, highWaterMark: 1 << 20 })],
    ]) {
      const stream = make();
      const data = fill(Buffer.alloc(256 * 1024), 3);
      const first = await new Promise((resolve) =>
        stream.write(data, () => resolve(stream.read())),
      );
      assert.ok(first !== null && first.length > 0, `${who}: read() in the callback`);
      const rest = collect(stream);
      stream.end();
      await once(stream, 'end');
      assert.ok(zlib.inflateSync(Buffer.concat([first, ...rest])).equals(data), who);
    }
  } finally {
    await pool.close();
  }
});

/**
 * Raw deflate of `total` zero bytes (a multiple of 1 MiB), made without
 * holding them: after the first MiB, with a window of zeros behind it,
 * every MiB compresses to the same bytes, so one such block is repeated.
 */
async function zerosDeflateRaw(total) {
  const mib = Buffer.alloc(1 << 20);
  const z = zlib.createDeflateRaw({ level: 9 });
  const out = collect(z);
  const step = async () => {
    await written(z, mib);
    await new Promise((resolve) => z.flush(zlib.constants.Z_SYNC_FLUSH, resolve));
    return Buffer.concat(out.splice(0));
  };
  const first = await step();
  const block = await step();
  assert.ok(block.equals(await step()), 'the repeated block is byte-identical');
  z.end();
  await once(z, 'end');
  const tail = Buffer.concat(out);
  return Buffer.concat([
    first,
    ...Array.from({ length: total / (1 << 20) - 1 }, () => block),
    tail,
  ]);
}

test('a reader that stops holds the decoder: memory near highWaterMark, whatever the ratio', async () => {
  const pool = new Pool();
  try {
    const packed = await zerosDeflateRaw(256 << 20);
    const highWaterMark = 16 * 1024;
    for (const [who, make] of [
      ['node:zlib', () => zlib.createInflateRaw({ highWaterMark })],
      ['tidepool', () => pool.createInflateRaw({ highWaterMark, maxOutputBytes: 2 ** 40 })],
    ]) {
      const stream = make();
      const before = process.memoryUsage().arrayBuffers;
      stream.end(packed);
      // Nobody reads: the stream fills its reader's buffer, then stops.
      await waitFor(() => stream.readableLength >= highWaterMark, {
        what: `${who}: output up to highWaterMark`,
      });
      if (who === 'tidepool')
        await waitFor(() => pool.stats().pending === 0, { what: 'the step in flight settles' });
      else await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(
        stream.readableLength <= highWaterMark + 256 * 1024,
        `${who}: ${stream.readableLength} bytes buffered`,
      );
      // Now a slow reader: a chunk per turn of the event loop.
      let bytes = 0;
      let peak = 0;
      for await (const chunk of stream) {
        bytes += chunk.length;
        peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(bytes, 256 << 20, who);
      assert.ok(peak < 48 << 20, `${who}: ${peak} bytes held at most`);
    }
  } finally {
    await pool.close();
  }
});

test('a reader that reads once per turn holds every codec near highWaterMark: plus 64 KiB at most', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    const highWaterMark = 16 * 1024;
    const plain = fill(Buffer.alloc(4 << 20), 3);
    const noise = crypto.randomBytes(2 << 20);
    const cases = [
      ['gunzip', zlib.gzipSync(plain), 'createGunzip', {}],
      ['inflateRaw', zlib.deflateRawSync(plain), 'createInflateRaw', {}],
      ['brotliDecompress', zlib.brotliCompressSync(plain), 'createBrotliDecompress', {}],
      ['gzip', noise, 'createGzip', {}],
      ['deflate level 1', noise, 'createDeflate', { level: 1 }],
      ['brotliCompress', noise, 'createBrotliCompress', {}],
    ];
    for (const [name, input, factory, level] of cases) {
      for (const [who, make] of [
        ['node:zlib', () => zlib[factory]({ highWaterMark, ...level })],
        [
          'tidepool',
          () => pool[factory]({ highWaterMark, ...(level.level ? { params: level } : {}) }),
        ],
      ]) {
        const stream = make();
        let most = 0;
        let bytes = 0;
        let ended = false;
        stream.once('end', () => (ended = true));
        stream.end(input);
        const deadline = Date.now() + 60_000;
        while (!ended) {
          assert.ok(Date.now() < deadline, `${who} ${name}: no end within a minute`);
          await new Promise((resolve) => setImmediate(resolve));
          most = Math.max(most, stream.readableLength);
          bytes += stream.read()?.length ?? 0;
        }
        assert.ok(bytes > 0, `${who} ${name}: no output`);
        assert.ok(most <= highWaterMark + 64 * 1024, `${who} ${name}: ${most} bytes buffered`);
      }
    }
  } finally {
    await pool.close();
  }
});

test(
  'one stream may produce more than buffer.constants.MAX_LENGTH in all',
  { timeout: 300_000 },
  async () => {
    const pool = new Pool();
    try {
      const total = 2 ** 32 + (64 << 20);
      const packed = await zerosDeflateRaw(total);
      const stream = pool.createInflateRaw({ maxOutputBytes: 2 ** 40, highWaterMark: 1 << 20 });
      stream.end(packed);
      let bytes = 0;
      let largest = 0;
      for await (const chunk of stream) {
        bytes += chunk.length;
        largest = Math.max(largest, chunk.length);
      }
      assert.equal(bytes, total);
      assert.ok(largest <= (1 << 20) + 256 * 1024, `a chunk of ${largest} bytes`);
      assert.equal(stream.bytesWritten, packed.length);
    } finally {
      await pool.close();
    }
  },
);

test('stream chunks are Buffers whatever the pool’s encoding', async () => {
  for (const encoding of ['hex', 'base64']) {
    const pool = new Pool({ encoding });
    try {
      const data = fill(Buffer.alloc(3 << 20), 9);
      const gzip = pool.createGzip();
      const out = collect(gzip);
      gzip.end(data);
      await once(gzip, 'end');
      assert.ok(out.length > 0 && out.every((c) => Buffer.isBuffer(c)), encoding);
      const back = await new Promise((resolve, reject) => {
        const gunzip = pool.createGunzip();
        const parts = collect(gunzip);
        gunzip.on('error', reject).on('end', () => resolve(Buffer.concat(parts)));
        gunzip.end(Buffer.concat(out));
      });
      assert.ok(back.equals(data), encoding);
      const hash = pool.createHash('sha256');
      hash.update(data);
      const digest = await hash.digest();
      assert.ok(Buffer.isBuffer(digest), encoding);
      assert.ok(digest.equals(crypto.createHash('sha256').update(data).digest()), encoding);
      // post() keeps the pool's encoding.
      assert.equal(typeof (await pool.post(data)).result, 'string');
      // A decoder whose output in all would not fit one string in the encoding.
      const zeros = pool.createInflateRaw({ maxOutputBytes: 2 ** 40, highWaterMark: 1 << 20 });
      zeros.end(await zerosDeflateRaw(320 << 20));
      let bytes = 0;
      for await (const chunk of zeros) {
        assert.ok(Buffer.isBuffer(chunk), encoding);
        bytes += chunk.length;
      }
      assert.equal(bytes, 320 << 20, encoding);
    } finally {
      await pool.close();
    }
  }
});

test('writes of one turn to an idle deflate stream go as one task: corked until the next tick', async () => {
  // A documented difference (docs/api.md, "Differences from node:zlib and
  // node:crypto"; docs/zlib.md, "What differs"):
  // node:zlib's first write goes in flight at once, the others wait.
  const pool = new Pool({ maxThreads: 2 });
  try {
    const input = fill(Buffer.alloc(2 << 20), 7);
    for (const [who, make] of [
      ['node:zlib', () => zlib.createGzip()],
      ['tidepool', () => pool.createGzip()],
    ]) {
      const pooled = who === 'tidepool';
      // Corked until the next tick, then one task for both writes.
      const stream = make();
      const out = [];
      stream.on('data', (chunk) => out.push(chunk));
      const before = pool.stats().completed;
      const written = [0, 1].map(
        (i) =>
          new Promise((resolve, reject) =>
            stream.write(input.subarray(i << 20, (i + 1) << 20), (err) =>
              err ? reject(err) : resolve(),
            ),
          ),
      );
      assert.equal(stream.writableCorked, pooled ? 1 : 0, who);
      await new Promise((resolve) => process.nextTick(resolve));
      assert.equal(stream.writableCorked, 0, who);
      await Promise.all(written);
      if (pooled) assert.equal(pool.stats().completed - before, 1, 'one task for both writes');
      stream.end();
      await once(stream, 'end');
      assert.ok(zlib.gunzipSync(Buffer.concat(out)).equals(input), who);
      // Destroyed in that turn: node:zlib's first write was in flight; the
      // pool's were all waiting, and fail as waiting writes do.
      const destroyed = make();
      destroyed.on('error', () => {});
      const calls = [0, 1].map(
        (i) =>
          new Promise((resolve) =>
            destroyed.write(input.subarray(i << 20, (i + 1) << 20), resolve),
          ),
      );
      destroyed.destroy();
      const errors = (await Promise.all(calls)).map((e) => e?.code);
      assert.deepEqual(
        errors,
        [pooled ? 'ERR_STREAM_DESTROYED' : undefined, 'ERR_STREAM_DESTROYED'],
        who,
      );
    }
    // A caller's own cork() holds as in Node, even after an uncork() of a
    // stream it had not corked: the pool's tick does not undo it.
    for (const [who, make] of [
      ['node:zlib', () => zlib.createGzip()],
      ['tidepool', () => pool.createGzip()],
    ]) {
      const stream = make();
      const log = [];
      stream.resume();
      stream.write('a', () => log.push('a'));
      stream.uncork();
      stream.cork();
      stream.write('b', () => log.push('b'));
      // Past the pool's own tick, and 'a' through: 'b' still waits.
      await new Promise((resolve) => setImmediate(resolve));
      await waitFor(() => log.includes('a'), { what: `${who}: 'a' called back` });
      log.push(`corked ${stream.writableCorked}, ${stream.writableLength} bytes waiting`);
      stream.uncork();
      stream.end();
      await once(stream, 'end');
      assert.deepEqual(log, ['a', 'corked 1, 1 bytes waiting', 'b'], who);
    }
  } finally {
    await pool.close();
  }
});

test('a write that makes no output is called back at once, even with the reader full (highWaterMark 0, unshift())', async () => {
  const pool = new Pool();
  try {
    for (const [who, make] of [
      ['node:zlib', (o) => zlib.createGzip(o)],
      ['tidepool', (o) => pool.createGzip(o)],
    ]) {
      const zero = make({ highWaterMark: 0 });
      zero.on('data', () => {});
      await written(zero, 'a');
      await written(zero, 'b');
      zero.destroy();
      const full = make();
      await written(full, 'first');
      while (full.read() !== null);
      full.unshift(Buffer.alloc(20_000)); // more than its highWaterMark, back in its reader's buffer
      await written(full, 'hello'); // no output for five bytes: nothing to wait for
      full.destroy();
      assert.ok(true, who);
    }
  } finally {
    await pool.close();
  }
});
