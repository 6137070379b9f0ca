'use strict';
// Results past the inline size: each is a Buffer of its own (the kernel's
// output, not a view of the shared slab), in the right task's promise even
// when mixed with small results in one batch, bounded by maxOutputBytes,
// and freed when collected.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const { constants } = require('node:buffer');
const { Pool, defaults } = require('..');

const bytes = (n, seed = 1) => {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
};

test('echo: results of 65 B to 16 MiB come back whole, each a Buffer over memory of its own', async () => {
  const pool = new Pool({ kernel: 'echo' });
  try {
    for (const n of [65, 1000, 64 * 1024, 1 << 20, (16 << 20) + 3]) {
      const input = bytes(n, n);
      const { result, message } = await pool.post(input);
      assert.equal(message, input);
      assert.ok(Buffer.isBuffer(result));
      assert.ok(result.equals(input), `${n} bytes`);
      assert.notEqual(result.buffer, input.buffer, 'not the input');
      assert.equal(result.byteOffset, 0);
      assert.equal(result.buffer.byteLength, n, 'not a view into a shared slab');
    }
    const parts = [bytes(100, 1), bytes(0), bytes(300, 2)];
    assert.ok((await pool.post(parts)).result.equals(Buffer.concat(parts)), 'an array is joined');
    assert.equal(
      (await pool.post(bytes(64))).result.length,
      64,
      'a result of 64 bytes travels inline',
    );
  } finally {
    await pool.close();
  }
});

test('small and large results mixed in one batch each reach their own task', async () => {
  const pool = new Pool({ kernel: 'echo', maxThreads: 2 });
  try {
    const inputs = Array.from({ length: 600 }, (_, i) => bytes(i % 3 === 0 ? 20 + i : 5, i));
    const kernels = inputs.map((_, i) => (i % 2 === 0 ? 'echo' : 'sha256'));
    const settled = await Promise.all(
      inputs.map((input, i) => pool.post(input, { kernel: kernels[i] })),
    );
    settled.forEach(({ result, message }, i) => {
      assert.equal(message, inputs[i]);
      const want =
        kernels[i] === 'echo' ? inputs[i] : crypto.createHash('sha256').update(inputs[i]).digest();
      assert.ok(result.equals(want), `task ${i} (${kernels[i]}, ${inputs[i].length} bytes)`);
    });
  } finally {
    await pool.close();
  }
});

test("a large result takes the pool's encoding", async () => {
  for (const encoding of ['hex', 'base64', 'base64url']) {
    const pool = new Pool({ kernel: 'echo', encoding });
    const input = bytes(5000);
    assert.equal((await pool.post(input)).result, input.toString(encoding));
    await pool.close();
  }
});

test('maxOutputBytes: a result up to the limit is delivered, one byte more rejects with ERR_BUFFER_TOO_LARGE', async () => {
  assert.equal(defaults.maxOutputBytes, constants.MAX_LENGTH);
  const pool = new Pool({ kernel: 'echo', maxOutputBytes: 1000 });
  try {
    assert.equal((await pool.post(bytes(1000))).result.length, 1000);
    await assert.rejects(pool.post(bytes(1001)), {
      name: 'RangeError',
      code: 'ERR_BUFFER_TOO_LARGE',
      message: 'Cannot create a result larger than maxOutputBytes (1000 bytes)',
    });
    // The limit holds for every kernel: a 32-byte digest is refused under 16.
    const small = new Pool({ maxOutputBytes: 16 });
    await assert.rejects(small.post(bytes(10)), { code: 'ERR_BUFFER_TOO_LARGE' });
    assert.equal((await small.post(bytes(10), { kernel: 'md5' })).result.length, 16);
    await small.close();
  } finally {
    await pool.close();
  }
});

test('maxOutputBytes is an integer from 1 to buffer.constants.MAX_LENGTH', () => {
  for (const [value, code] of [
    [0, 'ERR_OUT_OF_RANGE'],
    [-1, 'ERR_OUT_OF_RANGE'],
    [1.5, 'ERR_OUT_OF_RANGE'],
    [NaN, 'ERR_OUT_OF_RANGE'],
    [constants.MAX_LENGTH + 1, 'ERR_OUT_OF_RANGE'],
    ['1000', 'ERR_INVALID_ARG_TYPE'],
  ]) {
    assert.throws(() => new Pool({ maxOutputBytes: value }), { code }, String(value));
  }
});

test('a result too long for a string in the encoding rejects with ERR_STRING_TOO_LONG', async () => {
  // 2^28 + 1 bytes make a hex string longer than V8's string limit.
  const pool = new Pool({ kernel: 'echo', encoding: 'hex' });
  try {
    await assert.rejects(pool.post(Buffer.alloc(2 ** 28 + 1)), { code: 'ERR_STRING_TOO_LONG' });
    assert.equal((await pool.post(bytes(3))).result, bytes(3).toString('hex'), 'the pool goes on');
  } finally {
    await pool.close();
  }
});

test('large results are freed when collected (the finalizer runs)', () => {
  // 64 results of 32 MiB, each dropped: 2 GiB if none were freed.
  const script = `
    const { Pool } = require(${JSON.stringify(require.resolve('..'))});
    (async () => {
      const pool = new Pool({ kernel: 'echo', maxThreads: 1 });
      const input = Buffer.alloc(32 << 20, 1);
      let peak = 0;
      for (let i = 0; i < 64; i++) {
        const { result } = await pool.post(input);
        if (result.length !== input.length) throw new Error('short result');
        globalThis.gc();
        await new Promise((r) => setImmediate(r));
        peak = Math.max(peak, process.memoryUsage().rss);
      }
      await pool.close();
      console.log(JSON.stringify({ peakMiB: Math.round(peak / 2 ** 20) }));
    })();`;
  const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(child.status, 0, child.stderr);
  const { peakMiB } = JSON.parse(child.stdout);
  assert.ok(peakMiB < 600, `peak RSS ${peakMiB} MiB`);
});

/**
 * Holds the JS thread (no turn of the event loop, so no delivery) until no
 * task of `pool` is queued or running; false if that takes over 10 s.
 */
function holdUntilFinished(pool) {
  const until = Date.now() + 10_000;
  for (;;) {
    const s = pool.stats();
    if (s.queued === 0 && s.busyThreads === 0) return true;
    if (Date.now() >= until) return false;
  }
}

test('a batch of many large results is handed over across turns of the event loop, every task settling once', async () => {
  const pool = new Pool({ kernel: 'echo', maxThreads: 2 });
  try {
    const n = 40;
    const inputs = Array.from({ length: n }, (_, i) => bytes(1 << 20, i));
    let settled = 0;
    let settledWhenTheLoopTurned;
    const posts = inputs.map((input, i) =>
      pool.post(input).then(({ result }) => {
        assert.ok(result.equals(inputs[i]), `result ${i}`);
        if (settled++ === 0) setImmediate(() => (settledWhenTheLoopTurned = settled));
      }),
    );
    // Hold the JS thread until every task has finished: all 40 MiB of
    // results then wait in one batch.
    assert.ok(holdUntilFinished(pool), 'every task finished while the JS thread was held');
    await Promise.all(posts);
    assert.equal(settled, n);
    assert.ok(
      settledWhenTheLoopTurned < n,
      `the event loop turned only after ${settledWhenTheLoopTurned} of ${n} results`,
    );
  } finally {
    await pool.close();
  }
});

test(
  'held-back large results still arrive when the test fakes setImmediate (as fake timers do)',
  { timeout: 20_000 },
  async (t) => {
    t.mock.timers.enable({ apis: ['setImmediate'] });
    const pool = new Pool({ kernel: 'echo', maxThreads: 2 });
    try {
      const posts = Array.from({ length: 16 }, (_, i) => pool.post(bytes(1 << 20, i)));
      // Every task finished before the first delivery: one batch of 16 MiB,
      // more than one call's budget, so part of it is held back.
      assert.ok(holdUntilFinished(pool), 'every task finished while the JS thread was held');
      const results = await Promise.all(posts);
      assert.equal(results.length, 16);
      results.forEach(({ result }, i) => assert.ok(result.equals(bytes(1 << 20, i))));
    } finally {
      t.mock.timers.reset();
      await pool.close();
    }
  },
);
