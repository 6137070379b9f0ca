'use strict';
// Loaded kernels (Pool.loadKernels) while they run: cancellation and
// deadlines mid-run, a panic isolated to its task, a kernel that never
// checks at destroy() and at process exit, 200k tiny tasks each settled
// once, worker threads seeing the process's kernels, the permission
// model, and the C kernel streaming (loading and results:
// user-kernels.test.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const { PERMISSION_FLAG } = require('./project');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const tidepool = require('..');

const { Pool } = tidepool;

const { waitFor, poolState } = require('./wait');
const { RUST_LIB, C_LIB, RUST_KERNELS, noC } = require('./example-kernels');
const { rejects, throws } = require('./expect');

function millis(ms) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(ms);
  return b;
}

test('cancellation and deadlines stop a loaded kernel mid-run; the pool goes on', async () => {
  Pool.loadKernels(RUST_LIB);
  const pool = new Pool({
    kernel: 'example/pbkdf2',
    params: { salt: 's', iterations: 2 ** 31 },
    maxThreads: 1,
  });
  try {
    const ac = new AbortController();
    const running = pool.post(Buffer.from('pw'), { signal: ac.signal });
    // Aborted once it is running (the only thread has taken it).
    await waitFor(() => pool.stats().queued === 0 && pool.stats().busyThreads === 1, {
      what: 'the thread to take the task',
      state: poolState(pool),
    });
    ac.abort();
    await rejects(running, 'ABORT_ERR');
    await rejects(pool.post(Buffer.from('pw'), { timeoutMs: 30 }), 'ERR_TIDEPOOL_TIMEOUT');
    const quick = await pool.post(Buffer.from('pw'), { params: { salt: 's', iterations: 1 } });
    assert.equal(
      quick.result.toString('hex'),
      crypto.pbkdf2Sync('pw', 's', 1, 32, 'sha256').toString('hex'),
    );
  } finally {
    await pool.close();
  }
});

test('a panic in a loaded kernel rejects its task only; the thread lives on', async () => {
  Pool.loadKernels(RUST_LIB);
  const pool = new Pool({ kernel: 'example/sha256', minThreads: 1, maxThreads: 1 });
  try {
    const results = await Promise.allSettled([
      pool.post(Buffer.from('before')),
      pool.post(Buffer.from('boom'), { kernel: 'example/panic' }),
      pool.post(Buffer.alloc(0), { kernel: 'example/panic' }),
      pool.post(Buffer.from('after')),
    ]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].reason.code, 'ERR_TIDEPOOL_PANIC');
    assert.match(results[1].reason.message, /example\/panic: 4 bytes, on purpose/);
    assert.match(results[2].reason.message, /no input, on purpose/);
    assert.equal(
      results[3].value.result.toString('hex'),
      crypto.createHash('sha256').update('after').digest('hex'),
    );
    assert.equal(pool.stats().threads, 1);
  } finally {
    await pool.close();
  }
});

test('a kernel that never checks cannot be stopped: destroy() waits for it and its task keeps its result', async () => {
  Pool.loadKernels(RUST_LIB);
  const pool = new Pool({ kernel: 'example/busy', maxThreads: 1 });
  // A kernel that never checks cannot be held and let go: 1 s, far longer
  // than the test takes to see it running.
  const posted = process.hrtime.bigint();
  const running = pool.post(millis(1000));
  const queued = rejects(pool.post(millis(1000)), 'ERR_TIDEPOOL_DESTROYED');
  await waitFor(() => pool.stats().busyThreads === 1 && pool.stats().queued === 1, {
    what: 'the thread to start the first task',
    state: poolState(pool),
  });
  await pool.destroy();
  // Not a speed check: destroy() cannot have resolved before the kernel's
  // 1000 ms were over, and the kernel started after it was posted.
  const ms = Number(process.hrtime.bigint() - posted) / 1e6;
  assert.ok(
    ms >= 1000,
    `destroy() waited for the running kernel (resolved ${ms} ms after the post)`,
  );
  const spins = (await running).result;
  assert.equal(spins.length, 8, 'the running task settled with its result');
  await queued;
});

test('teardown with a kernel that never checks: process.exit() ends it, a Worker waits for it', async () => {
  // The main thread's process.exit() ends the process, threads included,
  // at once and cleanly: no memory is freed under the kernel before the
  // process is gone.
  const script = `
    const { Pool } = require(${JSON.stringify(path.join(__dirname, '..'))});
    Pool.loadKernels(${JSON.stringify(RUST_LIB)});
    const pool = new Pool({ kernel: 'example/busy' });
    const ms = Buffer.alloc(4); ms.writeUInt32LE(5000);
    pool.post(ms);
    const { waitFor } = require(${JSON.stringify(path.join(__dirname, 'wait.js'))});
    waitFor(() => pool.stats().busyThreads === 1, { what: 'the kernel to start', interval: 1 }).then(() => process.exit(7));
  `;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.signal, null, child.stderr);
  assert.equal(child.status, 7, child.stderr);

  // A terminated Worker's memory is freed while the process lives on: the
  // environment's cleanup hook joins the pool's threads first, so
  // terminate() waits for the kernel.
  const worker = new Worker(
    `
    const { parentPort } = require('node:worker_threads');
    const { Pool } = require(${JSON.stringify(path.join(__dirname, '..'))});
    Pool.loadKernels(${JSON.stringify(RUST_LIB)});
    const { waitFor } = require(${JSON.stringify(path.join(__dirname, 'wait.js'))});
    const pool = new Pool({ kernel: 'example/busy' });
    const ms = Buffer.alloc(4); ms.writeUInt32LE(1000);
    const posted = String(process.hrtime.bigint());
    pool.post(ms);
    waitFor(() => pool.stats().busyThreads === 1, { what: 'the kernel to start', interval: 1 }).then(
      () => parentPort.postMessage({ posted }),
      (err) => parentPort.postMessage({ error: err.message }),
    );
  `,
    { eval: true },
  );
  const running = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) =>
      reject(new Error(`the Worker exited with ${code} before its kernel ran`)),
    );
  });
  assert.equal(running.error, undefined, running.error);
  await worker.terminate();
  // Not a speed check: terminate() cannot end before the kernel's 1000 ms
  // are over, and the kernel started after it was posted (one monotonic
  // clock for the whole process).
  const ms = Number(process.hrtime.bigint() - BigInt(running.posted)) / 1e6;
  assert.ok(ms >= 1000, `terminate() returned ${ms} ms after the post`);
});

test('200k tiny tasks through a loaded kernel each settle exactly once with their own digest', async () => {
  Pool.loadKernels(RUST_LIB);
  const pool = new Pool({ kernel: 'example/sha256', encoding: 'hex' });
  const n = 200_000;
  const settled = new Uint8Array(n);
  const inputs = [];
  for (let i = 0; i < 1000; i++) inputs.push(Buffer.from(`message ${i}`));
  const wants = inputs.map((b) => crypto.createHash('sha256').update(b).digest('hex'));
  let wrong = 0;
  try {
    const all = [];
    for (let i = 0; i < n; i++) {
      const message = { data: inputs[i % 1000], i };
      all.push(
        pool.post(message).then(({ result, message: m }) => {
          settled[m.i]++;
          if (result !== wants[m.i % 1000]) wrong++;
        }),
      );
    }
    await Promise.all(all);
  } finally {
    await pool.close();
  }
  assert.equal(wrong, 0);
  assert.ok(
    settled.every((c) => c === 1),
    'every task settled exactly once',
  );
});

test('a worker thread of the process sees kernels loaded by the main thread', async () => {
  Pool.loadKernels(RUST_LIB);
  const worker = new Worker(
    `
    const { parentPort } = require('node:worker_threads');
    const { Pool } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const pool = new Pool({ kernel: 'example/sha256', encoding: 'hex' });
    pool.post(Buffer.from('from a worker')).then(({ result }) => pool.close().then(() => parentPort.postMessage(result)));
  `,
    { eval: true },
  );
  const [result] = await new Promise((resolve, reject) => {
    worker.once('message', (m) => resolve([m]));
    worker.once('error', reject);
  });
  await worker.terminate();
  assert.equal(result, crypto.createHash('sha256').update('from a worker').digest('hex'));
});

test('under the permission model, a library outside --allow-fs-read is refused', () => {
  const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-')), 'lib.node');
  fs.copyFileSync(RUST_LIB, outside);
  const root = path.join(__dirname, '..');
  const script = `
    const { Pool } = require(${JSON.stringify(root)});
    const codes = [];
    try { Pool.loadKernels(${JSON.stringify(outside)}); codes.push('loaded'); } catch (e) { codes.push(e.code); }
    codes.push(Pool.loadKernels(${JSON.stringify(RUST_LIB)}).length);
    console.log(JSON.stringify(codes));
  `;
  const child = spawnSync(
    process.execPath,
    [PERMISSION_FLAG, '--allow-addons', `--allow-fs-read=${root}/*`, '--no-warnings', '-e', script],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), ['ERR_ACCESS_DENIED', RUST_KERNELS.length]);
});

/** wc's counts, computed here. */
function wc(bytes) {
  let lines = 0;
  let words = 0;
  let inWord = false;
  for (const b of bytes) {
    if (b === 10) lines++;
    const space = b === 32 || (b >= 9 && b <= 13);
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return [lines, words, bytes.length];
}

test(
  'the C kernel, written against the header, streams and counts like wc',
  { skip: noC },
  async () => {
    assert.deepEqual(Pool.loadKernels(C_LIB), ['example-c/wc']);
    const pool = new Pool({ kernel: 'example-c/wc' });
    try {
      const words = ['alpha', 'beta\tgamma', 'delta\n', ' ', '\r\n', 'epsilon  zeta\n'];
      const chunks = [];
      for (let i = 0; i < 40_000; i++) chunks.push(words[(i * 7919) % words.length]);
      const text = Buffer.from(chunks.join(''));
      // Parts that split words and lines.
      const parts = [text.subarray(0, 3), text.subarray(3, 100_001), text.subarray(100_001)];
      const { result } = await pool.post(parts);
      const got = [0, 8, 16].map((at) => Number(result.readBigUInt64LE(at)));
      assert.deepEqual(got, wc(text));
      await rejects(
        pool.post(Buffer.from('short\nthis line is too long\nok\n'), {
          params: { maxLineBytes: 10 },
        }),
        'ERR_WC_LINE_TOO_LONG',
        /line 2/,
      );
      throws(
        () => pool.post(text, { params: { maxLineBytes: 0 } }),
        RangeError,
        'ERR_OUT_OF_RANGE',
      );
    } finally {
      await pool.close();
    }
  },
);
