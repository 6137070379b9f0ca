'use strict';
// Which thread takes a task: no task waits (much longer than spawnDelayMs)
// while a thread of the pool idles, whatever minThreads is.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Pool, micros } = require('..');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('minThreads: 0: a lone task posted to an idle pool runs, and the process exits', () => {
  // Run in its own process: on failure the task never settles and the
  // process would never exit (the timeout below catches that).
  const code = `
    const { Pool } = require('.');
    const pool = new Pool({ minThreads: 0, idleTimeoutMs: 1000 });
    (async () => {
      await pool.post(Buffer.from('first'));
      await new Promise((r) => setTimeout(r, 50)); // the one thread parks, idle
      await pool.post(Buffer.from('second'));
      await new Promise((r) => setTimeout(r, 1200)); // the thread retires: none left
      await pool.post(Buffer.from('third'));
      const s = pool.stats();
      console.log(JSON.stringify({ completed: s.completed, retired: s.retired }));
    })();
  `;
  const r = spawnSync(process.execPath, ['-e', code], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 15_000 });
  assert.equal(r.signal, null, 'the process hung');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.completed, 3);
  assert.ok(out.retired >= 1, 'the idle thread retired in between');
});

test('a lone task does not wait behind a long one while an extra thread idles', async () => {
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 2, idleTimeoutMs: 60_000 });
  try {
    await Promise.all(Array.from({ length: 4 }, () => pool.post(micros(20_000))));
    assert.equal(pool.stats().threads, 2, 'warm-up started the extra thread');
    await sleep(30); // both threads idle
    let longDone = false;
    const long = pool.post(micros(1_500_000)).then(() => (longDone = true));
    while (pool.stats().busyThreads === 0) await sleep(1);
    await pool.post(micros(100));
    assert.equal(longDone, false, 'the small task finished while the long one still ran');
    assert.equal(pool.stats().spawned, 2, 'no new thread was needed');
    await long;
  } finally {
    await pool.close();
  }
});

test('minThreads: 0: close() with a task queued and no thread left runs the task, then resolves', () => {
  const code = `
    const { Pool } = require('.');
    (async () => {
      const fresh = new Pool({ minThreads: 0 });
      const a = fresh.post(Buffer.from('a'));
      await fresh.close(); // no thread had started yet
      const warmed = new Pool({ minThreads: 0, idleTimeoutMs: 20 });
      await warmed.post(Buffer.from('warm'));
      while (warmed.stats().threads !== 0) await new Promise((r) => setTimeout(r, 10));
      const b = warmed.post(Buffer.from('b'));
      await warmed.close(); // its thread had retired
      const results = await Promise.all([a, b]);
      console.log(JSON.stringify({ settled: results.length, pending: fresh.stats().pending + warmed.stats().pending }));
    })();
  `;
  const r = spawnSync(process.execPath, ['-e', code], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 15_000 });
  assert.equal(r.signal, null, 'the process hung');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { settled: 2, pending: 0 });
});
