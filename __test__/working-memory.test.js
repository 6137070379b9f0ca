'use strict';
// maxWorkingBytes: the working memory of running memory-hard tasks
// (Argon2's blocks) bounded, waiting for it visible in stats(), a task
// that alone needs more refused with a typed error, a waiting task still
// stopped by its signal. Each waits for states the pool reports.

const test = require('node:test');
const assert = require('node:assert/strict');
const password = require('@tidepool-rs/pool/password');
const { Pool } = require('..');
const { waitFor, poolState } = require('./wait');

const MiB = 1024 * 1024;

/** Resolves once `pool.stats()` satisfies `ok` (waitFor's); `seen(stats)` sees each sample. */
function until(pool, ok, seen = () => {}) {
  const check = () => {
    const s = pool.stats();
    seen(s);
    return ok(s) && s;
  };
  const what = `the pool's stats to satisfy ${ok}`;
  return waitFor(check, { what, interval: 1, timeoutMs: 30_000, state: poolState(pool) });
}

test('the option: an integer from 1, or Infinity', async () => {
  for (const bad of [0, -1, 1.5, NaN]) {
    assert.throws(() => new Pool({ maxWorkingBytes: bad }), { code: 'ERR_OUT_OF_RANGE' });
  }
  assert.throws(() => new Pool({ maxWorkingBytes: '1' }), { code: 'ERR_INVALID_ARG_TYPE' });
  const pool = new Pool({ maxWorkingBytes: Infinity });
  assert.equal(pool.stats().workingBytes, 0);
  assert.equal(pool.stats().memoryWaiting, 0);
  await pool.close();
});

test('running hashes never hold more than the bound; the others wait for it, and all finish', async () => {
  // Room for one 16 MiB Argon2 hash at a time, on four threads.
  const pool = new Pool({ minThreads: 4, maxThreads: 4, maxWorkingBytes: 24 * MiB });
  try {
    let most = 0;
    const hashes = Array.from({ length: 8 }, (_, i) =>
      password.hash(`pw${i}`, { pool, memoryCost: 16 * 1024, timeCost: 3 }),
    );
    const watch = (s) => (most = Math.max(most, s.workingBytes));
    // Threads that took a hash while another runs wait for its memory.
    await until(pool, (s) => s.memoryWaiting > 0, watch);
    const stored = await Promise.all(hashes);
    await until(pool, (s) => s.memoryWaiting === 0 && s.workingBytes === 0, watch);
    assert.ok(most <= 24 * MiB && most >= 16 * MiB, `held at most ${most} bytes`);
    for (const [i, s] of stored.entries())
      assert.equal(await password.verify(s, `pw${i}`, { pool }), true);
  } finally {
    await pool.close();
  }
});

test('a task that alone needs more than the bound fails at once, typed; others run', async () => {
  const pool = new Pool({ maxWorkingBytes: 8 * MiB });
  try {
    await assert.rejects(password.hash('pw', { pool, memoryCost: 16 * 1024 }), {
      code: 'ERR_TIDEPOOL_INVALID_INPUT',
      message: /more than the pool's maxWorkingBytes \(8388608\)/,
    });
    // Kernels with no working memory never wait.
    const { result } = await pool.post(Buffer.from('x'));
    assert.equal(result.length, 32);
    assert.match(
      await password.hash('pw', { pool, memoryCost: 4096, timeCost: 1 }),
      /^\$argon2id\$/,
    );
  } finally {
    await pool.close();
  }
});

test('a signal stops a task waiting for memory; the line goes on without it', async () => {
  // Two threads always: the second takes the second hash while the first runs.
  const pool = new Pool({ minThreads: 2, maxThreads: 2, maxWorkingBytes: 24 * MiB });
  try {
    const long = password.hash('first', { pool, memoryCost: 16 * 1024, timeCost: 20 });
    await until(pool, (s) => s.workingBytes > 0);
    const controller = new AbortController();
    const waiting = password.hash('second', {
      pool,
      memoryCost: 16 * 1024,
      timeCost: 1,
      signal: controller.signal,
    });
    await until(pool, (s) => s.memoryWaiting === 1);
    controller.abort();
    await assert.rejects(waiting, { name: 'AbortError' });
    await until(pool, (s) => s.memoryWaiting === 0);
    assert.match(await long, /^\$argon2id\$/);
    await until(pool, (s) => s.workingBytes === 0);
  } finally {
    await pool.close();
  }
});
