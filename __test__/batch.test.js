'use strict';
// postMany() and map(): many messages in one call, results in input order,
// a batch that fails (or is aborted) as one, and every task settled once.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { getEventListeners } = require('node:events');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { Pool, micros } = require('..');
const { waitFor, poolState, holdThread, everySettled } = require('./wait');

const sha256 = (b) => crypto.createHash('sha256').update(b).digest();
const tick = () => new Promise((r) => setTimeout(r, 5));

/** Iterates to the end; the number of results. */
async function drain(iterable) {
  let n = 0;
  for await (const { result } of iterable) n += result === undefined ? 0 : 1;
  return n;
}

function inputs(n, size = 64) {
  return Array.from({ length: n }, (_, i) => crypto.randomBytes(size + (i % 5)));
}

test('postMany resolves with every digest in input order', async () => {
  const pool = new Pool();
  try {
    const messages = inputs(5000);
    const results = await pool.postMany(messages);
    assert.equal(results.length, messages.length);
    for (let i = 0; i < messages.length; i++)
      assert.deepEqual(results[i], sha256(messages[i]), `result ${i}`);
    const s = await everySettled(pool);
    assert.equal(s.completed, 5000);
    assert.equal(s.failed, 0);
  } finally {
    await pool.close();
  }
});

test('postMany applies select, the encoding, kernel and params to every message', async () => {
  const pool = new Pool({ encoding: 'hex', select: (m) => m.payload });
  try {
    const messages = inputs(300).map((payload, id) => ({ id, payload }));
    const hex = await pool.postMany(messages, {
      kernel: 'hmac',
      params: { key: 'k', hash: 'sha1' },
    });
    for (let i = 0; i < messages.length; i++) {
      assert.equal(
        hex[i],
        crypto.createHmac('sha1', 'k').update(messages[i].payload).digest('hex'),
      );
    }
  } finally {
    await pool.close();
  }
});

test('postMany of an empty Array resolves with an empty Array', async () => {
  const pool = new Pool();
  try {
    assert.deepEqual(await pool.postMany([]), []);
    assert.equal(pool.stats().completed, 0);
  } finally {
    await pool.close();
  }
});

test('postMany checks the whole batch before queuing anything', async () => {
  const pool = new Pool();
  try {
    const good = inputs(10);
    assert.throws(() => pool.postMany('abc'), {
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: /"messages" argument/,
    });
    assert.throws(() => pool.postMany(new Proxy([], {})), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /Proxy/,
    });
    assert.throws(() => pool.postMany([...good, 42]), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /"messages\[10\]" argument/,
    });
    const detached = new ArrayBuffer(8);
    const view = new Uint8Array(detached);
    structuredClone(detached, { transfer: [detached] });
    assert.throws(() => pool.postMany([...good, Buffer.alloc(1), view]), {
      code: 'ERR_INVALID_STATE',
      message: /"messages\[11\]"/,
    });
    assert.throws(() => pool.postMany(good, { kernal: 'md5' }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /kernel/,
    });
    assert.throws(() => pool.postMany(good, { concurrency: 4 }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /option of map\(\)/,
    });
    assert.throws(() => pool.postMany(good, { kernel: 'nope' }), {
      code: 'ERR_TIDEPOOL_UNKNOWN_KERNEL',
    });
    assert.throws(() => pool.postMany([micros(1)], { kernel: 'sleep', timeoutMs: -1 }), {
      code: 'ERR_OUT_OF_RANGE',
    });
    const s = pool.stats();
    assert.equal(s.completed + s.failed + s.pending + s.queued, 0, 'nothing was queued');
  } finally {
    await pool.close();
  }
});

test('postMany reads each message once, and later changes to the Array change nothing', async () => {
  const pool = new Pool();
  try {
    const a = Buffer.from('first');
    const b = Buffer.from('second');
    let reads = 0;
    const messages = [a, b];
    Object.defineProperty(messages, 1, {
      get() {
        reads++;
        return b;
      },
    });
    const promise = pool.postMany(messages);
    messages.length = 0;
    const results = await promise;
    assert.equal(reads, 1);
    assert.deepEqual(results, [sha256(a), sha256(b)]);
  } finally {
    await pool.close();
  }
});

test('a failed task rejects the batch with its error and index, and cancels the rest', async () => {
  const pool = new Pool({ kernel: 'gunzip', maxThreads: 1 });
  try {
    const good = zlib.gzipSync(Buffer.from('hello'));
    const messages = Array.from({ length: 2000 }, (_, i) =>
      i === 7 ? Buffer.from('not gzip at all') : good,
    );
    await assert.rejects(pool.postMany(messages), (err) => {
      assert.equal(err.index, 7);
      assert.match(err.code, /^Z_/);
      return true;
    });
    const s = await everySettled(pool);
    assert.equal(s.completed + s.failed, 2000, 'every task settled once');
    assert.ok(s.failed >= 1);
    assert.ok(s.completed < 2000);
    // The pool goes on.
    assert.deepEqual((await pool.post(good)).result, Buffer.from('hello'));
  } finally {
    await pool.close();
  }
});

test('a batch settles only once no thread reads its messages: failed, aborted, left or ended by an error', async () => {
  // The buffer contract gives the caller its buffers back when the promise
  // settles (or the loop ends): the batch's running tasks must have
  // stopped by then, not merely been told to. Each case has a task still
  // running when the batch ends; `pending` counts it until it settles.
  const pool = new Pool({ minThreads: 2, maxThreads: 2 });
  try {
    const long = micros(5_000_000); // a 5 s sleep: stops within a millisecond of its cancel
    // A task fails while another of its batch runs (a long gunzip).
    const big = zlib.gzipSync(Buffer.alloc(256 << 20));
    await assert.rejects(
      pool.postMany([big, Buffer.from('not gzip')], { kernel: 'gunzip', maxOutputBytes: 2 ** 30 }),
      (err) => {
        assert.equal(err.index, 1);
        assert.equal(
          pool.stats().pending,
          0,
          'the running gunzip has stopped when the batch rejects',
        );
        return true;
      },
    );
    // Its signal fires while its tasks run.
    const ac = new AbortController();
    const aborted = pool.postMany([long, long], { kernel: 'sleep', signal: ac.signal });
    // (A thread may take both at once: tasks judged short are taken a few at a time.)
    await waitFor(() => pool.stats().busyThreads >= 1, {
      what: 'a sleep running',
      state: poolState(pool),
    });
    ac.abort();
    await assert.rejects(aborted, (err) => err.name === 'AbortError' && pool.stats().pending === 0);
    // A map() left (return(), what a break calls) while its tasks run.
    const iterator = pool.map([long, long], { kernel: 'sleep' })[Symbol.asyncIterator]();
    const first = iterator.next();
    await waitFor(() => pool.stats().busyThreads >= 1, {
      what: 'a sleep running',
      state: poolState(pool),
    });
    await iterator.return();
    assert.equal(pool.stats().pending, 0, 'return() completes once the running sleep has stopped');
    assert.deepEqual(await first, { value: undefined, done: true });
    // A map() ended by a failed task while another runs.
    const failingMap = pool.map([big, Buffer.from('junk')], {
      kernel: 'gunzip',
      maxOutputBytes: 2 ** 30,
    });
    const failing = failingMap[Symbol.asyncIterator]();
    // The second task fails first; the first is then stopped.
    await assert.rejects(failing.next(), (err) => err.index === 1 && pool.stats().pending === 0);
  } finally {
    await pool.close();
  }
});

test('timeoutMs limits each task of a batch; one past it fails the batch at once', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  try {
    // Message 1 runs past its limit; the 5 s sleeps behind it never start.
    const messages = [
      micros(10_000),
      micros(5_000_000),
      ...Array.from({ length: 50 }, () => micros(5_000_000)),
    ];
    await assert.rejects(pool.postMany(messages, { timeoutMs: 200 }), {
      code: 'ERR_TIDEPOOL_TIMEOUT',
      index: 1,
    });
    const s = await everySettled(pool);
    // Messages 0 and 1 ran, and the thread may have started message 2
    // before the batch was cancelled; had the others not been cancelled,
    // each would have run into its own limit.
    assert.ok(s.runTime.count <= 3, `the queued sleeps were cancelled (${s.runTime.count} ran)`);
    assert.equal(s.completed, 1);
    assert.equal(s.failed, 51);
  } finally {
    await pool.close();
  }
});

test('an aborted signal cancels the whole batch, and an already aborted one throws', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  try {
    const ac = new AbortController();
    const reason = new Error('enough');
    // A minute each: none ends by itself while the test runs.
    const batch = pool.postMany(
      Array.from({ length: 100 }, () => micros(60_000_000)),
      { signal: ac.signal },
    );
    await waitFor(() => pool.stats().busyThreads === 1, {
      what: 'the thread to start the first task',
      state: poolState(pool),
    });
    ac.abort(reason);
    await assert.rejects(
      batch,
      (err) => err.name === 'AbortError' && err.cause === reason && err.index === undefined,
    );
    const s = await everySettled(pool);
    assert.equal(s.completed, 0, 'the running sleep stopped');
    assert.equal(s.failed, 100);
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'no listener left behind');
    assert.throws(() => pool.postMany([micros(1)], { signal: AbortSignal.abort() }), {
      name: 'AbortError',
    });
  } finally {
    await pool.close();
  }
});

test('a batch that ends releases its signal listener', async () => {
  const pool = new Pool();
  try {
    const ac = new AbortController();
    await pool.postMany(inputs(3000), { signal: ac.signal });
    await everySettled(pool);
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    ac.abort(); // nothing left to cancel
  } finally {
    await pool.close();
  }
});

test('postMany on a closed pool rejects, and destroy() rejects a running batch', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const batch = pool.postMany(Array.from({ length: 3000 }, () => micros(2000)));
  const rejected = assert.rejects(batch, { code: 'ERR_TIDEPOOL_DESTROYED' });
  await waitFor(() => pool.stats().busyThreads === 1, {
    what: 'the thread to start the batch',
    state: poolState(pool),
  });
  await pool.destroy();
  await rejected;
  await assert.rejects(pool.postMany([micros(1)]), { code: 'ERR_TIDEPOOL_CLOSED' });
  const s = pool.stats();
  assert.equal(s.pending, 0);
  assert.equal(s.completed + s.failed, 3001);
});

test('a full queue: reject fails the batch at the first task that did not fit', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1, maxQueue: 10 });
  const hold = await holdThread(pool);
  try {
    await assert.rejects(pool.postMany(Array.from({ length: 25 }, () => micros(1))), {
      code: 'ERR_TIDEPOOL_QUEUE_FULL',
      index: 10,
    });
    hold.release();
    const s = await everySettled(pool);
    assert.equal(s.completed + s.failed, 26);
    assert.equal(s.queued, 0, 'the queued part left the queue');
  } finally {
    hold.release();
    await pool.close();
  }
});

test("a full queue: 'wait' feeds the batch in as room frees, in order", async () => {
  // (A hash's tiny messages share native tasks, up to 64 to a task: the
  // first chunk of 1024 is 16 tasks, more than the queue takes.)
  const pool = new Pool({ maxThreads: 1, maxQueue: 4, queueFull: 'wait' });
  try {
    const messages = inputs(2000);
    const before = pool.post(Buffer.from('first'));
    const promise = pool.postMany(messages);
    assert.equal(pool.needsDrain, true);
    assert.ok(pool.stats().pending > 16);
    const after = pool.post(Buffer.from('after'));
    const results = await promise;
    for (let i = 0; i < messages.length; i++) assert.deepEqual(results[i], sha256(messages[i]));
    await before;
    await after;
    const s = await everySettled(pool);
    assert.equal(s.completed, 2002);
  } finally {
    await pool.close();
  }
});

test("a full queue: 'drop-oldest' drops older tasks, or the batch's own when it is larger than the queue", async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1, maxQueue: 4, queueFull: 'drop-oldest' });
  let hold = await holdThread(pool);
  try {
    const old = pool.post(micros(1));
    const fits = pool.postMany(Array.from({ length: 4 }, () => micros(1)));
    await assert.rejects(old, { code: 'ERR_TIDEPOOL_DROPPED' });
    hold.release();
    assert.equal((await fits).length, 4);
    hold = await holdThread(pool);
    await assert.rejects(pool.postMany(Array.from({ length: 9 }, () => micros(1))), {
      code: 'ERR_TIDEPOOL_DROPPED',
      index: 0,
    });
    hold.release();
    const s = await everySettled(pool);
    assert.equal(s.completed + s.failed, 1 + 1 + 4 + 1 + 9);
  } finally {
    hold.release();
    await pool.close();
  }
});

test('map yields { result, message } in input order from a sync iterable', async () => {
  const pool = new Pool();
  try {
    const messages = inputs(3000);
    let i = 0;
    for await (const { result, message } of pool.map(messages, { concurrency: 64 })) {
      assert.equal(message, messages[i]);
      assert.deepEqual(result, sha256(messages[i]));
      i++;
    }
    assert.equal(i, 3000);
    assert.equal((await everySettled(pool)).completed, 3000);
  } finally {
    await pool.close();
  }
});

test('map with a window larger than a chunk refills it while it is still being fed', async () => {
  const pool = new Pool();
  try {
    const messages = inputs(20000);
    let i = 0;
    for await (const { result, message } of pool.map(messages, { concurrency: 3000 })) {
      assert.equal(message, messages[i]);
      if (i % 997 === 0) assert.deepEqual(result, sha256(message));
      i++;
    }
    assert.equal(i, 20000);
    const s = await everySettled(pool);
    assert.equal(s.completed, 20000);
  } finally {
    await pool.close();
  }
});

test('map keeps at most `concurrency` messages pulled ahead of the consumer', async () => {
  const pool = new Pool();
  try {
    let pulled = 0;
    function* source() {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield Buffer.from(`message ${i}`);
      }
    }
    let consumed = 0;
    let most = 0;
    for await (const { result, message } of pool.map(source(), { concurrency: 16 })) {
      consumed++;
      most = Math.max(most, pulled - consumed);
      assert.deepEqual(result, sha256(message));
      if (consumed % 100 === 0) await tick(); // a slow consumer
    }
    assert.equal(consumed, 1000);
    assert.ok(most <= 16, `${most} messages were ahead of the consumer`);
  } finally {
    await pool.close();
  }
});

test('map pulls from an async iterable and awaits the promises of a sync one', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    async function* files() {
      for (let i = 0; i < 200; i++) {
        await null;
        yield { name: `f${i}`, data: Buffer.from(`contents of ${i}`) };
      }
    }
    const seen = [];
    for await (const { result, message } of pool.map(files(), { kernel: 'md5' })) {
      assert.equal(result, crypto.createHash('md5').update(message.data).digest('hex'));
      seen.push(message.name);
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 200 }, (_, i) => `f${i}`),
    );
    const promised = Array.from({ length: 50 }, (_, i) => Promise.resolve(Buffer.from(`p${i}`)));
    let n = 0;
    for await (const { result } of pool.map(promised)) {
      assert.equal(result, sha256(Buffer.from(`p${n}`)).toString('hex'));
      n++;
    }
    assert.equal(n, 50);
  } finally {
    await pool.close();
  }
});

test('breaking out of map cancels the tasks in flight and closes the source', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  try {
    let closed = false;
    function* source() {
      try {
        for (;;) yield micros(1000);
      } finally {
        closed = true;
      }
    }
    let n = 0;
    for await (const { message } of pool.map(source(), { concurrency: 32 })) {
      assert.equal(message.length, 4);
      if (++n === 3) break;
    }
    assert.equal(closed, true);
    const s = await everySettled(pool);
    assert.ok(s.failed > 0, 'tasks in flight were cancelled');
    assert.equal(s.queued, 0);
  } finally {
    await pool.close();
  }
});

test('a failed task ends map with its error and index, and closes the source', async () => {
  const pool = new Pool({ kernel: 'gunzip' });
  try {
    const good = zlib.gzipSync(Buffer.from('ok'));
    let closed = false;
    function* source() {
      try {
        for (let i = 0; i < 100; i++) yield i === 42 ? Buffer.from('junk') : good;
      } finally {
        closed = true;
      }
    }
    const seen = [];
    const iterator = pool.map(source(), { concurrency: 8 });
    await assert.rejects(
      (async () => {
        for await (const { result } of iterator) seen.push(result.toString());
      })(),
      (err) => err.index === 42 && /^Z_/.test(err.code),
    );
    assert.ok(seen.length <= 42);
    assert.ok(seen.every((s) => s === 'ok'));
    assert.equal(closed, true);
    assert.deepEqual(await iterator.next(), { value: undefined, done: true });
    await everySettled(pool);
  } finally {
    await pool.close();
  }
});

test('map reports a bad message, a throwing source and a bad iterable', async () => {
  const pool = new Pool();
  try {
    await assert.rejects(
      async () => {
        await drain(pool.map([Buffer.from('a'), 'not binary']));
      },
      { code: 'ERR_INVALID_ARG_TYPE', message: /"iterable\[1\]" argument/ },
    );
    const boom = new Error('source failed');
    await assert.rejects(
      async () => {
        await drain(
          pool.map(
            (function* () {
              yield Buffer.from('a');
              throw boom;
            })(),
          ),
        );
      },
      (err) => err === boom,
    );
    assert.throws(() => pool.map(42), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => pool.map('abc'), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => pool.map([], { concurrency: 0 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.map([], { concurrency: 1.5 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.map([], { concurency: 4 }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /concurrency/,
    });
    assert.throws(() => pool.map([], { signal: AbortSignal.abort() }), { name: 'AbortError' });
    await everySettled(pool);
  } finally {
    await pool.close();
  }
});

test("map's signal ends the iteration with an AbortError", async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  try {
    const ac = new AbortController();
    // A minute each: none ends by itself while the test runs.
    const iterator = pool.map(
      Array.from({ length: 100 }, () => micros(60_000_000)),
      { signal: ac.signal, concurrency: 4 },
    );
    const first = iterator.next();
    await waitFor(() => pool.stats().busyThreads === 1, {
      what: 'the thread to start the first task',
      state: poolState(pool),
    });
    ac.abort();
    await assert.rejects(first, { name: 'AbortError' });
    assert.deepEqual(await iterator.next(), { value: undefined, done: true });
    const s = await everySettled(pool);
    assert.equal(s.completed, 0);
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  } finally {
    await pool.close();
  }
});

test('map over an empty source is done at once; next() called twice gets two results', async () => {
  const pool = new Pool();
  try {
    assert.deepEqual(await pool.map([]).next(), { value: undefined, done: true });
    const it = pool.map([Buffer.from('a'), Buffer.from('b')]);
    const [a, b, c] = await Promise.all([it.next(), it.next(), it.next()]);
    assert.deepEqual(a.value.result, sha256(Buffer.from('a')));
    assert.deepEqual(b.value.result, sha256(Buffer.from('b')));
    assert.equal(c.done, true);
  } finally {
    await pool.close();
  }
});

test('a large batch is queued a chunk per turn of the event loop, and counted pending at once', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const hold = await holdThread(pool);
  const batch = pool.postMany(Array.from({ length: 5000 }, () => micros(1)));
  const at = pool.stats();
  assert.equal(at.queued, 1024, 'one chunk at once');
  assert.equal(at.pending, 5001, 'the rest counts as pending');
  let turns = 0;
  while (pool.stats().queued < 5000) {
    assert.ok(turns < 10, `${pool.stats().queued} queued after ${turns} turns`);
    await new Promise((r) => setImmediate(r));
    turns++;
  }
  assert.ok(turns >= 3, `${turns} turns`);
  // close() lets the accepted batch finish.
  const closed = pool.close();
  hold.release();
  assert.equal((await batch).length, 5000);
  assert.equal((await hold.settled).reason.name, 'AbortError');
  await closed;
  assert.equal(pool.stats().completed, 5000);
});

test('destroy() while a batch is being fed rejects the batch and counts every task', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const hold = await holdThread(pool);
  const batch = pool.postMany(Array.from({ length: 5000 }, () => micros(1)));
  const rejected = assert.rejects(batch, { code: 'ERR_TIDEPOOL_DESTROYED' });
  assert.ok(pool.stats().queued < 5000);
  await pool.destroy();
  await rejected;
  assert.equal((await hold.settled).reason.code, 'ERR_TIDEPOOL_DESTROYED');
  const s = pool.stats();
  assert.equal(s.pending, 0);
  assert.equal(s.failed, 5001);
});

test("stopping a map() that partly waits for room ('wait') leaves the pool working", async () => {
  const pool = new Pool({
    kernel: 'sleep',
    minThreads: 0,
    maxThreads: 1,
    spawnDelayMs: 50,
    maxQueue: 2,
    queueFull: 'wait',
  });
  const iterator = pool.map(
    Array.from({ length: 10 }, () => micros(1)),
    { concurrency: 8 },
  );
  const first = iterator.next(); // 2 tasks queued, 6 wait for room
  await iterator.return();
  assert.deepEqual(await first, { value: undefined, done: true });
  // A stale entry in the wait queue would hold these forever.
  await pool.post(micros(1));
  await pool.close();
  assert.equal(pool.stats().pending, 0);
});

test('close() during map(): what is queued finishes and is yielded, then ERR_TIDEPOOL_CLOSED', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 2 });
  let n = 0;
  let closing;
  await assert.rejects(
    async () => {
      for await (const { message } of pool.map(
        (function* () {
          for (let i = 0; i < 500; i++) yield micros(500);
        })(),
        { concurrency: 8 },
      )) {
        assert.equal(message.length, 4);
        if (++n === 20) closing = pool.close();
      }
    },
    { code: 'ERR_TIDEPOOL_CLOSED' },
  );
  await closing;
  const s = pool.stats();
  assert.ok(n >= 20 && n <= 28, `${n} yielded`);
  assert.equal(s.completed, n, 'every queued task ran and was yielded');
  assert.equal(s.failed, 0);
  assert.equal(s.pending, 0);
});

test('map(): next() called from inside a pull gets its own message, and nothing is lost or paired wrong', async () => {
  const pool = new Pool();
  try {
    const messages = Array.from({ length: 40 }, (_, i) => Buffer.from(`m${i}`));
    let iterator;
    let inner;
    let i = 0;
    const source = {
      [Symbol.iterator]() {
        return this;
      },
      next() {
        if (i === 1 && inner === undefined) inner = iterator.next(); // user code re-entering the pull
        return i < messages.length
          ? { value: messages[i++], done: false }
          : { value: undefined, done: true };
      },
    };
    iterator = pool.map(source, { concurrency: 16 });
    const seen = [];
    for (;;) {
      const step = await iterator.next();
      if (step.done) break;
      assert.deepEqual(
        step.value.result,
        sha256(step.value.message),
        'each result with its own message',
      );
      seen.push(step.value.message.toString());
    }
    const nested = await inner;
    assert.deepEqual(nested.value.result, sha256(nested.value.message));
    seen.push(nested.value.message.toString());
    assert.deepEqual(seen.sort(), messages.map(String).sort());
  } finally {
    await pool.close();
  }
});

test("map(): a source whose result's done or value getter throws ends the iteration with that error", async () => {
  const pool = new Pool();
  try {
    for (const key of ['done', 'value']) {
      const boom = new Error(`${key} getter`);
      let k = 0;
      const source = {
        [Symbol.iterator]() {
          return this;
        },
        next() {
          if (++k < 5) return { value: Buffer.from(`x${k}`), done: false };
          return {
            value: Buffer.from('y'),
            done: false,
            get [key]() {
              throw boom;
            },
          };
        },
      };
      await assert.rejects(drain(pool.map(source)), (err) => err === boom);
      const async = {
        [Symbol.asyncIterator]() {
          return this;
        },
        async next() {
          return {
            get [key]() {
              throw boom;
            },
          };
        },
      };
      await assert.rejects(drain(pool.map(async)), (err) => err === boom);
    }
    assert.equal((await everySettled(pool)).pending, 0);
  } finally {
    await pool.close();
  }
});

test('an accessor on Array.prototype or Object.prototype changes nothing a batch delivers', () => {
  // In a process of its own: while the accessors are in place, they are
  // Node's own runner's too (Node 24's node:test reads array holes of its
  // own, and would take the getter's Buffer for a promise).
  const script = `
    const assert = require('node:assert/strict');
    const { Pool } = require('.');
    (async () => {
      const pool = new Pool({ kernel: 'echo' });
      const big = Buffer.alloc(4096, 7); // a large result: its own Buffer, handed over in an Array
      Object.defineProperty(Array.prototype, 0, {
        configurable: true,
        get() {
          return Buffer.from('evil');
        },
        set() {},
      });
      Object.defineProperty(Object.prototype, 'index', {
        configurable: true,
        set() {
          throw new Error('index setter ran');
        },
      });
      try {
        const [echoed] = await pool.postMany([big]);
        assert.deepEqual(echoed, big);
        let n = 0;
        for await (const { result } of pool.map([Buffer.from('a'), Buffer.from('b')], {
          concurrency: 2,
          kernel: 'sha256',
        })) {
          assert.equal(result.length, 32);
          n++;
        }
        assert.equal(n, 2);
        const failed = await pool.postMany([Buffer.from('x')], { kernel: 'panic' }).catch((e) => e);
        assert.equal(failed.code, 'ERR_TIDEPOOL_PANIC');
        assert.equal(Object.getOwnPropertyDescriptor(failed, 'index').value, 0);
      } finally {
        delete Array.prototype[0];
        delete Object.prototype.index;
        await pool.close();
      }
      console.log('held');
    })();
  `;
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'held');
});

test('map() with a large concurrency allocates its window as it fills', async () => {
  const pool = new Pool();
  try {
    const before = process.memoryUsage().heapUsed;
    const iterator = pool.map([Buffer.from('a')], { concurrency: 2 ** 20 });
    const { value } = await iterator.next();
    assert.deepEqual(value.result, sha256(Buffer.from('a')));
    // An Array of 2^20 places takes 8 MiB of the heap; the window starts at 64.
    assert.ok(
      process.memoryUsage().heapUsed - before < 8 * 2 ** 20,
      'no window of 2^20 places up front',
    );
    assert.throws(() => pool.map([], { concurrency: 2 ** 20 + 1 }), { code: 'ERR_OUT_OF_RANGE' });
  } finally {
    await pool.close();
  }
});

/** `promise`, or a rejection once `ms` pass first (a bounded wait, never a hang). */
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

test("breaking out of map() while the source's next() waits returns at once; the source closes when it settles", async () => {
  const pool = new Pool();
  try {
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    let finallyRan = false;
    // A tailing cursor: after its first message it waits for data.
    async function* tailing() {
      try {
        yield Buffer.from('first');
        await gate;
        yield Buffer.from('later');
      } finally {
        finallyRan = true;
      }
    }
    const loop = (async () => {
      for await (const { message } of pool.map(tailing())) {
        assert.equal(message.toString(), 'first');
        break;
      }
    })();
    // The map read ahead: the source's next() is pending, and nothing resolves it here.
    await within(loop, 5000, 'the break');
    assert.equal(finallyRan, false, 'the source still waits in its next()');
    release();
    for (let turns = 0; !finallyRan && turns < 100; turns++)
      await new Promise((resolve) => setImmediate(resolve));
    assert.equal(finallyRan, true, "the source's finally ran once its next() settled");
    assert.equal((await everySettled(pool)).queued, 0);
  } finally {
    await pool.close();
  }
});

test('map() with a huge concurrency pulls a sync source a slice per turn of the event loop', async () => {
  const pool = new Pool();
  try {
    const total = 50_000;
    let pulled = 0;
    function* source() {
      for (let i = 0; i < total; i++) {
        pulled++;
        yield Buffer.from(`m${i}`);
      }
    }
    // Queued before the first pull: it runs as soon as the event loop gets control back.
    let pulledBeforeTheLoopRan;
    setImmediate(() => (pulledBeforeTheLoopRan = pulled));
    let i = 0;
    for await (const { result, message } of pool.map(source(), { concurrency: 2 ** 20 })) {
      assert.equal(message.toString(), `m${i}`);
      if (i % 4999 === 0) assert.deepEqual(result, sha256(message));
      i++;
    }
    assert.equal(i, total);
    assert.ok(pulledBeforeTheLoopRan > 0, 'the first pull came before');
    assert.ok(
      pulledBeforeTheLoopRan <= 4096,
      `${pulledBeforeTheLoopRan} messages pulled before the event loop ran`,
    );
  } finally {
    await pool.close();
  }
});
