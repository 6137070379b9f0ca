'use strict';
// The contracts of Node's streams about their lifetime, kept by the pool's
// streams: destroy(), signals, close() of the pool, a full queue. Each
// test runs the same assertions against node:zlib / node:crypto (the
// control) and the pool's stream in the same run; where tidepool differs
// on purpose, the test says so and asserts both sides (memory and
// Buffers: stream-buffers.test.js; hashes' updates: stream-updates.test.js).

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
const { fill, collect } = require('./stream-io');

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
