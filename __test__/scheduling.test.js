'use strict';
// Which thread takes a task: no task waits (much longer than spawnDelayMs)
// while a thread of the pool idles, whatever minThreads is.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Pool, micros } = require('..');
const { waitFor, poolState, holdThread } = require('./wait');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('minThreads: 0: a lone task posted to an idle pool runs, and the process exits', () => {
  // Run in its own process: on failure the task never settles and the
  // process would never exit (the timeout below catches that).
  const code = `
    const { Pool } = require('.');
    const { waitFor } = require('./__test__/wait');
    const pool = new Pool({ minThreads: 0, idleTimeoutMs: 1000 });
    (async () => {
      await pool.post(Buffer.from('first'));
      await new Promise((r) => setTimeout(r, 50)); // the one thread parks, idle
      await pool.post(Buffer.from('second'));
      await waitFor(() => pool.stats().threads === 0, { what: 'the idle thread to retire' }); // none left
      await pool.post(Buffer.from('third'));
      const s = pool.stats();
      console.log(JSON.stringify({ completed: s.completed, retired: s.retired }));
    })();
  `;
  const r = spawnSync(process.execPath, ['-e', code], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
    timeout: 15_000,
  });
  assert.equal(r.signal, null, 'the process hung');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.completed, 3);
  assert.ok(out.retired >= 1, 'the idle thread retired in between');
});

test('a lone task does not wait behind a long one while an extra thread idles', async () => {
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 2, idleTimeoutMs: 60_000 });
  let hold;
  try {
    await Promise.all(Array.from({ length: 4 }, () => pool.post(micros(20_000))));
    assert.equal(pool.stats().threads, 2, 'warm-up started the extra thread');
    await sleep(30); // both threads idle
    hold = await holdThread(pool, { what: 'a thread to take the long task' }); // runs until released
    let smallDone = false;
    const small = pool.post(micros(100)).then(() => (smallDone = true));
    // Were it to wait behind the long one, it would wait for the release.
    await waitFor(() => smallDone, {
      what: 'the small task to finish while the long one runs',
      state: poolState(pool),
    });
    await small;
    assert.equal(pool.stats().spawned, 2, 'no new thread was needed');
  } finally {
    hold?.release();
    await pool.close();
  }
});

// The repro: once the pool knows its tasks are tiny, a worker
// takes several together; one of them proving long must neither hold the
// results of those run before it nor the ones taken after it.
for (const options of [{}, { maxThreads: 4 }, { minThreads: 2 }, { maxThreads: 1 }]) {
  test(`tiny tasks posted beside a long one settle while it runs (${JSON.stringify(options)})`, async () => {
    const pool = new Pool(options);
    const controller = new AbortController();
    try {
      await Promise.all(Array.from({ length: 20_000 }, (_, i) => pool.post(Buffer.alloc(64, i))));
      const settledSmall = [];
      const small = (i) => pool.post(Buffer.alloc(64, i)).then(() => settledSmall.push(i));
      const posted = [small(0)];
      const long = pool.post(micros(60_000_000), { kernel: 'sleep', signal: controller.signal });
      // One thread runs what came before the long task, and nothing after it.
      const behind = options.maxThreads === 1 ? 0 : 6;
      for (let i = 1; i <= behind; i++) posted.push(small(i));
      await waitFor(() => settledSmall.length === 1 + behind, {
        what: 'the tiny tasks to settle while the long one runs',
        state: () => `settled ${JSON.stringify(settledSmall)}; ${poolState(pool)()}`,
      });
      assert.equal(pool.stats().busyThreads, 1, 'the long task still runs');
      controller.abort();
      await assert.rejects(long, { name: 'AbortError' });
      await Promise.all(posted);
    } finally {
      controller.abort();
      await pool.close();
    }
  });
}

test('minThreads: 0: close() with a task queued and no thread left runs the task, then resolves', () => {
  const code = `
    const { Pool } = require('.');
    const { waitFor } = require('./__test__/wait');
    (async () => {
      const fresh = new Pool({ minThreads: 0 });
      const a = fresh.post(Buffer.from('a'));
      await fresh.close(); // no thread had started yet
      const warmed = new Pool({ minThreads: 0, idleTimeoutMs: 20 });
      await warmed.post(Buffer.from('warm'));
      await waitFor(() => warmed.stats().threads === 0, { what: 'the thread to retire' });
      const b = warmed.post(Buffer.from('b'));
      await warmed.close(); // its thread had retired
      const results = await Promise.all([a, b]);
      console.log(JSON.stringify({ settled: results.length, pending: fresh.stats().pending + warmed.stats().pending }));
    })();
  `;
  const r = spawnSync(process.execPath, ['-e', code], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
    timeout: 15_000,
  });
  assert.equal(r.signal, null, 'the process hung');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { settled: 2, pending: 0 });
});
