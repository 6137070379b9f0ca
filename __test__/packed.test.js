'use strict';
// postMany(messages, { packed: true }): the results in one Buffer, several
// tiny messages per native task. node:crypto and node:zlib are the oracle
// for every byte; the batch contract (order, a failure names its message,
// signals, limits, every task settled once) is postMany()'s.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { Pool, micros } = require('..');
const { waitFor, poolState, holdThread, everySettled } = require('./wait');

const digest = (kernel, b) => crypto.createHash(kernel).update(b).digest();

function inputs(n, size = 64) {
  return Array.from({ length: n }, (_, i) => crypto.randomBytes(size + (i % 5)));
}

test('packed: one Buffer of every digest in message order, for every batch size around a task', async () => {
  const pool = new Pool({ maxThreads: 2 });
  try {
    // Counts around the messages a task takes (at most 64) and a chunk (1024).
    for (const count of [1, 2, 7, 8, 9, 63, 64, 65, 127, 1023, 1024, 1025, 5000]) {
      const messages = inputs(count, count % 3 === 0 ? 1000 : 64);
      const packed = await pool.postMany(messages, { packed: true });
      assert.ok(Buffer.isBuffer(packed), `${count}: a Buffer`);
      const want = Buffer.concat(messages.map((m) => digest('sha256', m)));
      assert.deepEqual(packed, want, `${count} messages`);
    }
    const s = await everySettled(pool);
    assert.equal(s.failed, 0);
    assert.equal(s.completed, 1 + 2 + 7 + 8 + 9 + 63 + 64 + 65 + 127 + 1023 + 1024 + 1025 + 5000);
  } finally {
    await pool.close();
  }
});

test('packed: select, kernels and params apply per message; the encoding does not', async () => {
  const pool = new Pool({ encoding: 'hex', select: (m) => m.payload });
  try {
    const payloads = inputs(700);
    const messages = payloads.map((payload, id) => ({ id, payload }));
    for (const kernel of ['sha512', 'sha1', 'md5']) {
      const packed = await pool.postMany(messages, { kernel, packed: true });
      assert.deepEqual(packed, Buffer.concat(payloads.map((p) => digest(kernel, p))), kernel);
    }
    const hmac = await pool.postMany(messages, {
      kernel: 'hmac',
      params: { key: 'k', hash: 'sha1' },
      packed: true,
    });
    const want = payloads.map((p) => crypto.createHmac('sha1', 'k').update(p).digest());
    assert.deepEqual(hmac, Buffer.concat(want));
    // Without `packed`, the same batch gives the pool's encoding.
    const hex = await pool.postMany(messages, { kernel: 'md5' });
    assert.equal(hex[3], digest('md5', payloads[3]).toString('hex'));
    // A message may be an Array of binaries, read as their concatenation.
    const parts = [[Buffer.from('ab'), Buffer.from('c')], Buffer.from('abc')];
    const two = await pool.postMany(
      parts.map((payload) => ({ payload })),
      { kernel: 'sha256', packed: true },
    );
    assert.deepEqual(two, Buffer.concat([digest('sha256', 'abc'), digest('sha256', 'abc')]));
  } finally {
    await pool.close();
  }
});

test('packed: an empty batch resolves with an empty Buffer; results of no bytes pack to one', async () => {
  const pool = new Pool();
  try {
    const empty = await pool.postMany([], { packed: true });
    assert.ok(Buffer.isBuffer(empty));
    assert.equal(empty.length, 0);
    const sleeps = await pool.postMany(
      Array.from({ length: 100 }, () => micros(1)),
      { kernel: 'sleep', packed: true },
    );
    assert.ok(Buffer.isBuffer(sleeps));
    assert.equal(sleeps.length, 0);
    assert.deepEqual(await pool.postMany([], { packed: false }), []);
  } finally {
    await pool.close();
  }
});

test('packed: results of another length reject with ERR_TIDEPOOL_PACKED_LENGTH naming the message', async () => {
  // One thread: the tasks finish in order, so which message differs first
  // is known. (A codec's messages run one to a task: the lengths meet in
  // JavaScript; the native check of a task of several is core's tests'.)
  const pool = new Pool({ kernel: 'gzip', maxThreads: 1 });
  try {
    const same = Buffer.alloc(100);
    // Message 500's output is longer than the others'.
    const inside = Array.from({ length: 1000 }, (_, i) =>
      i === 500 ? crypto.randomBytes(100) : same,
    );
    // The lengths the pool's gzip gives (a whole body runs in libdeflate,
    // whose output is not zlib's byte for byte), from another pool so
    // that this one's counts are the batches' alone.
    const lengths = new Pool({ kernel: 'gzip', maxThreads: 1 });
    let differing, common;
    try {
      differing = (await lengths.post(Buffer.from(inside[500]))).result.length;
      common = (await lengths.post(Buffer.from(same))).result.length;
    } finally {
      await lengths.close();
    }
    assert.notEqual(differing, common);
    await assert.rejects(pool.postMany(inside, { packed: true }), (err) => {
      assert.ok(err instanceof RangeError);
      assert.equal(err.code, 'ERR_TIDEPOOL_PACKED_LENGTH');
      assert.equal(err.index, 500);
      assert.equal(
        err.message,
        `Packed results must have one length: this message's is ${differing} bytes, another's ${common}`,
      );
      return true;
    });
    // From message 512 on, every result has the other length.
    const between = Array.from({ length: 1000 }, (_, i) =>
      i >= 512 ? Buffer.alloc(100, 1).fill(crypto.randomBytes(100)) : same,
    );
    await assert.rejects(pool.postMany(between, { packed: true }), (err) => {
      assert.equal(err.code, 'ERR_TIDEPOOL_PACKED_LENGTH');
      assert.equal(err.index, 512);
      return true;
    });
    const s = await everySettled(pool);
    assert.equal(s.completed + s.failed, 2000, 'every message settled once');
    assert.ok(s.failed >= 2, 'the messages whose results differ count as failed');
    // The pool goes on.
    assert.deepEqual(zlib.gunzipSync((await pool.post(same)).result), same);
  } finally {
    await pool.close();
  }
});

test('packed: a failed message rejects the batch with its own error and index', async () => {
  const pool = new Pool({ kernel: 'gunzip', maxThreads: 1 });
  try {
    const good = zlib.gzipSync(Buffer.from('hello'));
    for (const at of [0, 7, 63, 64, 1999]) {
      const messages = Array.from({ length: 2000 }, (_, i) =>
        i === at ? Buffer.from('not gzip at all') : good,
      );
      await assert.rejects(pool.postMany(messages, { packed: true }), (err) => {
        assert.equal(err.index, at);
        assert.match(err.code, /^Z_/);
        return true;
      });
    }
    const s = await everySettled(pool);
    assert.equal(s.completed + s.failed, 5 * 2000, 'every message settled once');
    assert.ok(s.failed >= 5);
    // maxOutputBytes limits each message's result, not the packed Buffer.
    await assert.rejects(
      pool.postMany(inputs(100), { kernel: 'sha256', maxOutputBytes: 16, packed: true }),
      { code: 'ERR_BUFFER_TOO_LARGE', index: 0 },
    );
    const fits = await pool.postMany(inputs(100), {
      kernel: 'sha256',
      maxOutputBytes: 32,
      packed: true,
    });
    assert.equal(fits.length, 3200);
  } finally {
    await pool.close();
  }
});

test('packed: timeoutMs limits each message', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  try {
    const fine = await pool.postMany(
      Array.from({ length: 8 }, () => micros(20_000)),
      { timeoutMs: 100, packed: true },
    );
    assert.equal(fine.length, 0);
    // Message 1 runs past its limit; the 5 s sleeps behind it never start.
    const messages = [
      micros(10_000),
      micros(5_000_000),
      ...Array.from({ length: 50 }, () => micros(5_000_000)),
    ];
    await assert.rejects(pool.postMany(messages, { timeoutMs: 200, packed: true }), {
      code: 'ERR_TIDEPOOL_TIMEOUT',
      index: 1,
    });
    const s = await everySettled(pool);
    assert.equal(s.completed + s.failed, 8 + 52);
  } finally {
    await pool.close();
  }
});

test('packed: a signal cancels the batch, running tasks included, and every message settles once', async () => {
  const pool = new Pool({ kernel: 'sleep', minThreads: 2, maxThreads: 2 });
  try {
    const ac = new AbortController();
    const reason = new Error('enough');
    // A minute each: none ends by itself while the test runs.
    const batch = pool.postMany(
      Array.from({ length: 300 }, () => micros(60_000_000)),
      { signal: ac.signal, packed: true },
    );
    await waitFor(() => pool.stats().busyThreads === 2, {
      what: 'both threads running a task of the batch',
      state: poolState(pool),
    });
    ac.abort(reason);
    await assert.rejects(batch, (err) => {
      assert.equal(err.name, 'AbortError');
      assert.equal(err.cause, reason);
      assert.equal(err.index, undefined);
      assert.equal(pool.stats().pending, 0, 'no thread reads the messages once it rejects');
      return true;
    });
    const s = await everySettled(pool);
    assert.equal(s.failed, 300);
    assert.throws(() => pool.postMany([micros(1)], { signal: ac.signal, packed: true }), {
      name: 'AbortError',
    });
  } finally {
    await pool.close();
  }
});

test('packed: destroy() rejects a running batch; a closed pool rejects a new one', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const batch = pool.postMany(
    Array.from({ length: 3000 }, () => micros(2000)),
    { packed: true },
  );
  const rejected = assert.rejects(batch, { code: 'ERR_TIDEPOOL_DESTROYED' });
  await waitFor(() => pool.stats().busyThreads === 1, {
    what: 'the thread to start the batch',
    state: poolState(pool),
  });
  await pool.destroy();
  await rejected;
  await assert.rejects(pool.postMany([micros(1)], { packed: true }), {
    code: 'ERR_TIDEPOOL_CLOSED',
  });
  const s = pool.stats();
  assert.equal(s.pending, 0);
  assert.equal(s.completed + s.failed, 3001);
});

test("packed: a full queue waits ('wait'), or fails the batch where it stopped fitting", async () => {
  const waiting = new Pool({ maxThreads: 1, maxQueue: 4, queueFull: 'wait' });
  try {
    const messages = inputs(3000);
    const promise = waiting.postMany(messages, { packed: true });
    assert.equal(waiting.needsDrain, true);
    const after = waiting.post(Buffer.from('after'));
    assert.deepEqual(await promise, Buffer.concat(messages.map((m) => digest('sha256', m))));
    await after;
    assert.equal((await everySettled(waiting)).completed, 3001);
  } finally {
    await waiting.close();
  }
  const rejecting = new Pool({ maxThreads: 1, maxQueue: 2 });
  const hold = await holdThread(rejecting);
  try {
    // A sleep's messages run one to a task: two fit.
    const sleeps = Array.from({ length: 1000 }, () => micros(1));
    await assert.rejects(rejecting.postMany(sleeps, { kernel: 'sleep', packed: true }), {
      code: 'ERR_TIDEPOOL_QUEUE_FULL',
      index: 2,
    });
    // A hash's share tasks: two tasks of several fit, and the first
    // message of the third is named.
    await assert.rejects(rejecting.postMany(inputs(1000), { packed: true }), (err) => {
      assert.equal(err.code, 'ERR_TIDEPOOL_QUEUE_FULL');
      assert.ok(err.index > 2 && err.index <= 128, `index ${err.index}`);
      return true;
    });
    hold.release();
    const s = await everySettled(rejecting);
    assert.equal(s.completed + s.failed, 2001);
    assert.equal(s.queued, 0);
  } finally {
    hold.release();
    await rejecting.close();
  }
});

test('packed is an option of postMany() only, and a boolean', async () => {
  const pool = new Pool();
  try {
    for (const bad of [1, 'yes', null, {}]) {
      assert.throws(() => pool.postMany([Buffer.from('a')], { packed: bad }), {
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: /"options\.packed" property must be of type boolean/,
      });
    }
    assert.throws(() => pool.post(Buffer.from('a'), { packed: true }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /'packed' is an option of postMany\(\) and postRecords\(\), not of post\(\)/,
    });
    assert.throws(() => pool.map([Buffer.from('a')], { packed: true }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /'packed' is an option of postMany\(\) and postRecords\(\), not of map\(\)/,
    });
    // Only an own property is an option.
    const inherited = Object.create({ packed: true });
    assert.ok(Array.isArray(await pool.postMany([Buffer.from('a')], inherited)));
  } finally {
    await pool.close();
  }
});

test("a hash's and a compressor's small messages share native tasks; a decoder's run one to a task", async () => {
  const pool = new Pool({ maxThreads: 2, encoding: 'base64' });
  try {
    const messages = inputs(3000);
    const results = await pool.postMany(messages, { kernel: 'sha1' });
    messages.forEach((m, i) => assert.equal(results[i], digest('sha1', m).toString('base64')));
    let s = pool.stats();
    assert.ok(s.runTime.count < 3000 / 8, `${s.runTime.count} tasks ran 3000 messages`);
    // map() groups what it feeds at once: with many in flight, many.
    let n = 0;
    for await (const { result, message } of pool.map(messages, {
      kernel: 'md5',
      concurrency: 4096,
    })) {
      assert.equal(result, digest('md5', message).toString('base64'));
      n++;
    }
    assert.equal(n, 3000);
    s = pool.stats();
    assert.equal(s.completed, 6000);
    assert.ok(s.runTime.count < 6000 / 8, `${s.runTime.count} tasks ran 6000 messages`);
    // A compressor's results, of their own lengths, are split by the
    // lengths its shared tasks tell.
    let before = s.runTime.count;
    const gzipped = await pool.postMany(messages.slice(0, 500), { kernel: 'gzip' });
    gzipped.forEach((g, i) =>
      assert.deepEqual(zlib.gunzipSync(Buffer.from(g, 'base64')), messages[i]),
    );
    s = await everySettled(pool);
    assert.equal(s.completed, 6500);
    assert.ok(
      s.runTime.count - before < 500 / 8,
      `${s.runTime.count - before} tasks ran 500 gzips`,
    );
    // A decoder's output may be large: one a task.
    before = s.runTime.count;
    const members = gzipped.map((g) => Buffer.from(g, 'base64'));
    const gunzipped = await pool.postMany(members, { kernel: 'gunzip' });
    gunzipped.forEach((g, i) => assert.deepEqual(Buffer.from(g, 'base64'), messages[i]));
    s = await everySettled(pool);
    assert.equal(s.runTime.count - before, 500, 'one task per gunzip');
  } finally {
    await pool.close();
  }
});
