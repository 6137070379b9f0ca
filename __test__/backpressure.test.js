'use strict';
// Bounded queue, its three policies, needsDrain / 'drain', queue-age
// deadlines and the input size limit.

const test = require('node:test');
const assert = require('node:assert/strict');
const { once } = require('node:events');
const { Pool, micros } = require('..');

const tick = () => new Promise((r) => setTimeout(r, 5));

/** A 1-thread sleep pool whose only thread is busy with a long task. */
async function busyPool(options) {
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 1, ...options });
  const running = pool.post(micros(80_000));
  while (pool.stats().busyThreads === 0) await tick();
  return { pool, running };
}

test("queueFull 'reject' (default): a post to a full queue rejects with ERR_TIDEPOOL_QUEUE_FULL", async () => {
  const { pool, running } = await busyPool({ maxQueue: 2 });
  const queued = [pool.post(micros(1000)), pool.post(micros(1000))];
  assert.equal(pool.needsDrain, true);
  await assert.rejects(pool.post(micros(1000)), { code: 'ERR_TIDEPOOL_QUEUE_FULL' });
  const drained = once(pool, 'drain');
  await running;
  await drained;
  assert.equal(pool.needsDrain, false);
  await Promise.all(queued);
  assert.equal(pool.stats().failed, 1);
  await pool.close();
});

test("queueFull 'drop-oldest': the oldest queued task rejects with ERR_TIDEPOOL_DROPPED", async () => {
  const { pool, running } = await busyPool({ maxQueue: 2, queueFull: 'drop-oldest' });
  const first = pool.post(micros(1000));
  const second = pool.post(micros(1000));
  const third = pool.post(micros(1000));
  await assert.rejects(first, { code: 'ERR_TIDEPOOL_DROPPED' });
  await Promise.all([running, second, third]);
  assert.equal(pool.stats().completed, 3);
  await pool.close();
});

test("queueFull 'wait': posts wait for room in order, without blocking the event loop", async () => {
  const { pool, running } = await busyPool({ maxQueue: 2, queueFull: 'wait' });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const order = [];
  const posts = Array.from({ length: 12 }, (_, i) => pool.post(micros(2000)).then(() => order.push(i)));
  assert.equal(pool.needsDrain, true);
  assert.equal(pool.stats().queued, 2, 'only maxQueue tasks reach the queue');
  const drained = once(pool, 'drain');
  await Promise.all([running, ...posts]);
  await drained;
  clearInterval(timer);
  assert.deepEqual(order, [...Array(12).keys()], 'settled in post order');
  assert.ok(ticks > 10, `the event loop kept running (${ticks} timer ticks)`);
  assert.equal(pool.needsDrain, false);
  await pool.close();
});

test("queueFull 'wait': close() still runs the waiting posts; destroy() rejects them", async () => {
  const a = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const waiting = Array.from({ length: 4 }, () => a.pool.post(micros(1000)));
  await a.pool.close();
  await Promise.all([a.running, ...waiting]);
  assert.equal(a.pool.stats().completed, 5);

  const b = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const doomed = Promise.allSettled(Array.from({ length: 4 }, () => b.pool.post(micros(1000))));
  const runningOutcome = b.running.catch((e) => e);
  await b.pool.destroy();
  for (const o of await doomed) assert.equal(o.reason.code, 'ERR_TIDEPOOL_DESTROYED');
  assert.equal((await runningOutcome).code, 'ERR_TIDEPOOL_DESTROYED');
  assert.equal(b.pool.stats().pending, 0);
});

test('postMessage on a full queue emits error with the message', async () => {
  const { pool, running } = await busyPool({ maxQueue: 1 });
  pool.postMessage(micros(1000));
  const message = micros(1000);
  pool.postMessage(message);
  const [err, msg] = await once(pool, 'error');
  assert.equal(err.code, 'ERR_TIDEPOOL_QUEUE_FULL');
  assert.equal(msg, message);
  await running;
  await pool.close();
});

test('maxQueueAgeMs: a task that waited too long rejects with ERR_TIDEPOOL_TIMEOUT instead of running late', async () => {
  const { pool, running } = await busyPool({ maxQueueAgeMs: 20 });
  const t = Date.now();
  const late = pool.post(micros(2_000_000)); // would take 2 s if it ran
  await assert.rejects(late, { code: 'ERR_TIDEPOOL_TIMEOUT' });
  assert.ok(Date.now() - t < 1000, 'it was not run');
  await running;
  // A fresh task on an idle pool is well within the limit.
  await pool.post(micros(1000));
  await pool.close();
});

test('maxInputBytes: larger inputs throw ERR_OUT_OF_RANGE synchronously, before they are queued', async () => {
  const pool = new Pool({ maxInputBytes: 16 });
  try {
    assert.throws(() => pool.post(Buffer.alloc(17)), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.post([Buffer.alloc(10), Buffer.alloc(7)]), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.postMessage(Buffer.alloc(17)), { code: 'ERR_OUT_OF_RANGE' });
    await pool.post(Buffer.alloc(16));
    assert.equal(pool.stats().completed, 1);
  } finally {
    await pool.close();
  }
});

test('backpressure options are validated', () => {
  for (const [options, code] of [
    [{ maxQueue: 0 }, 'ERR_OUT_OF_RANGE'],
    [{ maxQueue: 1.5 }, 'ERR_OUT_OF_RANGE'],
    [{ maxQueue: '10' }, 'ERR_INVALID_ARG_TYPE'],
    [{ queueFull: 'caller-runs' }, 'ERR_INVALID_ARG_VALUE'],
    [{ maxQueueAgeMs: -1 }, 'ERR_OUT_OF_RANGE'],
    [{ maxInputBytes: -1 }, 'ERR_OUT_OF_RANGE'],
    [{ maxInputBytes: NaN }, 'ERR_OUT_OF_RANGE'],
  ]) {
    assert.throws(() => new Pool(options), { code }, JSON.stringify(options));
  }
  const unlimited = new Pool({ maxQueue: Infinity, maxQueueAgeMs: Infinity, maxInputBytes: Infinity });
  return unlimited.close();
});

test("destroy() emits 'error' for every postMessage still waiting for room", async () => {
  const { pool, running } = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const runningOutcome = running.catch((e) => e.code);
  pool.postMessage(micros(1000)); // queued
  const waiting = [micros(1000), micros(1000), micros(1000)];
  for (const m of waiting) pool.postMessage(m);
  const errors = [];
  pool.on('error', (err, message) => errors.push([err.code, message]));
  await pool.destroy();
  assert.equal(await runningOutcome, 'ERR_TIDEPOOL_DESTROYED');
  for (const m of waiting) {
    assert.ok(
      errors.some(([code, msg]) => code === 'ERR_TIDEPOOL_DESTROYED' && msg === m),
      'each waiting message errored',
    );
  }
  assert.equal(pool.stats().pending, 0);
});

test('a thread taking a task from a full queue lets a waiting post in without waiting for a result', async () => {
  // Core thread busy for long; the extra thread (kept from a warm-up) takes
  // a queued long task after spawnDelayMs: the queue then has room although
  // no task has finished yet, and the waiting post must get in.
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 2, idleTimeoutMs: 60_000, maxQueue: 2, queueFull: 'wait' });
  try {
    await Promise.all(Array.from({ length: 6 }, () => pool.post(micros(20_000))));
    assert.equal(pool.stats().threads, 2, 'warm-up started the extra thread');
    const completed = pool.stats().completed;
    const long = [pool.post(micros(600_000))];
    while (pool.stats().busyThreads === 0) await tick();
    long.push(pool.post(micros(600_000)), pool.post(micros(600_000))); // the queue is full
    const waiting = pool.post(micros(1000));
    assert.equal(pool.needsDrain, true);
    const deadline = Date.now() + 400;
    const settledIn = () => pool.stats().busyThreads === 2 && pool.stats().queued === 2;
    while (!settledIn() && Date.now() < deadline) await tick();
    const s = pool.stats();
    assert.equal(s.busyThreads, 2);
    assert.equal(s.queued, 2, 'the waiting post is in the queue');
    assert.equal(s.completed, completed, 'before any task finished');
    await Promise.all([...long, waiting]);
  } finally {
    await pool.close();
  }
});

test('maxQueueAgeMs must be above 0 (0 would expire every task)', () => {
  assert.throws(() => new Pool({ maxQueueAgeMs: 0 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
  return new Pool({ maxQueueAgeMs: 0.5 }).close();
});

test("'drain' is not emitted while listeners have filled the queue again", async () => {
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 1, maxQueue: 2 });
  try {
    // Armed only once the queue is full: a slow machine may deliver the
    // first result while this test is still waiting for the thread to start.
    let refill = false;
    pool.on('message', () => {
      if (refill) {
        refill = false;
        // Back to maxQueue inside the batch (the worker may or may not have
        // taken the next task yet when this result arrives).
        while (pool.stats().queued < 2) pool.postMessage(micros(50_000));
      }
    });
    const drains = [];
    pool.on('drain', () => drains.push(pool.stats().queued));
    pool.postMessage(micros(50_000)); // runs first
    while (pool.stats().busyThreads === 0) await tick();
    pool.postMessage(micros(50_000));
    pool.postMessage(micros(50_000));
    assert.equal(pool.needsDrain, true);
    refill = true;
    await once(pool, 'drain');
    for (const queued of drains) assert.ok(queued < 2, `'drain' with ${queued} queued`);
  } finally {
    await pool.close();
  }
});

test('stats(): posts waiting for room are pending; a post refused by a closed pool counts as failed', async () => {
  const { pool, running } = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const posts = Array.from({ length: 4 }, () => pool.post(micros(1000)));
  assert.equal(pool.stats().pending, 5, 'the running one, the queued one and three waiting');
  await Promise.all([running, ...posts]);
  await pool.close();
  await assert.rejects(pool.post(micros(1)), { code: 'ERR_TIDEPOOL_CLOSED' });
  assert.equal(pool.stats().failed, 1);
  assert.equal(pool.stats().pending, 0);
});
