'use strict';
// map(): messages pulled from an iterable or async iterable, results in
// input order with a bounded window, the source closed when the iteration
// ends early, and every task settled once.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { getEventListeners } = require('node:events');
const { Pool, micros } = require('..');
const { waitFor, poolState, everySettled, holdThread, settle } = require('./wait');

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

test("a map() chunk refused after it waited for room, whose source's return() destroys the pool: the pool's line was emptied, nothing throws", async () => {
  const pool = new Pool({
    kernel: 'sleep',
    minThreads: 1,
    maxThreads: 1,
    maxQueue: 1,
    queueFull: 'wait',
  });
  const held = await holdThread(pool);
  const queued = settle(pool.post(micros(1000)));
  const message = Buffer.from(new ArrayBuffer(64));
  message.writeUInt32LE(1000, 0);
  let returned = 0;
  const source = {
    [Symbol.iterator]() {
      return this;
    },
    next: () => ({ value: message, done: false }),
    return() {
      returned++;
      pool.destroy();
      return { done: true };
    },
  };
  const first = settle(pool.map(source)[Symbol.asyncIterator]().next());
  await waitFor(() => pool.stats().pending > 2, {
    what: "map()'s chunk to wait for room behind the held thread and the queued post",
    state: poolState(pool),
  });
  // Detached while it waits: refused when room comes, which ends the map.
  structuredClone(message.buffer, { transfer: [message.buffer] });
  held.release();
  const outcome = await first;
  assert.equal(outcome.status, 'rejected');
  assert.equal(returned, 1);
  // The queued post ran, or destroy() rejected it: either way, once.
  await queued;
  await held.settled;
  assert.equal(pool.stats().pending, 0);
});
