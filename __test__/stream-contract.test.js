'use strict';
// The contracts of Node's streams, kept by the pool's streams: each test
// runs the same assertions against node:zlib / node:crypto (the control)
// and against the pool's stream, in the same run. Where tidepool differs on
// purpose, the test says so and asserts both sides.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const zlib = require('node:zlib');
const { once, getEventListeners } = require('node:events');
const { pipeline } = require('node:stream/promises');
const { Readable, Writable } = require('node:stream');
const { Pool, micros } = require('..');
const { waitFor, holdThread } = require('./wait');

/**
 * gc(), to measure what is held rather than what the collector has not
 * taken yet (set at run time: node --test gives a file no flags).
 */
function exposeGc() {
  require('node:v8').setFlagsFromString('--expose-gc');
  return require('node:vm').runInNewContext('gc');
}

/** Deterministic bytes for round `i`: compressible, never the same twice. */
function fill(buffer, i) {
  let x = (i + 1) * 2654435761;
  for (let at = 0; at < buffer.length; at++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    buffer[at] = 97 + ((x >>> 16) % 7);
  }
  return buffer;
}

/** The stream's output, collected as it comes. */
function collect(stream) {
  const out = [];
  stream.on('data', (chunk) => out.push(chunk));
  return out;
}

/** write() and wait for its callback. */
function written(stream, chunk) {
  return new Promise((resolve, reject) =>
    stream.write(chunk, (err) => (err ? reject(err) : resolve())),
  );
}

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

test('a hash written through a reused Buffer gives node:crypto’s digest', async () => {
  const pool = new Pool();
  try {
    for (const [who, make, digest] of [
      ['node:crypto', () => crypto.createHash('sha256'), (h) => h.digest('hex')],
      ['tidepool', () => pool.createHash('sha256'), (h) => h.digest('hex')],
    ]) {
      const hash = make();
      const reference = crypto.createHash('sha256');
      const buffer = Buffer.alloc(64 * 1024);
      for (let i = 0; i < 64; i++) {
        fill(buffer, i);
        reference.update(buffer);
        await written(hash, buffer);
      }
      assert.equal(await digest(hash), reference.digest('hex'), who);
    }
  } finally {
    await pool.close();
  }
});

test('update() may reuse its Buffer as soon as it returns, whatever the sizes', async () => {
  const pool = new Pool();
  try {
    // Sizes around the staging cap and the inline size (streams/tasks.js), each buffer refilled after update().
    const sizes = [
      1,
      100,
      16 << 10,
      (16 << 10) + 1,
      64 << 10,
      1 << 20,
      3 << 20,
      5 << 20,
      7,
      1 << 20,
      1 << 20,
      1 << 20,
      1 << 20,
      1 << 20,
    ];
    for (const name of ['sha256', 'md5', 'blake3', 'xxh3']) {
      const hash = pool.createHash(name);
      const reference = name === 'blake3' || name === 'xxh3' ? undefined : crypto.createHash(name);
      const whole = [];
      const buffer = Buffer.alloc(8 << 20);
      for (let i = 0; i < sizes.length; i++) {
        const view = fill(buffer.subarray(0, sizes[i]), i);
        reference?.update(view);
        if (reference === undefined) whole.push(Buffer.from(view));
        hash.update(view);
        buffer.fill(0xee); // the caller reuses its buffer at once
      }
      const digest = await hash.digest('hex');
      if (reference !== undefined) assert.equal(digest, reference.digest('hex'), name);
      else
        assert.equal(
          digest,
          (await pool.post(Buffer.concat(whole), { kernel: name })).result.toString('hex'),
          name,
        );
    }
  } finally {
    await pool.close();
  }
});

test('update() holds a bounded amount of memory, however much is fed at once', async () => {
  const pool = new Pool();
  try {
    const hash = pool.createHash('sha256');
    const reference = crypto.createHash('sha256');
    const buffer = Buffer.alloc(1 << 20);
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    // 256 MiB in 1 MiB updates, without giving the event loop a turn.
    for (let i = 0; i < 256; i++) {
      fill(buffer.subarray(0, 4096), i);
      hash.update(buffer);
      reference.update(buffer);
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
    }
    assert.equal(await hash.digest('hex'), reference.digest('hex'));
    // The staging cap (4 MiB) and a little: not the 256 MiB that was fed.
    assert.ok(peak < 32 << 20, `update() held ${peak} bytes`);
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

test('destroy(), a signal or bad input while output is handed on: each _write and _flush callback runs once', async () => {
  const pool = new Pool({ maxThreads: 2 });
  try {
    const noise = crypto.randomBytes(3 << 20);
    const cases = [
      ['gzip, destroy() from the 2nd data', 'createGzip', noise, (s) => s.destroy()],
      ['gzip, signal from the 2nd data', 'createGzip', noise, (s, ac) => ac.abort()],
      [
        'gunzip of bad bytes',
        'createGunzip',
        Buffer.concat([zlib.gzipSync(noise).subarray(0, 1 << 20), Buffer.alloc(1 << 20, 7)]),
        null,
      ],
    ];
    for (const [name, factory, input, act] of cases) {
      for (const [who, make] of [
        ['node:zlib', (signal) => zlib[factory]({ signal })],
        ['tidepool', (signal) => pool[factory]({ signal })],
      ]) {
        const ac = new AbortController();
        const stream = make(ac.signal);
        const calls = [];
        // Count each internal callback's calls (Node's Writable swallows a
        // second one once the stream is destroyed).
        for (const method of ['_write', '_flush']) {
          const own = stream[method];
          if (typeof own !== 'function') continue;
          stream[method] = function (...args) {
            const i = calls.length;
            calls.push(0);
            const callback = args[args.length - 1];
            args[args.length - 1] = (...results) => {
              calls[i]++;
              return callback(...results);
            };
            return own.apply(this, args);
          };
        }
        let datas = 0;
        stream.on('data', () => {
          if (++datas === 2 && act) act(stream, ac);
        });
        stream.on('error', () => {});
        const closed = new Promise((resolve) => stream.on('close', resolve));
        stream.end(input);
        await closed;
        // A second call would come from a step still in flight: the pool's
        // settle first (node:zlib reports nothing: its work gets 50 ms).
        if (who === 'tidepool')
          await waitFor(() => pool.stats().pending === 0, {
            what: `${who} ${name}: every step to settle`,
          });
        else await new Promise((resolve) => setTimeout(resolve, 50));
        assert.ok(calls.length > 0, `${who} ${name}: nothing written`);
        assert.ok(
          calls.every((n) => n <= 1),
          `${who} ${name}: callbacks ${calls}`,
        );
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

test('a signal that fires while the stream is idle destroys it at once with an AbortError', async () => {
  const pool = new Pool();
  try {
    for (const [who, make] of [
      ['node:zlib', (signal) => zlib.createGzip({ signal })],
      ['tidepool', (signal) => pool.createGzip({ signal })],
    ]) {
      const ac = new AbortController();
      const stream = make(ac.signal);
      // Idle: its write was consumed (called back) and nothing runs.
      await new Promise((resolve) => stream.write('some bytes', resolve));
      if (who === 'tidepool')
        await waitFor(() => pool.stats().pending === 0, { what: 'nothing in flight' });
      const failed = once(stream, 'error');
      ac.abort('enough');
      const [err] = await failed;
      assert.equal(stream.destroyed, true, who);
      assert.equal(err.name, 'AbortError', who);
      assert.equal(err.code, 'ABORT_ERR', who);
      assert.equal(err.cause, 'enough', who);
    }
    // A pipeline whose source stalls, with AbortSignal.timeout() on the
    // stream: it fails, never hangs. (The timeout's timer does not keep the
    // process alive; in a test nothing else would.)
    const alive = setInterval(() => {}, 1000);
    try {
      for (const [who, make] of [
        ['node:zlib', (signal) => zlib.createGzip({ signal })],
        ['tidepool', (signal) => pool.createGzip({ signal })],
      ]) {
        const stalled = new Readable({ read() {} });
        stalled.push('one chunk, then nothing');
        const sink = new Writable({ write: (_c, _e, cb) => cb() });
        await assert.rejects(
          pipeline(stalled, make(AbortSignal.timeout(50)), sink),
          { name: 'AbortError' },
          who,
        );
      }
    } finally {
      clearInterval(alive);
    }
  } finally {
    await pool.close();
  }
});

test('streams sharing one signal share one listener (node:zlib adds one per stream)', async () => {
  const pool = new Pool();
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    const ac = new AbortController();
    const streams = Array.from({ length: 40 }, (_, i) =>
      i % 2
        ? pool.createGzip({ signal: ac.signal })
        : pool.createHash('md5', { signal: ac.signal }),
    );
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
    const posts = Array.from({ length: 5 }, () =>
      pool.post(micros(1), { kernel: 'sleep', signal: ac.signal }),
    );
    await Promise.all(posts);
    const errors = streams.filter((_, i) => i % 2).map((s) => once(s, 'error'));
    ac.abort();
    for (const [err] of await Promise.all(errors)) assert.equal(err.name, 'AbortError');
    for (const s of streams) assert.equal(s.destroyed, true);
    // The control: node:zlib adds a listener per stream.
    const control = new AbortController();
    const theirs = Array.from({ length: 3 }, () => zlib.createGzip({ signal: control.signal }));
    assert.equal(getEventListeners(control.signal, 'abort').length, 3);
    for (const s of theirs) s.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
      [],
    );
  } finally {
    process.off('warning', onWarning);
    await pool.close();
  }
});

test('close() right after end() or digest(): the output already asked for still comes', async () => {
  const pool = new Pool({ maxThreads: 1 });
  const data = fill(Buffer.alloc(2 << 20), 5);
  const gzip = pool.createGzip();
  const out = collect(gzip);
  const ended = once(gzip, 'end');
  gzip.end(data);
  const hash = pool.createHash('sha256');
  hash.update(data);
  const digest = hash.digest('hex');
  const written = pool.createHash('md5');
  written.end(data);
  const writtenDigest = once(written, 'data');
  await pool.close();
  await ended;
  assert.ok(zlib.gunzipSync(Buffer.concat(out)).equals(data));
  assert.equal(await digest, crypto.createHash('sha256').update(data).digest('hex'));
  assert.deepEqual((await writtenDigest)[0], crypto.createHash('md5').update(data).digest());
  // A stream whose end is asked for after close(): refused.
  const late = pool.createGzip();
  late.end('late');
  const [err] = await once(late, 'error');
  assert.equal(err.code, 'ERR_TIDEPOOL_CLOSED');
});

test('destroy(): the write in flight is called back once its task stopped, the others with ERR_STREAM_DESTROYED', async () => {
  const pool = new Pool();
  try {
    for (let round = 0; round < 10; round++) {
      for (const [who, make] of [
        ['node:zlib', () => zlib.createGzip()],
        ['tidepool', () => pool.createGzip()],
      ]) {
        const stream = make();
        stream.on('error', () => {});
        const write = () =>
          new Promise((resolve) => stream.write(fill(Buffer.alloc(256 << 10), round), resolve));
        // The first write alone in its turn (the pool's writes of one turn
        // go as one task: see the test after this one), the others behind it.
        const calls = [write()];
        await new Promise((resolve) => process.nextTick(resolve));
        for (let i = 0; i < 3; i++) calls.push(write());
        stream.destroy();
        const errors = await Promise.all(calls);
        assert.deepEqual(
          errors.map((e) => e?.code),
          [undefined, 'ERR_STREAM_DESTROYED', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_DESTROYED'],
          `${who}, round ${round}`,
        );
      }
    }
    assert.equal(pool.stats().pending, 0);
  } finally {
    await pool.close();
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

test('a write made before pool.close() finishes, one made after it in the same turn is refused', async () => {
  // The pool's close() (no node:zlib control): writes given before it
  // finish, the rest fail; one turn's writes share a task, not a verdict.
  for (const gap of [false, true]) {
    const pool = new Pool({ maxThreads: 2 });
    const stream = pool.createGzip();
    stream.resume();
    stream.on('error', () => {});
    const before = new Promise((resolve) =>
      stream.write(fill(Buffer.alloc(300_000), 1), (err) => resolve(err?.code)),
    );
    if (gap) await new Promise((resolve) => setImmediate(resolve));
    const closed = pool.close();
    const after = new Promise((resolve) =>
      stream.write(fill(Buffer.alloc(300_000), 2), (err) => resolve(err?.code)),
    );
    assert.deepEqual(
      await Promise.all([before, after]),
      [undefined, 'ERR_TIDEPOOL_CLOSED'],
      `gap ${gap}`,
    );
    await closed;
  }
});

test('writes given before pool.close() and waiting when end() comes after it still finish', async () => {
  // The pool's close() (no node:zlib control): the last writes, which
  // node:zlib finishes the stream with, are taken apart from an end the
  // closed pool refuses, and called back without its error.
  for (const flush of [false, true]) {
    const pool = new Pool({ maxThreads: 1 });
    const stream = pool.createGzip();
    stream.resume();
    const failed = once(stream, 'error');
    const callbacks = [];
    const waiting = [];
    /** A write's callback, noted in `callbacks`; `waiting` has its promise. */
    const noted = () => {
      let done;
      waiting.push(new Promise((resolve) => (done = resolve)));
      return (err) => {
        callbacks.push(err?.code);
        done();
      };
    };
    // The second write (and the flush) wait behind the first.
    stream.write(fill(Buffer.alloc(1 << 20), 1));
    stream.write(fill(Buffer.alloc(1000), 2), noted());
    if (flush) stream.flush(noted());
    const closed = pool.close();
    stream.end();
    await Promise.all(waiting);
    assert.deepEqual(callbacks, flush ? [undefined, undefined] : [undefined], `flush ${flush}`);
    assert.equal((await failed)[0].code, 'ERR_TIDEPOOL_CLOSED', `flush ${flush}`);
    await closed;
  }
});

test('the stream fuzzer: random producers, readers, flushes and destroys keep every contract (4 s, own process)', () => {
  const seed = Number(process.env.TIDEPOOL_FUZZ_SEED ?? Date.now() % 1e9);
  const r = spawnSync(
    process.execPath,
    [path.join(__dirname, 'fuzz', 'streams.js'), '--seconds', '4', '--seed', String(seed)],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  assert.equal(
    r.signal,
    null,
    `the fuzzer's process died of ${r.signal} (seed ${seed})\n${r.stderr}`,
  );
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /stream fuzz: \d+ cases/, `seed ${seed}: ${r.stderr}`);
});

test('close() does not wait for a stream ended, then dropped unread', async () => {
  const v8 = require('node:v8');
  const vm = require('node:vm');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const pool = new Pool();
  (() => {
    const gzip = pool.createGzip({ highWaterMark: 1024 });
    gzip.end(fill(Buffer.alloc(4 << 20), 1)); // more output than its reader's buffer holds; nobody reads it
  })();
  await waitFor(() => pool.stats().pending === 0, { what: 'the stream to stop for its reader' });
  let closed = false;
  const closing = pool.close().then(() => (closed = true));
  // Collected at some gc(): one before each look.
  await waitFor(
    () => {
      if (!closed) gc();
      return closed;
    },
    { what: 'close() once the stream was collected', interval: 10 },
  );
  await closing;
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

test('write() and update() mixed: hashed in call order, as node:crypto does', async () => {
  const pool = new Pool();
  try {
    const x = crypto.randomBytes(1 << 20);
    const a = crypto.randomBytes(1000);
    const b = crypto.randomBytes(1000);
    for (const [who, make] of [
      ['node:crypto', () => crypto.createHash('sha256')],
      ['tidepool', () => pool.createHash('sha256')],
    ]) {
      const hash = make();
      hash.write(x);
      hash.write(a); // waits in the Writable while x runs
      hash.update(b); // after a
      await new Promise((resolve) => hash.end(resolve));
      assert.equal(
        await hash.digest('hex'),
        crypto.createHash('sha256').update(x).update(a).update(b).digest('hex'),
        who,
      );
    }
    // An update() while a huge write is in flight goes behind it: it does
    // not take the write over onto the calling thread.
    const hash = pool.createHash('md5');
    const huge = Buffer.alloc(1 << 30);
    hash.write(huge);
    hash.update(Buffer.alloc(5 << 20, 1));
    assert.ok(
      hash.writableLength >= (1 << 30) + (5 << 20),
      `${hash.writableLength} bytes in the Writable`,
    );
    hash.end();
    assert.equal(
      await hash.digest('hex'),
      crypto
        .createHash('md5')
        .update(huge)
        .update(Buffer.alloc(5 << 20, 1))
        .digest('hex'),
    );
  } finally {
    await pool.close();
  }
});

test('a hash with a signal, used through update() and digest() alone, lets go of the signal', async () => {
  const pool = new Pool();
  try {
    const ac = new AbortController();
    for (let i = 0; i < 50; i++)
      await pool.createHash('sha256', { signal: ac.signal }).update('hello').digest();
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    // And a signal that fires later touches none of them.
    ac.abort();
  } finally {
    await pool.close();
  }
});

test('destroy() or the signal after digest() was asked for fails the digest', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    for (const how of ['destroy', 'signal']) {
      const ac = new AbortController();
      const hash = pool.createHash('md5', { signal: ac.signal });
      hash.write(Buffer.alloc(1 << 30)); // seconds of MD5
      const digest = hash.digest();
      await waitFor(() => pool.stats().busyThreads === 1, { what: 'the hash to run' });
      if (how === 'destroy') hash.destroy();
      else ac.abort();
      await assert.rejects(
        digest,
        how === 'destroy' ? { code: 'ERR_STREAM_DESTROYED' } : { name: 'AbortError' },
        how,
      );
      await waitFor(() => pool.stats().pending === 0, { what: 'the chunk to stop' });
    }
  } finally {
    await pool.close();
  }
});

test('writes and updates mixed on a busy pool hold a bounded number of tasks and bytes', async () => {
  const pool = new Pool({ maxThreads: 1 });
  const blocker = await holdThread(pool);
  try {
    const hash = pool.createHash('sha256');
    const reference = crypto.createHash('sha256');
    // Held, not yet collected: what V8 leaves uncollected differs by line.
    const gc = exposeGc();
    gc();
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    // Each write waits for the busy thread; an update past the staging cap,
    // then small ones, come meanwhile (they go behind the write).
    const calls = [];
    for (let i = 0; i < 100; i++) {
      const chunk = Buffer.alloc(1 << 20, i);
      calls.push(written(hash, chunk));
      reference.update(chunk);
      const extra = i === 0 ? Buffer.alloc(5 << 20) : Buffer.from('x');
      hash.update(extra);
      reference.update(extra);
      gc();
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
    }
    assert.ok(pool.stats().queued <= 2, `${pool.stats().queued} tasks queued`);
    blocker.release();
    await Promise.all(calls);
    hash.end();
    assert.equal(await hash.digest('hex'), reference.digest('hex'));
    // The writes are the caller's (100 MiB); what the hash adds is its copies.
    assert.ok(peak < (100 << 20) + (16 << 20), `${peak} bytes held`);
  } finally {
    blocker.release();
    await pool.close();
  }
});

test('many tiny updates share staging blocks: memory near the staging cap, one task per block', async () => {
  const pool = new Pool();
  try {
    const hash = pool.createHash('sha256');
    const reference = crypto.createHash('sha256');
    const tiny = Buffer.alloc(64);
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 65_536; i++) {
      tiny.writeUInt32LE(i, 0);
      hash.update(tiny);
      reference.update(tiny);
    }
    const held = process.memoryUsage().arrayBuffers - before;
    assert.equal(await hash.digest('hex'), reference.digest('hex'));
    assert.ok(held <= (4 << 20) + (1 << 20), `${held} bytes held for 4 MiB of updates`);
    assert.ok(
      pool.stats().completed <= 70,
      `${pool.stats().completed} tasks for 4 MiB of 64-byte updates`,
    );
  } finally {
    await pool.close();
  }
});

test('close() lets a write given before it finish, however much output it makes', async () => {
  const pool = new Pool();
  const gzip = pool.createGzip({ params: { level: 0 } }); // output as large as the input: many steps
  const out = collect(gzip);
  const data = crypto.randomBytes(4 << 20);
  const callback = new Promise((resolve) => gzip.write(data, resolve));
  const closing = pool.close();
  assert.ok(!(await callback), 'called back without an error');
  // Its end, asked for after close(): refused.
  gzip.end();
  const [err] = await once(gzip, 'error');
  assert.equal(err.code, 'ERR_TIDEPOOL_CLOSED');
  await closing;
  // What it made decodes to the write, up to where the stream stopped.
  const inflated = zlib.gunzipSync(Buffer.concat(out), {
    finishFlush: zlib.constants.Z_SYNC_FLUSH,
  });
  assert.ok(data.subarray(0, inflated.length).equals(inflated));
});

test('a full queue, drop-oldest or maxQueueAgeMs never end a stream: its tasks wait', async () => {
  for (const options of [
    { maxQueue: 1 },
    { maxQueue: 1, queueFull: 'drop-oldest' },
    { maxQueueAgeMs: 20 },
  ]) {
    const pool = new Pool({ maxThreads: 1, ...options });
    const blocker = await holdThread(pool);
    try {
      const data = fill(Buffer.alloc(1 << 20), 2);
      const gzip = pool.createGzip();
      const out = collect(gzip);
      const ended = once(gzip, 'end');
      gzip.end(data);
      // The stream's task is queued (and older than maxQueueAgeMs, when set).
      const age = options.maxQueueAgeMs ?? -1;
      await waitFor(() => pool.stats().queued === 1 && pool.stats().oldestQueuedMs > age, {
        what: "the stream's task to wait in the queue",
        state: () => JSON.stringify(pool.stats()),
      });
      // A post that finds the queue full (the stream's task is in it) is the one refused or dropped.
      const post = pool.post(Buffer.from('x'), { kernel: 'sha256' }).catch((e) => e.code);
      blocker.release();
      await ended;
      assert.ok(zlib.gunzipSync(Buffer.concat(out)).equals(data), JSON.stringify(options));
      await post;
    } finally {
      blocker.release();
      await pool.close();
    }
  }
});

test('update() of memory that may change size or be shared: copied as it is, as node:crypto takes it', async () => {
  const pool = new Pool();
  try {
    const resizable = new ArrayBuffer(1000, { maxByteLength: 4000 });
    new Uint8Array(resizable).fill(3);
    const shared = new SharedArrayBuffer(50_000);
    new Uint8Array(shared).fill(9);
    for (const [who, make] of [
      ['node:crypto', () => crypto.createHash('sha1')],
      ['tidepool', () => pool.createHash('sha1')],
    ]) {
      const hash = make();
      hash.update(new Uint8Array(resizable));
      hash.update(new Uint16Array(shared));
      const digest = await hash.digest('hex');
      assert.equal(
        digest,
        crypto
          .createHash('sha1')
          .update(Buffer.alloc(1000, 3))
          .update(Buffer.alloc(50_000, 9))
          .digest('hex'),
        who,
      );
    }
  } finally {
    await pool.close();
  }
});
