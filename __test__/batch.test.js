'use strict';
// postMany(): many messages in one call, results in input order, a batch
// that fails (or is aborted) as one, and every task settled once
// (map() is map.test.js's).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { getEventListeners } = require('node:events');
const { runInChild } = require('./child');
const { Pool, micros } = require('..');
const { waitFor, poolState, holdThread, everySettled } = require('./wait');

const sha256 = (b) => crypto.createHash('sha256').update(b).digest();

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
  assert.equal(runInChild(script), 'held');
});
