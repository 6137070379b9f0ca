'use strict';
// The JavaScript contract: post() / postMessage(), message identity, select,
// events and stats.

const test = require('node:test');
const assert = require('node:assert/strict');
const { nodeOnly } = require('./runtime');
const crypto = require('node:crypto');
const { once } = require('node:events');
const { Pool, micros, defaults } = require('..');
const { waitFor, poolState, holdThread } = require('./wait');

const sha256 = (data) => crypto.createHash('sha256').update(data).digest();

test('post resolves with the result and the very message posted', async () => {
  const pool = new Pool();
  try {
    const message = { id: 7, fn: 'file', data: crypto.randomBytes(100) };
    const out = await pool.post(message);
    assert.deepEqual(Object.keys(out).sort(), ['message', 'result']);
    assert.equal(out.message, message, 'same object, not a copy');
    assert.deepEqual(out.result, sha256(message.data));
  } finally {
    await pool.close();
  }
});

test('200,000 tasks all settle with the digest of their own message', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    const n = 200_000;
    const messages = [];
    for (let i = 0; i < n; i++) {
      const data = Buffer.allocUnsafe(8 + (i % 56));
      data.fill(i % 251);
      data.writeUInt32LE(i, 0);
      messages.push({ i, data });
    }
    const results = await Promise.all(messages.map((m) => pool.post(m)));
    assert.equal(results.length, n);
    for (let i = 0; i < n; i++) {
      const { result, message } = results[i];
      if (message !== messages[i]) assert.fail(`task ${i} resolved with another message`);
      const want = crypto.createHash('sha256').update(message.data).digest('hex');
      if (result !== want) assert.fail(`task ${i}: digest ${result} != ${want}`);
    }
    const s = pool.stats();
    assert.equal(s.completed, n);
    assert.equal(s.failed, 0);
    assert.equal(s.pending, 0);
  } finally {
    await pool.close();
  }
});

test('select picks the binary part; default select uses message.data', async () => {
  const parts = { head: Buffer.from('head-'), body: crypto.randomBytes(500) };
  const pool = new Pool({ select: (m) => [m.head, m.body] });
  try {
    const { result, message } = await pool.post(parts);
    assert.equal(message, parts);
    assert.deepEqual(result, sha256(Buffer.concat([parts.head, parts.body])));
  } finally {
    await pool.close();
  }
  const plain = new Pool();
  try {
    const msg = { data: Buffer.from('x') };
    assert.deepEqual((await plain.post(msg)).result, sha256(msg.data));
  } finally {
    await plain.close();
  }
});

test('a per-post kernel overrides the pool kernel', async () => {
  const pool = new Pool({ kernel: 'md5', encoding: 'hex' });
  try {
    const data = Buffer.from('abc');
    assert.equal((await pool.post(data)).result, '900150983cd24fb0d6963f7d28e17f72');
    assert.equal(
      (await pool.post(data, { kernel: 'sha1' })).result,
      'a9993e364706816aba3e25717850c26c9cd0d89d',
    );
    assert.equal((await pool.post(data, {})).result, '900150983cd24fb0d6963f7d28e17f72');
  } finally {
    await pool.close();
  }
});

test("'online' is emitted once, asynchronously, to a listener attached after new Pool()", async () => {
  const pool = new Pool();
  let count = 0;
  let sync = true;
  pool.on('online', () => {
    count++;
    assert.equal(sync, false, 'not emitted synchronously from the constructor');
  });
  sync = false;
  await new Promise((r) => setImmediate(r));
  assert.equal(count, 1);
  await pool.close();
});

test("postMessage delivers ('message', result, message) like the article's Coordinator", async () => {
  const pool = new Pool({ encoding: 'hex' });
  const sent = Array.from({ length: 1000 }, (_, id) => ({ id, data: crypto.randomBytes(64) }));
  const got = new Map();
  const done = new Promise((resolve) => {
    pool.on('message', (result, message) => {
      got.set(message, result);
      if (got.size === sent.length) resolve();
    });
  });
  for (const m of sent) pool.postMessage(m);
  await done;
  for (const m of sent)
    assert.equal(got.get(m), crypto.createHash('sha256').update(m.data).digest('hex'));
  await pool.close();
});

test("a failing postMessage task emits 'error' with the message; it is never silent", async () => {
  const pool = new Pool({ kernel: 'panic' });
  const message = { data: Buffer.from('boom') };
  pool.postMessage(message);
  const [err, msg] = await once(pool, 'error');
  assert.equal(err.code, 'ERR_TIDEPOOL_PANIC');
  assert.equal(msg, message);
  await pool.close();
});

test(
  'an exception thrown by a message listener surfaces as uncaught, after the batch settled',
  { skip: nodeOnly("its test runner catches an uncaught exception before 'uncaughtException'") },
  async () => {
    const pool = new Pool();
    const boom = new Error('listener failure');
    let seen = 0;
    pool.on('message', () => {
      seen++;
      if (seen === 1) throw boom;
    });
    const uncaught = new Promise((resolve) => {
      const listeners = process.listeners('uncaughtException');
      process.removeAllListeners('uncaughtException');
      process.once('uncaughtException', (err) => {
        for (const l of listeners) process.on('uncaughtException', l);
        resolve(err);
      });
    });
    for (let i = 0; i < 50; i++) pool.postMessage(Buffer.from([i]));
    assert.equal(await uncaught, boom);
    await waitFor(() => pool.stats().completed === 50, {
      what: 'all 50 tasks to complete',
      state: poolState(pool),
    });
    assert.equal(seen, 50, 'the rest of the batch was still delivered');
    await pool.close();
  },
);

test('stats() reports threads, queue and counters', async () => {
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 1 });
  let hold;
  try {
    const s0 = pool.stats();
    for (const key of [
      'threads',
      'idleThreads',
      'busyThreads',
      'queued',
      'oldestQueuedMs',
      'completed',
      'failed',
      'pending',
    ]) {
      assert.equal(typeof s0[key], 'number', key);
    }
    assert.equal(s0.threads, 1);
    hold = await holdThread(pool); // the running task, until released
    const posted = performance.now();
    const queued = [pool.post(micros(1000)), pool.post(micros(1000))];
    // The oldest queued task's age grows while it waits.
    await waitFor(() => pool.stats().oldestQueuedMs >= 20, {
      what: 'the oldest queued task to be reported 20 ms old',
      state: poolState(pool),
    });
    const s1 = pool.stats();
    // No older than the time since it was posted, however late this looks.
    const since = performance.now() - posted;
    assert.ok(s1.oldestQueuedMs <= since + 1, `oldest queued ${s1.oldestQueuedMs} ms of ${since}`);
    assert.equal(s1.busyThreads, 1);
    assert.equal(s1.idleThreads, 0);
    assert.equal(s1.queued, 2);
    assert.equal(s1.pending, 3);
    hold.release();
    await Promise.all(queued);
    await assert.rejects(pool.post(micros(10), { kernel: 'panic' }));
    const s2 = pool.stats();
    assert.equal(s2.completed, 2);
    assert.equal(s2.failed, 2, 'the released task and the panic');
    assert.equal(s2.queued, 0);
    assert.equal(s2.oldestQueuedMs, 0);
  } finally {
    hold?.release();
    await pool.close();
  }
});

test('spin and sleep take their duration in microseconds from micros()', async () => {
  const pool = new Pool();
  try {
    for (const kernel of ['spin', 'sleep']) {
      const t = process.hrtime.bigint();
      const { result } = await pool.post(micros(20_000), { kernel });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      assert.ok(ms >= 19, `${kernel} returned after ${ms} ms`);
      assert.equal(result.length, 0);
    }
  } finally {
    await pool.close();
  }
});

test('the pool grows under load and reports spawn events', async () => {
  const pool = new Pool({ kernel: 'spin', minThreads: 1, maxThreads: 2, spawnDelayMs: 1 });
  const spawns = [];
  pool.on('spawn', (e) => spawns.push(e));
  try {
    await Promise.all(Array.from({ length: 200 }, () => pool.post(micros(500))));
    assert.ok(spawns.length >= 2, 'core thread and one extra');
    assert.equal(spawns[0].reason, 'core');
    // The default rule, or the article's age test while no run time is known yet.
    assert.ok(['demand', 'queue-age'].includes(spawns[1].reason), spawns[1].reason);
    for (const e of spawns) {
      assert.equal(typeof e.threadId, 'number');
      assert.equal(typeof e.threads, 'number');
    }
    assert.equal(pool.stats().spawned, 2);
  } finally {
    await pool.close();
  }
});

test("a thread's 'spawn' comes before the results of the tasks it ran", async () => {
  // The README's Coordinator prints both: its 'open' line must come first.
  // The core thread's start raced its first result; 20 fresh pools make a
  // lost race likely (it was lost 1 time in 3).
  for (let round = 0; round < 20; round++) {
    const pool = new Pool({ kernel: 'sha256' });
    const seen = [];
    const done = new Promise((resolve, reject) => {
      pool.on('spawn', (e) => seen.push(`spawn ${e.threadId}`));
      pool.on('message', () => {
        seen.push('message');
        if (seen.filter((s) => s === 'message').length === 3) resolve();
      });
      pool.on('error', reject);
    });
    await new Promise((resolve) => pool.once('online', resolve));
    for (let i = 0; i < 3; i++) pool.postMessage(Buffer.alloc(16));
    await done;
    await pool.close();
    assert.match(seen[0], /^spawn /, `round ${round}: ${seen.join(', ')}`);
  }
});

test('minThreads: 0 starts without threads and starts one when work arrives', async () => {
  const pool = new Pool({ minThreads: 0 });
  try {
    assert.equal(pool.stats().threads, 0);
    const { result } = await pool.post(Buffer.from('abc'), { kernel: 'crc32' });
    assert.equal(result.toString('hex'), '352441c2');
    assert.ok(pool.stats().spawned >= 1);
  } finally {
    await pool.close();
  }
});

test('stats() reports queue wait and run time percentiles; reset restarts them', async () => {
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 1 });
  try {
    const started = process.hrtime.bigint();
    await Promise.all(Array.from({ length: 20 }, () => pool.post(micros(2000))));
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    const { waitTime, runTime } = pool.stats({ reset: true });
    for (const key of ['p50', 'p99', 'max', 'count']) {
      assert.equal(typeof waitTime[key], 'number');
      assert.equal(typeof runTime[key], 'number');
    }
    assert.equal(runTime.count, 20);
    assert.equal(waitTime.count, 20);
    // Each task sleeps 2 ms (percentiles are exact to 12.5 %). They ran one
    // after another: at least 10 of them, each at least p50 long (less
    // 12.5 %), fit in the time they all took, however slow this machine is.
    assert.ok(
      runTime.p50 >= 1.75 && runTime.p50 * 0.875 * 10 <= elapsed,
      `run p50 ${runTime.p50} ms, all 20 in ${elapsed} ms`,
    );
    assert.ok(runTime.max >= 2, `run max ${runTime.max}`);
    // One thread: the last task waited for the 19 before it.
    assert.ok(waitTime.max >= 19 * 2 * 0.875, `wait max ${waitTime.max}`);
    assert.ok(waitTime.p50 <= waitTime.p99 && waitTime.p99 <= waitTime.max);
    const after = pool.stats();
    assert.equal(after.runTime.count, 0);
    assert.equal(after.waitTime.max, 0);
    assert.throws(() => pool.stats({ reset: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
  } finally {
    await pool.close();
  }
});

test("scaleRule 'backlog' scales on the backlog estimate and says so", async () => {
  const pool = new Pool({ kernel: 'spin', maxThreads: 2, scaleRule: 'backlog' });
  const spawns = [];
  pool.on('spawn', (e) => spawns.push(e.reason));
  try {
    // One task first, so that the pool knows the mean run time (until then
    // the backlog rule falls back to the queue-age test).
    await pool.post(micros(1000));
    await Promise.all(Array.from({ length: 100 }, () => pool.post(micros(1000))));
    assert.deepEqual(spawns, ['core', 'backlog']);
  } finally {
    await pool.close();
  }
});

test("scaleRule 'demand' starts the threads a backlog needs back to back, and says so", async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 8, scaleRule: 'demand' });
  const spawns = [];
  pool.on('spawn', (e) => spawns.push(e.reason));
  try {
    await pool.post(micros(1000)); // the mean run time is known from here on
    // 400 tasks of 1 ms at once: ~50 ms of work for 8 threads; the rule
    // sizes the pool to its maximum as soon as the oldest task is 1 ms old.
    await Promise.all(Array.from({ length: 400 }, () => pool.post(micros(1000))));
    assert.deepEqual(spawns, ['core', ...Array(7).fill('demand')]);
  } finally {
    await pool.close();
  }
});

/** Nice value of every thread of this process whose name starts with `prefix`. */
function niceOfThreads(prefix) {
  const fs = require('node:fs');
  const out = [];
  for (const tid of fs.readdirSync('/proc/self/task')) {
    let comm;
    let stat;
    try {
      comm = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread exited meanwhile
    }
    // Fields after "(comm)": state is field 3, nice is field 19.
    if (comm.startsWith(prefix))
      out.push({ tid, comm, nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) });
  }
  return out;
}

test(
  'niceIncrement lowers the priority of the worker threads only (Linux)',
  { skip: process.platform !== 'linux' },
  async () => {
    const os = require('node:os');
    const own = os.getPriority(); // the priority of the calling (JS) thread on Linux
    for (const niceIncrement of [undefined, 0, 7]) {
      // This pool's threads are the ones that were not there before it (a
      // runtime that runs every test file in one process, as Bun's, may
      // still have other pools' threads exiting).
      const earlier = new Set(niceOfThreads('tidepool-').map((t) => t.tid));
      const ours = (prefix) => niceOfThreads(prefix).filter((t) => !earlier.has(t.tid));
      const pool = new Pool({ minThreads: 2, maxThreads: 2, niceIncrement });
      try {
        // Each worker lowers its priority before its first task.
        // The sleep kernel's tasks keep both threads busy at once.
        await Promise.all([
          pool.post(micros(20_000), { kernel: 'sleep' }),
          pool.post(micros(20_000), { kernel: 'sleep' }),
        ]);
        const expected = Math.min(19, own + (niceIncrement ?? defaults.niceIncrement));
        // Linux keeps 15 characters of a thread name: 'tidepool-superv'. The
        // process-wide thread that frees large results ('tidepool-free', at
        // the default increment whatever the pool's) is not a worker.
        const workers = ours('tidepool-').filter(
          (t) => !t.comm.startsWith('tidepool-sup') && t.comm !== 'tidepool-free',
        );
        assert.equal(workers.length, 2, JSON.stringify(workers));
        for (const w of workers)
          assert.equal(w.nice, expected, `${w.comm} with niceIncrement ${niceIncrement}`);
        const [supervisor] = ours('tidepool-sup');
        assert.equal(
          supervisor.nice,
          own,
          'the supervisor keeps the priority of the thread that started the pool',
        );
        assert.equal(os.getPriority(), own, 'the JS thread keeps its priority');
      } finally {
        await pool.close();
      }
    }
    assert.equal(defaults.niceIncrement, 10);
    for (const [niceIncrement, code] of [
      [-1, 'ERR_OUT_OF_RANGE'],
      [20, 'ERR_OUT_OF_RANGE'],
      [1.5, 'ERR_OUT_OF_RANGE'],
      ['5', 'ERR_INVALID_ARG_TYPE'],
    ]) {
      assert.throws(() => new Pool({ niceIncrement }), { code }, String(niceIncrement));
    }
  },
);
