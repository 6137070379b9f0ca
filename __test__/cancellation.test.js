'use strict';
// AbortSignal and per-task deadlines: queued tasks leave the queue at once,
// running ones stop cooperatively and the thread stays in the pool.

const test = require('node:test');
const assert = require('node:assert/strict');
const { getEventListeners } = require('node:events');
const crypto = require('node:crypto');
const v8 = require('node:v8');
const { Pool, micros } = require('..');
const { waitFor, poolState, holdThread } = require('./wait');
const { runInChild } = require('./child');

const tick = () => new Promise((r) => setTimeout(r, 5));

function isAbortError(err, reason) {
  assert.equal(err.name, 'AbortError');
  assert.equal(err.code, 'ABORT_ERR');
  if (reason !== undefined) assert.equal(err.cause, reason);
  return true;
}

test('an already-aborted signal throws an AbortError synchronously', async () => {
  const pool = new Pool();
  try {
    const reason = new Error('changed my mind');
    assert.throws(
      () => pool.post(Buffer.from('x'), { signal: AbortSignal.abort(reason) }),
      (e) => isAbortError(e, reason),
    );
    assert.equal(pool.stats().pending, 0);
  } finally {
    await pool.close();
  }
});

test('aborting a queued task removes it and rejects it at once', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const hold = await holdThread(pool);
  try {
    let heldSettled = false;
    hold.settled.then(() => (heldSettled = true));
    const ac = new AbortController();
    const queued = pool.post(micros(1000), { signal: ac.signal });
    const other = pool.post(micros(1000));
    assert.equal(pool.stats().queued, 2);
    ac.abort('stop');
    await assert.rejects(queued, (e) => isAbortError(e, 'stop'));
    assert.equal(heldSettled, false, 'rejected before the running task finished');
    assert.equal(pool.stats().queued, 1);
    assert.equal(pool.stats().failed, 1);
    hold.release();
    await other;
    assert.equal(pool.stats().completed, 1);
  } finally {
    hold.release();
    await pool.close();
  }
});

test('aborting a running task stops it within a chunk; the thread stays', async () => {
  const pool = new Pool({ kernel: 'spin', minThreads: 1, maxThreads: 1 });
  try {
    const ac = new AbortController();
    const running = pool.post(micros(60_000_000), { signal: ac.signal });
    await waitFor(() => pool.stats().queued === 0 && pool.stats().busyThreads === 1, {
      what: 'the thread to take the task',
      state: poolState(pool),
    });
    const t = Date.now();
    ac.abort();
    await assert.rejects(running, (e) => isAbortError(e));
    // Not a speed check (a loaded machine may take its time to deliver):
    // it stopped instead of spinning its minute out.
    assert.ok(Date.now() - t < 30_000, `took ${Date.now() - t} ms`);
    assert.equal(pool.stats().threads, 1);
    assert.equal(pool.stats().spawned, 1, 'no thread was replaced');
    await pool.post(micros(1000));
  } finally {
    await pool.close();
  }
});

test('a 1 GiB hash works and an abort reaches it while it runs', async () => {
  const pool = new Pool({ kernel: 'sha256' });
  try {
    const big = Buffer.alloc(2 ** 30); // zero pages, mapped lazily
    const ac = new AbortController();
    // SHA-256: no CPU hashes 1 GiB before the test sees the task running
    // (CRC-32 at tens of GB/s might).
    const hashing = pool.post(big, { signal: ac.signal });
    await waitFor(() => pool.stats().queued === 0 && pool.stats().busyThreads === 1, {
      what: 'a thread to start the hash',
      state: poolState(pool),
    });
    ac.abort();
    // An AbortError, not the digest of its 1 GiB: the running kernel saw
    // the flag. How soon (it looks every 256 KiB) is a benchmark's
    // measure: bench/run.js, "abort: running 1 GiB crc32".
    await assert.rejects(hashing, (e) => isAbortError(e));
    // The thread goes on.
    const part = big.subarray(0, 64 << 20);
    const { result } = await pool.post(part);
    assert.equal(result.toString('hex'), crypto.createHash('sha256').update(part).digest('hex'));
  } finally {
    await pool.close();
  }
});

test('timeoutMs counts from the start of the run and rejects with ERR_TIDEPOOL_TIMEOUT', async () => {
  const pool = new Pool({ kernel: 'spin', maxThreads: 1 });
  let hold;
  try {
    const t = Date.now();
    await assert.rejects(pool.post(micros(60_000_000), { timeoutMs: 30 }), {
      code: 'ERR_TIDEPOOL_TIMEOUT',
    });
    // Not a speed check: it stopped instead of spinning its minute out.
    assert.ok(Date.now() - t < 30_000);
    // Queued behind a held thread for longer than its own 250 ms budget:
    // it still runs (1 µs: the budget leaves room for a descheduled thread).
    hold = await holdThread(pool);
    const queued = pool.post(micros(1), { timeoutMs: 250 });
    await waitFor(() => pool.stats().oldestQueuedMs > 250, {
      what: 'the task to wait past its timeoutMs',
      state: poolState(pool),
    });
    hold.release();
    await queued;
    assert.equal(pool.stats().threads, 1);
  } finally {
    hold?.release();
    await pool.close();
  }
});

test('AbortSignal.timeout() gives a deadline counted from the post', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const hold = await holdThread(pool); // the task never starts
  try {
    const late = pool.post(micros(1000), { signal: AbortSignal.timeout(20) });
    await assert.rejects(late, (e) => isAbortError(e));
  } finally {
    hold.release();
    await pool.close();
  }
});

test("a post waiting for room (queueFull 'wait') can be aborted", async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1, maxQueue: 1, queueFull: 'wait' });
  const hold = await holdThread(pool);
  try {
    const queued = pool.post(micros(1000));
    const ac = new AbortController();
    const waiting = pool.post(micros(1000), { signal: ac.signal });
    const after = pool.post(micros(1000));
    ac.abort();
    await assert.rejects(waiting, (e) => isAbortError(e));
    hold.release();
    await Promise.all([queued, after]);
    assert.equal(pool.stats().completed, 2);
  } finally {
    hold.release();
    await pool.close();
  }
});

test('abort listeners are removed when tasks settle (no leak on long-lived signals)', async () => {
  const pool = new Pool();
  try {
    const ac = new AbortController();
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        pool.post(Buffer.from([i & 255]), { signal: ac.signal }),
      ),
    );
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    ac.abort(); // nothing left to cancel
    await pool.post(Buffer.from('still fine'));
  } finally {
    await pool.close();
  }
});

test('bad signal and timeoutMs arguments throw', async () => {
  const pool = new Pool();
  try {
    assert.throws(() => pool.post(Buffer.alloc(1), { signal: {} }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
    assert.throws(() => pool.post(Buffer.alloc(1), { timeoutMs: '5' }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
    for (const timeoutMs of [0, -1, NaN, 2 ** 32]) {
      assert.throws(() => pool.post(Buffer.alloc(1), { timeoutMs }), { code: 'ERR_OUT_OF_RANGE' });
    }
    await pool.post(Buffer.alloc(1), { timeoutMs: Infinity });
  } finally {
    await pool.close();
  }
});

const settle = (p) =>
  p.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason) => ({ status: 'rejected', reason }),
  );

test('destroy() and close() racing with posts and aborts leave no promise unsettled', async () => {
  for (const end of ['destroy', 'close']) {
    const pool = new Pool({ kernel: 'sleep', maxThreads: 2, maxQueue: 50, queueFull: 'wait' });
    const controllers = [];
    const outcomes = [];
    for (let i = 0; i < 200; i++) {
      const ac = new AbortController();
      controllers.push(ac);
      // Handlers attached at once: rejections may come before the end.
      outcomes.push(settle(pool.post(micros(500 + (i % 7) * 300), { signal: ac.signal })));
      if (i % 13 === 0) controllers[(i * 7) % controllers.length].abort();
      if (i === 120) {
        // End the pool in the middle of the stream of posts and aborts.
        outcomes.push(settle(pool[end]()));
      }
      if (i % 17 === 0) await new Promise((r) => setImmediate(r));
    }
    for (const ac of controllers.slice(150)) ac.abort();
    const settled = await Promise.all(outcomes);
    assert.equal(settled.length, 201);
    for (const o of settled) {
      if (o.status === 'rejected') {
        assert.ok(
          ['ABORT_ERR', 'ERR_TIDEPOOL_CLOSED', 'ERR_TIDEPOOL_DESTROYED'].includes(o.reason.code),
          o.reason.code,
        );
      }
    }
    assert.equal(pool.stats().pending, 0, end);
    assert.equal(pool.stats().threads, 0, end);
  }
});

test('one abort cancels every queued task of its signal in one pass, all with the same AbortError', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const hold = await holdThread(pool);
  try {
    const ac = new AbortController();
    const n = 20_000;
    const tasks = Array.from({ length: n }, () =>
      settle(pool.post(micros(1), { signal: ac.signal })),
    );
    const other = pool.post(micros(1)); // no signal: untouched
    assert.equal(pool.stats().queued, n + 1);
    ac.abort('enough');
    assert.equal(pool.stats().queued, 1, 'removed from the queue at once');
    assert.equal(pool.stats().pending, 2);
    const outcomes = await Promise.all(tasks);
    const first = outcomes[0].reason;
    assert.ok(isAbortError(first, 'enough'));
    for (const o of outcomes) assert.equal(o.reason, first, 'one error object per abort');
    hold.release();
    await Promise.all([hold.settled, other]);
    assert.equal(pool.stats().failed, n + 1);
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  } finally {
    hold.release();
    await pool.close();
  }
});

test("posts waiting for room (queueFull 'wait') with one signal share one abort listener", async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1, maxQueue: 1, queueFull: 'wait' });
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  const hold = await holdThread(pool);
  try {
    const ac = new AbortController();
    const posts = Array.from({ length: 500 }, () =>
      settle(pool.post(micros(1), { signal: ac.signal })),
    );
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
    hold.release();
    const outcomes = await Promise.all(posts);
    assert.ok(outcomes.every((o) => o.status === 'fulfilled'));
    await tick();
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
      [],
    );
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  } finally {
    hold.release();
    process.off('warning', onWarning);
    await pool.close();
  }
});

test("aborting a queued task lets the next waiting post (queueFull 'wait') in at once, and 'drain' follows", async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1, maxQueue: 2, queueFull: 'wait' });
  const hold = await holdThread(pool);
  try {
    const ac = new AbortController();
    const queued = [
      settle(pool.post(micros(1000), { signal: ac.signal })),
      settle(pool.post(micros(1000), { signal: ac.signal })),
    ];
    const waiting = pool.post(micros(1000));
    assert.equal(pool.needsDrain, true);
    let drained = false;
    pool.once('drain', () => (drained = true));
    ac.abort();
    assert.equal(pool.stats().queued, 1, 'the waiting post took a freed place');
    assert.equal(drained, true, 'and the queue has room again');
    assert.equal(pool.needsDrain, false);
    for (const o of await Promise.all(queued)) assert.ok(isAbortError(o.reason));
    hold.release();
    await waiting;
  } finally {
    hold.release();
    await pool.close();
  }
});

test('a signal whose `constructor` the caller changed cannot break a batch or lose a task', async () => {
  const pool = new Pool();
  try {
    const ac = new AbortController();
    const withSignal = pool.post(Buffer.from('a'), { signal: ac.signal });
    const without = pool.post(Buffer.from('b'));
    ac.signal.constructor = null; // Node's EventTarget methods now refuse this signal
    await Promise.all([withSignal, without]);
    assert.equal(pool.stats().pending, 0);
    assert.equal(pool.stats().completed, 2);
  } finally {
    await pool.close();
  }
});

test('a post made from inside the signal bookkeeping (a `constructor` getter) is cancelled by the same abort', async () => {
  const pool = new Pool({ kernel: 'sleep', minThreads: 2, maxThreads: 2 });
  try {
    const ac = new AbortController();
    let inner;
    let armed = true;
    Object.defineProperty(ac.signal, 'constructor', {
      get() {
        if (armed) {
          armed = false;
          inner = pool.post(micros(3_000_000), { signal: ac.signal });
        }
        return AbortSignal;
      },
    });
    const outer = pool.post(micros(3_000_000), { signal: ac.signal });
    assert.ok(inner instanceof Promise, 'the getter ran inside post()');
    const outcomes = Promise.all([settle(outer), settle(inner)]);
    ac.abort();
    for (const o of await outcomes) assert.ok(isAbortError(o.reason));
  } finally {
    await pool.close();
  }
});

test('something that only looks like an AbortSignal is an ERR_INVALID_ARG_TYPE', async () => {
  const pool = new Pool();
  try {
    for (const signal of [
      Object.create(AbortSignal.prototype),
      { aborted: false, addEventListener() {} },
      null,
      'abort',
    ]) {
      assert.throws(() => pool.post(Buffer.alloc(1), { signal }), {
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
      });
    }
    // An own `aborted` or `reason` on a real signal is not believed.
    const ac = new AbortController();
    Object.defineProperty(ac.signal, 'aborted', { value: true });
    await pool.post(Buffer.alloc(1), { signal: ac.signal });
    assert.equal(pool.stats().pending, 0);
  } finally {
    await pool.close();
  }
});

test('a tampered signal: posts it cannot listen for throw and queue nothing; later posts are still cancelled', async () => {
  const pool = new Pool({ minThreads: 1, maxThreads: 1 });
  try {
    const ac = new AbortController();
    let usable = true;
    // Node's EventTarget methods refuse a signal whose `constructor` is null.
    Object.defineProperty(ac.signal, 'constructor', {
      configurable: true,
      get: () => (usable ? AbortSignal : null),
    });
    // A first post whose listener Node then refuses to remove: it stays on.
    const first = pool.post(Buffer.from('a'), { signal: ac.signal });
    usable = false;
    await first;
    // While the listener cannot be added, a post with the signal throws.
    assert.throws(() => pool.post(Buffer.from('b'), { signal: ac.signal }), { name: 'TypeError' });
    assert.equal(pool.stats().pending, 0, 'nothing was queued');
    // Once it can, posts are cancelled by the abort again.
    usable = true;
    const blocker = pool.post(micros(200_000), { kernel: 'sleep' });
    const queued = settle(pool.post(Buffer.from('c'), { signal: ac.signal }));
    ac.abort();
    assert.ok(isAbortError((await queued).reason));
    await blocker;
  } finally {
    await pool.close();
  }
});

test('aborting a signal shared by many queued postMany() batches cancels them all in one native pass', async () => {
  // Counts the native calls that pass over the queue to cancel tasks.
  const { binding } = require('../lib/addon/binding');
  const proto = binding.NativePool.prototype;
  const originals = {};
  let passes = 0;
  for (const name of ['cancelFlagged', 'cancelAllFlagged']) {
    if (typeof proto[name] !== 'function') continue;
    originals[name] = proto[name];
    proto[name] = function counted(...args) {
      passes++;
      return originals[name].apply(this, args);
    };
  }
  const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 1 });
  try {
    const stopBlocker = new AbortController();
    const blocker = settle(pool.post(micros(10_000_000), { signal: stopBlocker.signal }));
    const deadline = Date.now() + 5000;
    while (pool.stats().busyThreads === 0) {
      assert.ok(Date.now() < deadline, 'the blocking task started');
      await tick();
    }
    const ac = new AbortController();
    const n = 20_000;
    const batches = Array.from({ length: n }, () =>
      settle(pool.postMany([micros(1)], { signal: ac.signal })),
    );
    assert.equal(pool.stats().queued, n);
    passes = 0;
    ac.abort('enough');
    assert.equal(passes, 1, 'one pass over the queue for every batch of the signal');
    assert.equal(pool.stats().queued, 0, 'removed from the queue at once');
    const outcomes = await Promise.all(batches);
    const first = outcomes[0].reason;
    assert.ok(isAbortError(first, 'enough'));
    for (const o of outcomes)
      assert.equal(o.reason, first, 'every batch rejects with the one AbortError');
    stopBlocker.abort();
    await blocker;
    assert.equal(pool.stats().pending, 0);
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  } finally {
    Object.assign(proto, originals);
    await pool.close();
  }
});

test('a replaced Map.prototype.get or Set iterator changes nothing a signal stops', () => {
  // In a process of its own: the test runner uses Maps and Sets too. A
  // dependency loaded after tidepool answers every lookup keyed by an
  // AbortSignal with the first value stored under one, and makes every
  // Set look empty to for...of: a post of signal B must still stop with
  // B, and A's post keep running, as a post with no hijack would.
  const script = `
    const assert = require('node:assert/strict');
    const { Pool, micros } = require('.');
    (async () => {
      const pool = new Pool({ kernel: 'sleep', minThreads: 2, maxThreads: 2 });
      const { get, set } = Map.prototype;
      const setIterator = Object.getPrototypeOf(new Set().values());
      const next = setIterator.next;
      let first;
      let asked = 0;
      Map.prototype.set = function (key, value) {
        if (key instanceof AbortSignal) first ??= value;
        return set.call(this, key, value);
      };
      Map.prototype.get = function (key) {
        if (key instanceof AbortSignal && first !== undefined) {
          asked++;
          return first;
        }
        return get.call(this, key);
      };
      setIterator.next = () => ({ done: true, value: undefined });
      const a = new AbortController();
      const b = new AbortController();
      try {
        const ofA = pool.post(micros(60_000_000), { signal: a.signal });
        const ofB = pool.post(micros(60_000_000), { signal: b.signal });
        b.abort();
        await assert.rejects(ofB, { name: 'AbortError' });
        a.abort();
        await assert.rejects(ofA, { name: 'AbortError' });
      } finally {
        Map.prototype.get = get;
        Map.prototype.set = set;
        setIterator.next = next;
      }
      await pool.close();
      console.log('asked', asked);
    })();
  `;
  assert.equal(runInChild(script), 'asked 0');
});

test('a global Map or Set replaced after load changes nothing a signal does', () => {
  // The engine's Watches are made as the pool meets signals, after load:
  // with the collections of load time, whatever the globals are by then.
  const script = `
    const assert = require('node:assert/strict');
    const { Pool, micros } = require('.');
    (async () => {
      const pool = new Pool({ kernel: 'sleep' });
      const { Map: NativeMap, Set: NativeSet } = globalThis;
      // Shims of the kind a test's fakes or an old polyfill install.
      globalThis.Set = class Set {
        #set = new NativeSet();
        add(v) { this.#set.add(v); return this; }
        has(v) { return this.#set.has(v); }
        delete(v) { return this.#set.delete(v); }
        clear() { this.#set.clear(); }
        get size() { return this.#set.size; }
        values() { return this.#set.values(); }
        [Symbol.iterator]() { return this.#set.values(); }
      };
      globalThis.Map = class Map {
        #map = new NativeMap();
        get(k) { return this.#map.get(k); }
        set(k, v) { this.#map.set(k, v); return this; }
        has(k) { return this.#map.has(k); }
        delete(k) { return this.#map.delete(k); }
        get size() { return this.#map.size; }
      };
      try {
        const done = new AbortController();
        const posts = [0, 1, 2].map(() => pool.post(micros(10), { signal: done.signal }));
        posts.push(pool.post(micros(10)));
        const outcomes = await Promise.allSettled(posts);
        assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
        const stopped = new AbortController();
        const long = pool.post(micros(60_000_000), { signal: stopped.signal });
        stopped.abort();
        await assert.rejects(long, { name: 'AbortError' });
        assert.equal(pool.stats().pending, 0);
      } finally {
        globalThis.Map = NativeMap;
        globalThis.Set = NativeSet;
      }
      await pool.close();
      console.log('held');
    })();
  `;
  assert.equal(runInChild(script), 'held');
});

test('a settlement that destroys the pool while an abort settles its waiting posts: each counted once', async () => {
  const pool = new Pool({
    kernel: 'sleep',
    minThreads: 1,
    maxThreads: 1,
    maxQueue: 1,
    queueFull: 'wait',
  });
  const held = await holdThread(pool);
  const filler = pool.post(micros(1000)).catch((err) => err.code);
  const controller = new AbortController();
  const first = pool.post(micros(1000), { signal: controller.signal });
  const second = pool.post(micros(1000), { signal: controller.signal });
  await waitFor(() => pool.stats().pending === 4, {
    what: 'two posts waiting for room behind the held thread and the queued post',
    state: poolState(pool),
  });
  // User code that runs inside the rejection of the first waiting post
  // (a promise hook), while the abort walks the signal's waiting posts:
  // destroy() settles the second one before the walk reaches it.
  let destroyed = false;
  const stop = v8.promiseHooks.onSettled((promise) => {
    if (promise !== first || destroyed) return;
    destroyed = true;
    pool.destroy();
  });
  try {
    controller.abort();
  } finally {
    stop();
  }
  assert.equal(destroyed, true);
  await assert.rejects(first, { name: 'AbortError' });
  await assert.rejects(second, { code: 'ERR_TIDEPOOL_DESTROYED' });
  assert.equal(await filler, 'ERR_TIDEPOOL_DESTROYED');
  await held.settled;
  const stats = pool.stats();
  assert.equal(stats.pending, 0);
  assert.equal(stats.failed, 4);
});
