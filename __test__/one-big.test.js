'use strict';
// One big input on several threads: a one-shot gzip, deflate, deflateRaw,
// zstdCompress or BLAKE3 task over a large input runs in blocks on the
// pool's idle threads (docs/api.md, "One big input"). What must hold: the
// output decodes to the input with node:zlib and with the gzip and zstd
// command-line tools at every size around the block edges; BLAKE3's digest
// is a one-thread pool's; cancellation, limits and small inputs behave as
// without the split. Speed lives in bench/one-big.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const { spawnSync } = require('node:child_process');
const { Pool } = require('..');
const { waitFor, poolState } = require('./wait');

const MIB = 1 << 20;
/** The gzip blocks and the zstd frames (crates/core: zlib/parallel.rs, zstd/compress.rs). */
const GZIP_BLOCK = MIB;
const ZSTD_BLOCK = 4 * MIB;

function mixed(len) {
  const out = Buffer.allocUnsafe(len);
  let state = 0x2545f491;
  let at = 0;
  while (at < len) {
    if ((at >> 12) % 3 === 0) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      out[at++] = state & 0xff;
    } else {
      at += out.write(`${at} GET /item/${state % 1000} 200\n`, at, 'latin1');
    }
  }
  return out;
}

/** What a command-line tool makes of `input` (`args`), or undefined if it is not installed. */
function cli(command, args, input) {
  const r = spawnSync(command, args, { input, maxBuffer: 1 << 30 });
  if (r.error?.code === 'ENOENT') return undefined;
  assert.equal(r.status, 0, `${command}: ${r.stderr}`);
  return r.stdout;
}

const data = mixed(2 * ZSTD_BLOCK + 1);

test('gzip, deflate and deflateRaw of large inputs decode to the input at every block edge', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  const one = new Pool({ maxThreads: 1 });
  t.after(() => Promise.all([pool.close(), one.close()]));
  for (const len of [2 * GZIP_BLOCK - 1, 2 * GZIP_BLOCK, 2 * GZIP_BLOCK + 1, 3 * GZIP_BLOCK + 7]) {
    const input = data.subarray(0, len);
    const gz = (await pool.post(input, { kernel: 'gzip' })).result;
    const whole = (await one.post(input, { kernel: 'gzip' })).result;
    assert.deepEqual(zlib.gunzipSync(gz), input, `node:zlib, ${len}`);
    const byCli = cli('gzip', ['-dc'], gz);
    if (byCli !== undefined) assert.deepEqual(byCli, input, `gzip -d, ${len}`);
    assert.ok(gz.length <= whole.length * 1.01, `${gz.length} vs ${whole.length}`);
    assert.deepEqual(gz.subarray(0, 10), whole.subarray(0, 10), 'the same gzip header');
    if (len >= 2 * GZIP_BLOCK) assert.notDeepEqual(gz, whole, 'in blocks');
    const z = (await pool.post(input, { kernel: 'deflate' })).result;
    assert.deepEqual(zlib.inflateSync(z), input);
    const raw = (await pool.post(input, { kernel: 'deflateRaw' })).result;
    assert.deepEqual(zlib.inflateRawSync(raw), input);
  }
});

test('zstdCompress of a large input is frames that the zstd CLI and the pool decode', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  for (const len of [2 * ZSTD_BLOCK - 1, 2 * ZSTD_BLOCK, 2 * ZSTD_BLOCK + 1]) {
    const input = data.subarray(0, len);
    const zst = (await pool.post(input, { kernel: 'zstdCompress' })).result;
    assert.deepEqual((await pool.post(zst, { kernel: 'zstdDecompress' })).result, input);
    const byCli = cli('zstd', ['-dc'], zst);
    if (byCli !== undefined) assert.deepEqual(byCli, input, `zstd -d, ${len}`);
    if (typeof zlib.zstdDecompressSync === 'function')
      assert.deepEqual(zlib.zstdDecompressSync(zst), input);
  }
});

test("BLAKE3 in subtrees is a one-thread pool's digest, in every mode", async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  const one = new Pool({ maxThreads: 1 });
  t.after(() => Promise.all([pool.close(), one.close()]));
  const key = Buffer.alloc(32, 9);
  for (const len of [4 * MIB - 1, 4 * MIB, 4 * MIB + 1, 5 * MIB + 1024, 7 * MIB + 1]) {
    const input = data.subarray(0, len);
    for (const params of [undefined, { key }, { context: 'tidepool one-big test' }]) {
      const split = (await pool.post(input, { kernel: 'blake3', params })).result;
      const whole = (await one.post(input, { kernel: 'blake3', params })).result;
      assert.equal(
        split.toString('hex'),
        whole.toString('hex'),
        `${len} ${JSON.stringify(params)}`,
      );
    }
  }
});

test('a pool that has run small tasks still starts a thread for a big job, and a small task does not wait for it', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  // The mean run time the scaling rule knows is a tiny task's.
  await pool.post(Buffer.from('warm'));
  const spawns = [];
  pool.on('spawn', (e) => spawns.push(e));
  const order = [];
  const big = pool.post(mixed(16 * MIB), { kernel: 'gzip' }).then(() => order.push('big'));
  // The big job runs (taken alone: a tiny task queued with it could go in
  // its batch, behind it).
  await waitFor(() => pool.stats().busyThreads >= 1 && pool.stats().queued === 0, {
    what: 'a thread to take the big job',
    state: poolState(pool),
  });
  const tiny = pool.post(Buffer.from('tiny')).then(() => order.push('tiny'));
  await Promise.all([big, tiny]);
  assert.deepEqual(order, ['tiny', 'big']);
  assert.ok(spawns.length >= 1 || pool.stats().threads === 2, 'a second thread ran');
});

test('a job in blocks is cancelled by its signal, and a limit holds over its whole output', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const big = mixed(32 * MIB);
  const controller = new AbortController();
  const task = pool.post(big, { kernel: 'gzip', signal: controller.signal });
  setImmediate(() => controller.abort());
  await assert.rejects(task, { name: 'AbortError', code: 'ABORT_ERR' });
  await assert.rejects(pool.post(big, { kernel: 'gzip', maxOutputBytes: 1000 }), {
    code: 'ERR_BUFFER_TOO_LARGE',
  });
  // The pool goes on.
  const { result } = await pool.post(data.subarray(0, 3 * MIB), { kernel: 'gzip' });
  assert.deepEqual(zlib.gunzipSync(result), data.subarray(0, 3 * MIB));
});

/** The pool's (a default Pool: streams in blocks) and node:zlib's version of each deflate stream. */
function deflateStreams(pool) {
  return [
    ['gzip', () => zlib.createGzip(), () => pool.createGzip(), zlib.gunzipSync],
    ['deflate', () => zlib.createDeflate(), () => pool.createDeflate(), zlib.inflateSync],
    [
      'deflateRaw',
      () => zlib.createDeflateRaw(),
      () => pool.createDeflateRaw(),
      zlib.inflateRawSync,
    ],
  ];
}

/** Writes `input` through one Buffer of `size` bytes, refilled after each write's callback. */
async function throughOneBuffer(stream, input, size) {
  const chunks = [];
  stream.on('data', (c) => chunks.push(c));
  const ended = new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  const reused = Buffer.alloc(size);
  for (let at = 0; at < input.length; at += size) {
    const n = input.copy(reused, 0, at, at + size);
    await new Promise((resolve, reject) =>
      stream.write(reused.subarray(0, n), (err) => (err ? reject(err) : resolve())),
    );
    // The producer may reuse its Buffer now: scribble over it.
    reused.fill(0xa5);
  }
  stream.end();
  await ended;
  return Buffer.concat(chunks);
}

test('a deflate stream fed large writes through one reused Buffer decodes to the input (blocks on several threads)', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const input = data.subarray(0, 5 * MIB + 12345);
  for (const [name, control, ours, decode] of deflateStreams(pool)) {
    for (const size of [MIB, 3 * MIB + 7, 100_000]) {
      for (const [who, make] of [
        ['node:zlib', control],
        ['pool', ours],
      ]) {
        const out = await throughOneBuffer(make(), input, size);
        assert.ok(decode(out).equals(input), `${who} ${name}, writes of ${size}`);
        const ratio = out.length / zlib.gzipSync(input).length;
        assert.ok(ratio > 0.98 && ratio < 1.02, `${who} ${name}: ${ratio}`);
      }
    }
  }
  // A second thread was started for the blocks.
  assert.ok(pool.stats().spawned >= 2, `${pool.stats().spawned} threads started`);
});

test('flush() on a stream in blocks: the output so far decodes to all written before it', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  for (const [who, make] of [
    ['node:zlib', () => zlib.createGzip()],
    ['pool', () => pool.createGzip()],
  ]) {
    const stream = make();
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    let written = 0;
    for (const cut of [700_000, 2 * MIB + 3, 2 * MIB + 10, 4 * MIB]) {
      stream.write(data.subarray(written, cut));
      written = cut;
      await new Promise((resolve) => stream.flush(zlib.constants.Z_SYNC_FLUSH, resolve));
      const sofar = Buffer.concat(chunks);
      const inflate = zlib.createGunzip();
      const seen = [];
      inflate.on('data', (c) => seen.push(c));
      await new Promise((resolve) => inflate.write(sofar, resolve));
      await new Promise((resolve) => inflate.flush(resolve));
      assert.ok(Buffer.concat(seen).equals(data.subarray(0, cut)), `${who}: at ${cut}`);
      inflate.destroy();
    }
    stream.end();
    await new Promise((resolve) => stream.on('end', resolve));
    assert.ok(zlib.gunzipSync(Buffer.concat(chunks)).equals(data.subarray(0, written)), who);
  }
});

/** 4 MiB that level 1 hardly compresses: a write's output fills any reader. */
function noise() {
  const out = Buffer.alloc(4 * MIB);
  for (let i = 0; i < out.length; i += 4) out.writeUInt32LE((i * 2654435761) >>> 0, i);
  return out;
}

/** A level-1 raw deflate stream of node:zlib (the control) and of `pool`, each with `highWaterMark`. */
function rawDeflates(pool, highWaterMark) {
  return [
    ['node:zlib', () => zlib.createDeflateRaw({ level: 1, highWaterMark })],
    ['pool', () => pool.createDeflateRaw({ params: { level: 1 }, highWaterMark })],
  ];
}

/**
 * Until `stream` (made by `who`) stops for its reader: its readable buffer
 * at `highWaterMark` (where node:zlib stops) and, for the pool's, no step
 * in flight. From then on nothing happens until it is read.
 */
function stopsForReader(who, stream, pool, highWaterMark) {
  return waitFor(
    () => stream.readableLength >= highWaterMark && (who !== 'pool' || pool.stats().pending === 0),
    {
      what: `${who}: the stream to stop for its reader`,
      state: () => `readableLength ${stream.readableLength}, ${poolState(pool)()}`,
    },
  );
}

/** Reads `stream` to its end after ending it (`out` gathers the output), which inflates to `input`. */
async function readsToEnd(stream, out, input, who) {
  stream.on('data', (c) => out.push(c));
  stream.resume();
  stream.end();
  await new Promise((resolve) => stream.on('end', resolve));
  assert.ok(zlib.inflateRawSync(Buffer.concat(out)).equals(input), who);
}

test('a reader that stops holds a stream in blocks: its readable side stays near highWaterMark', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const highWaterMark = 16 * 1024;
  const input = noise();
  for (const [who, make] of rawDeflates(pool, highWaterMark)) {
    const stream = make();
    let called = false;
    stream.write(input, () => (called = true));
    // Nobody reads: the output waits, bounded by the reader's buffer.
    await stopsForReader(who, stream, pool, highWaterMark);
    assert.ok(
      stream.readableLength <= highWaterMark + 64 * 1024,
      `${who}: ${stream.readableLength}`,
    );
    assert.equal(called, false, `${who}: not called back while its output waits`);
    await readsToEnd(stream, [], input, who);
    assert.equal(called, true);
  }
});

test('a slow reader of a stream in blocks: its readable side stays near highWaterMark while output comes', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const highWaterMark = 16 * 1024;
  const input = data.subarray(0, 3 * MIB + 5);
  for (const [who, make] of [
    ['node:zlib', () => zlib.createGzip({ highWaterMark })],
    ['pool', () => pool.createGzip({ highWaterMark })],
  ]) {
    const stream = make();
    let most = 0;
    const out = [];
    let ended = false;
    stream.once('end', () => (ended = true));
    stream.end(input);
    // One read() per turn of the event loop, as a slow consumer makes.
    const deadline = Date.now() + 60_000;
    while (!ended) {
      assert.ok(Date.now() < deadline, `${who}: no end within a minute`);
      await new Promise((r) => setImmediate(r));
      most = Math.max(most, stream.readableLength);
      const chunk = stream.read();
      if (chunk !== null) out.push(chunk);
    }
    assert.ok(most <= highWaterMark + 64 * 1024, `${who}: ${most}`);
    assert.ok(zlib.gunzipSync(Buffer.concat(out)).equals(input), who);
  }
});

test('a reader that pauses in its first data event holds a stream in blocks near highWaterMark', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const highWaterMark = 16 * 1024;
  const input = noise();
  for (const [who, make] of rawDeflates(pool, highWaterMark)) {
    const stream = make();
    const out = [];
    // Flowing at first (a step may hand on what its blocks made whole),
    // then paused: the steps after it are the reader's room again.
    const first = new Promise((resolve) =>
      stream.once('data', (c) => {
        out.push(c);
        stream.pause();
        resolve();
      }),
    );
    let called = false;
    stream.write(input, () => (called = true));
    await first;
    // The steps after the pause fill the reader's buffer, then stop.
    await stopsForReader(who, stream, pool, highWaterMark);
    assert.equal(out.length, 1, `${who}: one data event before the pause`);
    assert.ok(
      stream.readableLength <= highWaterMark + 64 * 1024,
      `${who}: ${stream.readableLength}`,
    );
    assert.equal(called, false, `${who}: not called back while its output waits`);
    // (A listener added after pause() does not resume: resume() does.)
    await readsToEnd(stream, out, input, who);
    assert.equal(called, true);
  }
});

test("a flowing reader gets each block's output as it was made, not in 64 KiB pieces", async (t) => {
  // The pool's own delivery (node:zlib pushes chunkSize pieces): no control.
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const writes = 4;
  for (const [who, options] of [
    ['default', {}],
    ['highWaterMark 16 KiB', { highWaterMark: 16 * 1024 }],
  ]) {
    const stream = pool.createGzip(options);
    const sizes = [];
    stream.on('data', (c) => sizes.push(c.length));
    for (let i = 0; i < writes; i++) {
      await new Promise((resolve, reject) =>
        stream.write(data.subarray(i * MIB, (i + 1) * MIB), (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    }
    const before = sizes.length;
    stream.end();
    await new Promise((resolve) => stream.on('end', resolve));
    const out = sizes.reduce((a, b) => a + b, 0);
    // A 1 MiB write is four blocks, taken together: each block's output,
    // about 100 KiB of this input, reaches the reader as the Buffer it was
    // made in, not in 64 KiB pieces (the stream's header, and the end of
    // the block the write before left open, go alone).
    const blocks = writes * 4;
    assert.ok(
      before <= blocks + writes + 1,
      `${who}: ${before} data events for ${blocks} blocks (${sizes})`,
    );
    const whole = sizes.filter((size) => size > 64 * 1024).length;
    assert.ok(whole >= blocks - writes, `${who}: ${whole} pieces over 64 KiB (${sizes})`);
    assert.ok(out > writes * 64 * 1024, `${who}: ${out} bytes of output`);
  }
});

test('end(body) of a body in blocks: one task, its output in order', async (t) => {
  // The pool's tasks (node:zlib has none): the blocks' output, then the end.
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const body = data.subarray(0, 2 * MIB + 5);
  const stream = pool.createGzip();
  const out = [];
  stream.on('data', (chunk) => out.push(chunk));
  const before = pool.stats().completed;
  stream.end(body);
  await new Promise((resolve) => stream.on('end', resolve));
  assert.equal(pool.stats().completed - before, 1, 'one task');
  assert.ok(zlib.gunzipSync(Buffer.concat(out)).equals(body));
});

test('a stream in blocks hands its output on without a pool task per piece', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const writes = 8;
  const stream = pool.createGzip();
  const out = [];
  stream.on('data', (c) => out.push(c));
  const before = pool.stats().completed;
  for (let i = 0; i < writes; i++) {
    await new Promise((resolve, reject) =>
      stream.write(data.subarray(i * MIB, (i + 1) * MIB), (err) => (err ? reject(err) : resolve())),
    );
  }
  const tasks = pool.stats().completed - before;
  stream.end();
  await new Promise((resolve) => stream.on('end', resolve));
  assert.ok(zlib.gunzipSync(Buffer.concat(out)).equals(data.subarray(0, writes * MIB)));
  // Each write's output is hundreds of KiB, handed on 64 KiB at a time:
  // the blocks make it on a thread, the pieces go out on this one.
  const pieces = Math.ceil(Buffer.concat(out).length / (64 * 1024));
  assert.ok(tasks <= writes, `${tasks} tasks for ${writes} writes (${pieces} pieces)`);
});

test('a stream in blocks whose input is detached while it waits for its reader fails with ERR_INVALID_STATE', async (t) => {
  // No node:zlib control: node:zlib aborts the process on a detached input.
  const pool = new Pool({ maxThreads: 2 });
  const memory = new ArrayBuffer(4 * MIB);
  new Uint8Array(memory).set(data.subarray(0, 4 * MIB));
  const stream = pool.createGzip({ highWaterMark: 16 * 1024 });
  // (A stream left waiting for its reader would hold close() up.)
  t.after(() => {
    stream.destroy();
    return pool.close();
  });
  const failed = new Promise((resolve) => stream.on('error', resolve));
  const called = new Promise((resolve) => stream.write(new Uint8Array(memory), resolve));
  // The blocks are made; the output waits for a reader, and the write for
  // it: no thread reads the input any more.
  await stopsForReader('pool', stream, pool, 16 * 1024);
  structuredClone(memory, { transfer: [memory] });
  stream.resume();
  const err = await failed;
  assert.ok(err instanceof TypeError, String(err));
  assert.equal(err.code, 'ERR_INVALID_STATE');
  assert.equal((await called)?.code, 'ERR_INVALID_STATE');
});

test('pool.destroy() stops a stream in blocks: no output made after it, the write fails', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.destroy());
  const stream = pool.createGzip({ highWaterMark: 16 * 1024 });
  stream.on('error', () => {});
  const called = new Promise((resolve) => stream.write(data.subarray(0, 2 * MIB), resolve));
  // Its blocks made, the stream waits for its reader.
  await stopsForReader('pool', stream, pool, 16 * 1024);
  const buffered = stream.readableLength;
  pool.destroy();
  let after = 0;
  stream.on('data', (c) => (after += c.length));
  const err = await called;
  assert.ok(err instanceof Error && /^ERR_TIDEPOOL_/.test(err.code), String(err));
  // What the reader had already is all it gets.
  assert.ok(after <= buffered, `${after} bytes after destroy(), ${buffered} buffered before`);
});

test('destroy() or a signal while blocks run ends the stream and the pool goes on', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const big = data.subarray(0, 8 * MIB);
  for (const [who, make] of [
    ['node:zlib', (signal) => zlib.createGzip({ signal })],
    ['pool', (signal) => pool.createGzip({ signal })],
  ]) {
    const destroyed = make();
    destroyed.resume();
    const called = new Promise((resolve) => destroyed.write(big, resolve));
    setImmediate(() => destroyed.destroy());
    await new Promise((resolve) => destroyed.on('close', resolve));
    await called;
    const controller = new AbortController();
    const aborted = make(controller.signal);
    aborted.resume();
    aborted.write(big);
    setImmediate(() => controller.abort());
    const err = await new Promise((resolve) => aborted.on('error', resolve));
    assert.equal(err.name, 'AbortError', who);
  }
  const out = await throughOneBuffer(pool.createGzip(), big, MIB);
  assert.ok(zlib.gunzipSync(out).equals(big));
});
