'use strict';
// Bounded queue, its three policies, needsDrain / 'drain', queue-age
// deadlines and the input size limit.

const test = require('node:test');
const assert = require('node:assert/strict');
const { once } = require('node:events');
const { Pool, micros } = require('..');
const { waitFor, poolState, settle, holdThread } = require('./wait');

/**
 * A 1-thread sleep pool whose only thread is held busy (see holdThread())
 * until the test calls `hold.release()`; the held task then rejects with
 * an AbortError, and counts as failed.
 */
async function busyPool(options) {
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 1, ...options });
  return { pool, hold: await holdThread(pool) };
}

/** The held task was let go: it rejected with an AbortError. */
async function released(hold) {
  hold.release();
  const outcome = await hold.settled;
  assert.equal(outcome.status, 'rejected');
  assert.equal(outcome.reason.name, 'AbortError');
}

test("queueFull 'reject' (default): a post to a full queue rejects with ERR_TIDEPOOL_QUEUE_FULL", async () => {
  const { pool, hold } = await busyPool({ maxQueue: 2 });
  try {
    const queued = [pool.post(micros(1000)), pool.post(micros(1000))];
    assert.equal(pool.needsDrain, true);
    await assert.rejects(pool.post(micros(1000)), { code: 'ERR_TIDEPOOL_QUEUE_FULL' });
    assert.equal(pool.stats().failed, 1);
    const drained = once(pool, 'drain');
    await released(hold);
    await drained;
    assert.equal(pool.needsDrain, false);
    await Promise.all(queued);
    assert.equal(pool.stats().completed, 2);
  } finally {
    hold.release();
    await pool.close();
  }
});

test("queueFull 'drop-oldest': the oldest queued task rejects with ERR_TIDEPOOL_DROPPED", async () => {
  const { pool, hold } = await busyPool({ maxQueue: 2, queueFull: 'drop-oldest' });
  try {
    const first = pool.post(micros(1000));
    const second = pool.post(micros(1000));
    const third = pool.post(micros(1000));
    await assert.rejects(first, { code: 'ERR_TIDEPOOL_DROPPED' });
    await released(hold);
    await Promise.all([second, third]);
    assert.equal(pool.stats().completed, 2, 'the two that were not dropped');
  } finally {
    hold.release();
    await pool.close();
  }
});

test("queueFull 'wait': posts wait for room in order, without blocking the event loop", async () => {
  const { pool, hold } = await busyPool({ maxQueue: 2, queueFull: 'wait' });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    const order = [];
    const posts = Array.from({ length: 12 }, (_, i) =>
      pool.post(micros(2000)).then(() => order.push(i)),
    );
    assert.equal(pool.needsDrain, true);
    assert.equal(pool.stats().queued, 2, 'only maxQueue tasks reach the queue');
    // The timer ticks while ten posts wait for room (the thread is held
    // until the test lets it go).
    await waitFor(() => ticks > 10, {
      what: 'the event loop to keep running while posts wait for room',
    });
    assert.equal(pool.stats().queued, 2, 'the posts were still waiting');
    assert.equal(order.length, 0);
    const drained = once(pool, 'drain');
    await released(hold);
    await Promise.all(posts);
    await drained;
    assert.deepEqual(order, [...Array(12).keys()], 'settled in post order');
    assert.equal(pool.needsDrain, false);
  } finally {
    clearInterval(timer);
    hold.release();
    await pool.close();
  }
});

test("queueFull 'wait': close() still runs the waiting posts; destroy() rejects them", async () => {
  const a = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const waiting = Array.from({ length: 4 }, () => a.pool.post(micros(1000)));
  const closed = a.pool.close(); // while one post is queued and three wait
  await released(a.hold);
  await closed;
  await Promise.all(waiting);
  assert.equal(a.pool.stats().completed, 4);

  const b = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const doomed = Promise.allSettled(Array.from({ length: 4 }, () => b.pool.post(micros(1000))));
  await b.pool.destroy();
  for (const o of await doomed) assert.equal(o.reason.code, 'ERR_TIDEPOOL_DESTROYED');
  assert.equal(
    (await b.hold.settled).reason.code,
    'ERR_TIDEPOOL_DESTROYED',
    'the running task too',
  );
  assert.equal(b.pool.stats().pending, 0);
});

test('postMessage on a full queue emits error with the message', async () => {
  const { pool, hold } = await busyPool({ maxQueue: 1 });
  try {
    pool.postMessage(micros(1000));
    const message = micros(1000);
    pool.postMessage(message);
    const [err, msg] = await once(pool, 'error');
    assert.equal(err.code, 'ERR_TIDEPOOL_QUEUE_FULL');
    assert.equal(msg, message);
    await released(hold);
  } finally {
    hold.release();
    await pool.close();
  }
});

test('maxQueueAgeMs: a task that waited too long rejects with ERR_TIDEPOOL_TIMEOUT instead of running late', async () => {
  const { pool, hold } = await busyPool({ maxQueueAgeMs: 20 });
  try {
    const t = Date.now();
    const late = pool.post(micros(10_000_000)); // would take 10 s if it ran
    // The thread is let go once the task has waited past the limit.
    await waitFor(() => pool.stats().oldestQueuedMs > 20, {
      what: 'the queued task to wait past maxQueueAgeMs',
    });
    await released(hold);
    await assert.rejects(late, { code: 'ERR_TIDEPOOL_TIMEOUT' });
    // Not a speed check: settling sooner than its 10 s of sleep means it did not run.
    assert.ok(Date.now() - t < 10_000, 'it was not run');
    // A fresh task on an idle pool is well within the limit.
    await pool.post(micros(1000));
  } finally {
    hold.release();
    await pool.close();
  }
});

test('maxInputBytes: larger inputs throw ERR_OUT_OF_RANGE synchronously, before they are queued', async () => {
  const pool = new Pool({ maxInputBytes: 16 });
  try {
    assert.throws(() => pool.post(Buffer.alloc(17)), {
      name: 'RangeError',
      code: 'ERR_OUT_OF_RANGE',
    });
    assert.throws(() => pool.post([Buffer.alloc(10), Buffer.alloc(7)]), {
      code: 'ERR_OUT_OF_RANGE',
    });
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
  const unlimited = new Pool({
    maxQueue: Infinity,
    maxQueueAgeMs: Infinity,
    maxInputBytes: Infinity,
  });
  return unlimited.close();
});

test("destroy() emits 'error' for every postMessage still waiting for room", async () => {
  const { pool, hold } = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const runningOutcome = hold.settled.then((o) => o.reason.code);
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
  // The long tasks run for a minute unless aborted: none can finish while
  // the test looks.
  const pool = new Pool({
    kernel: 'sleep',
    minThreads: 1,
    maxThreads: 2,
    idleTimeoutMs: 60_000,
    maxQueue: 2,
    queueFull: 'wait',
  });
  const stop = new AbortController();
  const long = () => settle(pool.post(micros(60_000_000), { signal: stop.signal }));
  try {
    await Promise.all(Array.from({ length: 6 }, () => pool.post(micros(20_000))));
    assert.equal(pool.stats().threads, 2, 'warm-up started the extra thread');
    const completed = pool.stats().completed;
    const longs = [long()];
    await waitFor(() => pool.stats().busyThreads === 1 && pool.stats().queued === 0, {
      what: 'a thread to take the first long task',
      state: poolState(pool),
    });
    longs.push(long(), long()); // the queue is full
    const waiting = pool.post(micros(1000));
    assert.equal(pool.needsDrain, true);
    await waitFor(() => pool.stats().busyThreads === 2 && pool.stats().queued === 2, {
      what: 'the other thread to take a long task, and the waiting post to take its place',
      state: poolState(pool),
    });
    assert.equal(pool.stats().completed, completed, 'before any task finished');
    stop.abort();
    await waiting;
    for (const o of await Promise.all(longs)) assert.equal(o.reason.name, 'AbortError');
  } finally {
    stop.abort();
    await pool.close();
  }
});

test('maxQueueAgeMs must be above 0 (0 would expire every task)', () => {
  assert.throws(() => new Pool({ maxQueueAgeMs: 0 }), {
    name: 'RangeError',
    code: 'ERR_OUT_OF_RANGE',
  });
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
    // The first task must reach the test as a 'message', so it cannot be
    // held and let go (an aborted task is an 'error'): 500 ms, far longer
    // than the test takes to see it running and fill the queue behind it.
    pool.postMessage(micros(500_000)); // runs first
    await waitFor(() => pool.stats().busyThreads === 1 && pool.stats().queued === 0, {
      what: 'the thread to take the first task',
      state: poolState(pool),
    });
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
  const { pool, hold } = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  const posts = Array.from({ length: 4 }, () => pool.post(micros(1000)));
  assert.equal(pool.stats().pending, 5, 'the running one, the queued one and three waiting');
  await released(hold);
  await Promise.all(posts);
  await pool.close();
  const failed = pool.stats().failed;
  await assert.rejects(pool.post(micros(1)), { code: 'ERR_TIDEPOOL_CLOSED' });
  assert.equal(pool.stats().failed, failed + 1);
  assert.equal(pool.stats().pending, 0);
});

/** `micros(us)` in memory of its own, so that detaching it detaches nothing else. */
function detachableMicros(us) {
  const view = new Uint8Array(new ArrayBuffer(4));
  view.set(micros(us));
  return view;
}

const detach = (view) => structuredClone(view.buffer, { transfer: [view.buffer] });

test('a binary detached while its post waits for room rejects that post, named where it is', async () => {
  const { pool, hold } = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  try {
    const queued = pool.post(micros(1000));
    const part = detachableMicros(1000);
    const waiting = settle(pool.post([micros(1000), part]));
    assert.equal(pool.needsDrain, true);
    detach(part);
    await released(hold);
    const outcome = await waiting;
    assert.equal(outcome.status, 'rejected');
    assert.equal(outcome.reason.code, 'ERR_INVALID_STATE');
    assert.match(outcome.reason.message, /"message\[1\]"/);
    assert.ok(outcome.reason instanceof TypeError);
    await queued;
    assert.equal((await pool.post(micros(1))).result.length, 0, 'the pool goes on');
  } finally {
    hold.release();
    await pool.close();
  }
});

test('a binary of a batch detached while the batch waits for room fails the batch at that element', async () => {
  const { pool, hold } = await busyPool({ maxQueue: 1, queueFull: 'wait' });
  try {
    const late = detachableMicros(1000);
    const messages = [micros(1000), micros(1000), micros(1000), late, micros(1000)];
    const batch = settle(pool.postMany(messages));
    // One task got the queue's one place; the other four wait, to be read
    // (by one native call) when room is made.
    await waitFor(() => pool.stats().queued === 1, {
      what: 'the first task to be queued',
      state: poolState(pool),
    });
    detach(late);
    await released(hold);
    const outcome = await batch;
    assert.equal(outcome.status, 'rejected');
    assert.equal(outcome.reason.code, 'ERR_INVALID_STATE');
    assert.match(outcome.reason.message, /"messages\[3\]"/);
    assert.equal(outcome.reason.index, 3);
    await waitFor(() => pool.stats().pending === 0, {
      what: 'the batch to leave nothing behind',
      state: poolState(pool),
    });
  } finally {
    hold.release();
    await pool.close();
  }
});
