'use strict';
// close / destroy / dispose, process lifetime, garbage collection and
// environment teardown (worker_threads).

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const zlib = require('node:zlib');
const { spawnSync } = require('node:child_process');
const { Pool, micros } = require('..');
const { waitFor, poolState } = require('./wait');

const ROOT = path.join(__dirname, '..');

/** Runs `code` in a fresh node process; returns { status, stdout, stderr, ms }. */
function runNode(code, { args = [], timeout = 20_000 } = {}) {
  const t = Date.now();
  const r = spawnSync(process.execPath, [...args, '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout,
  });
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout,
    stderr: r.stderr,
    ms: Date.now() - t,
  };
}

function osThreads() {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  return Number(/Threads:\s+(\d+)/.exec(status)[1]);
}

test('close() finishes queued tasks, then resolves with the threads joined', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const tasks = Array.from({ length: 5 }, () => pool.post(micros(5000)));
  await pool.close();
  const outcomes = await Promise.allSettled(tasks);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    Array(5).fill('fulfilled'),
  );
  assert.equal(pool.stats().threads, 0);
  assert.equal(pool.closed, true);
  assert.equal(pool.close(), pool.close(), 'close() is idempotent');
});

test('destroy() rejects queued tasks, cancels the running one, and resolves quickly', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  // A minute each: destroy() resolves well within it only if it stopped
  // the running one (how soon is not this test's to say).
  const running = pool.post(micros(60_000_000));
  await waitFor(() => pool.stats().busyThreads === 1, {
    what: 'the thread to start the first task',
    state: poolState(pool),
  });
  const queued = Array.from({ length: 10 }, () => pool.post(micros(60_000_000)));
  const settled = Promise.allSettled([running, ...queued]);
  const t = Date.now();
  await pool.destroy();
  // Not a speed check: it did not wait for the minute of the running task.
  assert.ok(Date.now() - t < 30_000, `destroy took ${Date.now() - t} ms`);
  for (const outcome of await settled) {
    assert.equal(outcome.status, 'rejected');
    assert.equal(outcome.reason.code, 'ERR_TIDEPOOL_DESTROYED');
  }
  assert.equal(pool.stats().threads, 0);
  assert.equal(pool.stats().pending, 0);
  await pool.destroy(); // idempotent
  await assert.rejects(pool.post(micros(1)), { code: 'ERR_TIDEPOOL_CLOSED' });
});

test('destroy() after close() still settles everything', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  // A minute each: none may end before destroy(), however late it comes.
  const tasks = Promise.allSettled(Array.from({ length: 3 }, () => pool.post(micros(60_000_000))));
  const closed = pool.close();
  await new Promise((r) => setTimeout(r, 10));
  await pool.destroy();
  await closed;
  const outcomes = await tasks;
  assert.ok(
    outcomes.every((o) => o.status === 'rejected' && o.reason.code === 'ERR_TIDEPOOL_DESTROYED'),
  );
});

test('Symbol.asyncDispose closes the pool', async () => {
  const pool = new Pool();
  const dispose = pool[Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')];
  assert.equal(typeof dispose, 'function');
  const task = pool.post(Buffer.from('x'));
  await dispose.call(pool);
  await task;
  assert.equal(pool.closed, true);
  assert.equal(pool.stats().threads, 0);
});

test('an idle pool does not keep the process alive', () => {
  const r = runNode(`
    const { Pool } = require('.');
    const pool = new Pool({ maxThreads: 2, minThreads: 2 });
    pool.post(Buffer.from('abc')).then(({ result }) => console.log('done', result.length));
  `);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'done 32');
  assert.ok(r.ms < 10_000);
});

test('a pool with pending tasks keeps the process alive until they settle', () => {
  const r = runNode(`
    const { Pool, micros } = require('.');
    const pool = new Pool({ kernel: 'sleep' });
    pool.post(micros(300000)).then(() => console.log('settled'));
  `);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'settled');
});

test('garbage-collected pools stop their threads', () => {
  const r = runNode(
    `
    const fs = require('fs');
    const threads = () => Number(/Threads:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
    const { Pool } = require('.');
    (async () => {
      // Warm up whatever threads Node itself starts lazily.
      await new Pool().post(Buffer.from('warm'));
      for (let i = 0; i < 3; i++) { global.gc(); await new Promise((r) => setTimeout(r, 20)); }
      const before = threads();
      const use = async (i) => {
        const pool = new Pool({ minThreads: 2, maxThreads: 2 });
        await pool.post(Buffer.from('x' + i));
      };
      for (let i = 0; i < 20; i++) await use(i);
      const peak = threads();
      // Collected at some gc(), their threads joined: one gc() before each
      // look, until they are gone (or the 10 s hang guard passes).
      const deadline = Date.now() + 10_000;
      while (threads() > before && Date.now() < deadline) {
        global.gc();
        await new Promise((r) => setTimeout(r, 50));
      }
      console.log(JSON.stringify({ before, peak, after: threads() }));
    })();
  `,
    { args: ['--expose-gc'] },
  );
  assert.equal(r.status, 0, r.stderr);
  const { before, peak, after } = JSON.parse(r.stdout);
  assert.ok(peak >= before + 20, `pools started threads (${before} -> ${peak})`);
  assert.ok(after <= before, `threads after GC: ${after}, before: ${before}`);
});

test('a Worker terminated mid-flight leaves the process healthy', async () => {
  const { Worker } = require('node:worker_threads');
  for (let round = 0; round < 3; round++) {
    const worker = new Worker(
      `
      const { parentPort } = require('worker_threads');
      const { Pool, micros } = require(${JSON.stringify(ROOT)});
      const { waitFor } = require(${JSON.stringify(path.join(__dirname, 'wait.js'))});
      const pool = new Pool({ maxThreads: 2, minThreads: 2 });
      // A minute each, running, then 12.5 GiB of hashing and two more
      // minutes queued: terminate() ends well within a minute only if it
      // waited for none of them.
      pool.post(micros(60_000_000), { kernel: 'sleep' }).catch(() => {});
      pool.post(micros(60_000_000), { kernel: 'spin' }).catch(() => {});
      const big = Buffer.alloc(64 << 20, 1);
      for (let i = 0; i < 200; i++) pool.post(big).catch(() => {});
      pool.post(micros(60_000_000), { kernel: 'sleep' }).catch(() => {});
      pool.post(micros(60_000_000), { kernel: 'spin' }).catch(() => {});
      waitFor(() => pool.stats().busyThreads === 2, { what: 'both threads running', interval: 1 })
        .then(() => parentPort.postMessage('busy'));
    `,
      { eval: true },
    );
    const [msg] = await require('node:events').once(worker, 'message');
    assert.equal(msg, 'busy');
    const t = Date.now();
    await worker.terminate();
    // Not a speed check: it did not wait for the minutes' tasks.
    assert.ok(Date.now() - t < 30_000, `terminate took ${Date.now() - t} ms`);
  }
  // The main thread's pools still work.
  const pool = new Pool();
  const { result } = await pool.post(Buffer.from('abc'), { kernel: 'md5' });
  assert.equal(result.toString('hex'), '900150983cd24fb0d6963f7d28e17f72');
  await pool.close();
});

test('process.exit() with tasks running does not crash', () => {
  const r = runNode(`
    const { Pool, micros } = require('.');
    const { waitFor } = require('./__test__/wait');
    const pool = new Pool({ minThreads: 2, maxThreads: 2 });
    const big = Buffer.alloc(32 << 20, 7);
    for (let i = 0; i < 50; i++) pool.post(big);
    pool.post(micros(5000000), { kernel: 'sleep' });
    waitFor(() => pool.stats().busyThreads === 2, { what: 'both threads running', interval: 1 })
      .then(() => process.exit(3));
  `);
  assert.equal(r.signal, null, r.stderr);
  assert.equal(r.status, 3, r.stderr);
});

test('OS threads: a closed pool leaves none behind', async () => {
  // The first pool of a process also starts the one thread that frees large
  // results (it lives as long as the process): counted from after it.
  await new Pool().close();
  const before = osThreads();
  const pool = new Pool({ minThreads: 2, maxThreads: 2 });
  assert.ok(osThreads() >= before + 2);
  await pool.post(Buffer.from('x'));
  await pool.close();
  assert.equal(osThreads(), before);
});

test('after destroy(), work given anew fails ERR_TIDEPOOL_CLOSED everywhere, as after close()', async () => {
  for (const stop of ['close', 'destroy']) {
    const pool = new Pool();
    await pool[stop]();
    const codes = [];
    const code = (p) =>
      p.then(
        () => 'ok',
        (err) => err.code,
      );
    codes.push(await code(pool.post(Buffer.from('x'))));
    codes.push(await code(pool.postMany([Buffer.from('x')])));
    const gzip = pool.createGzip();
    const failed = new Promise((resolve) => gzip.on('error', (err) => resolve(err.code)));
    codes.push(await new Promise((resolve) => gzip.write('x', (err) => resolve(err?.code))));
    codes.push(await failed);
    const hash = pool.createHash('sha256');
    hash.update('x');
    codes.push(await code(hash.digest()));
    const fresh = pool.createHash('sha256');
    codes.push(
      (() => {
        try {
          fresh.copy();
          return 'ok';
        } catch (err) {
          return err.code;
        }
      })(),
    );
    fresh.destroy();
    assert.deepEqual(new Set(codes), new Set(['ERR_TIDEPOOL_CLOSED']), `${stop}: ${codes}`);
  }
});

test('a chunk paused for its reader when destroy() comes fails ERR_TIDEPOOL_DESTROYED once read', async () => {
  const pool = new Pool();
  const gunzip = pool.createGunzip({ highWaterMark: 16 * 1024 });
  const failed = new Promise((resolve) => gunzip.on('error', (err) => resolve(err.code)));
  const called = new Promise((resolve) =>
    gunzip.write(zlib.gzipSync(Buffer.alloc(8 << 20)), resolve),
  );
  // Its output fills the reader; the chunk waits for it, given before destroy().
  await waitFor(() => gunzip.readableLength > 0, { what: 'the first output' });
  await pool.destroy();
  gunzip.resume();
  assert.equal((await called)?.code, 'ERR_TIDEPOOL_DESTROYED');
  assert.equal(await failed, 'ERR_TIDEPOOL_DESTROYED');
});
