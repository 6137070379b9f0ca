'use strict';
// What post() reads is decided when post() is called: one snapshot of the
// caller's binaries, checked and kept alive by the pool. Nothing the caller
// does afterwards (legal JavaScript) can crash the process or change the
// digest; memory that cannot be read in place is refused synchronously.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
const { spawnSync } = require('node:child_process');
const { Pool } = require('..');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const sha256 = (...parts) => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};

function throwsCode(fn, Ctor, code, pattern) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof Ctor, `${err} is not a ${Ctor.name}`);
    assert.equal(err.code, code, err.message);
    if (pattern !== undefined) assert.match(err.message, pattern);
    return true;
  });
}

test('an Array of parts cleared right after post() still hashes what it held (and is not freed)', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    const runs = [];
    for (let i = 0; i < 32; i++) {
      // Large parts live outside the V8 heap: freed at once by a GC if
      // nothing keeps them, which the old code did not.
      let parts = [crypto.randomBytes(1 << 20), crypto.randomBytes(1 << 20)];
      const want = sha256(...parts);
      runs.push(pool.post(parts).then(({ result }) => [result, want]));
      parts.length = 0;
      parts = null;
      gc();
    }
    for (const [got, want] of await Promise.all(runs)) assert.equal(got, want);
  } finally {
    await pool.close();
  }
});

test('an element getter runs exactly once and its value is what is hashed and kept alive', async () => {
  const pool = new Pool({ encoding: 'hex', maxInputBytes: 100 });
  try {
    let calls = 0;
    const first = Buffer.from('first value');
    const parts = [];
    Object.defineProperty(parts, 0, {
      get() {
        calls++;
        return calls === 1 ? first : Buffer.alloc(1 << 24, 1);
      },
    });
    const done = pool.post(parts);
    assert.equal(calls, 1, 'read once, when post() was called');
    gc();
    assert.equal((await done).result, sha256(first));
    assert.equal(calls, 1);

    // Nor can a getter slip a larger binary past maxInputBytes.
    const sneaky = [];
    let n = 0;
    Object.defineProperty(sneaky, 0, {
      get: () => (n++ === 0 ? Buffer.alloc(1 << 20) : Buffer.alloc(1)),
    });
    throwsCode(() => pool.post(sneaky), RangeError, 'ERR_OUT_OF_RANGE');
    assert.equal(n, 1);
    assert.equal(pool.stats().pending, 0);
  } finally {
    await pool.close();
  }
});

test('an own byteLength property cannot lie about the size of a Buffer', async () => {
  const pool = new Pool({ encoding: 'hex', maxInputBytes: 10 });
  try {
    const big = Buffer.alloc(1000, 7);
    Object.defineProperty(big, 'byteLength', { value: 1 });
    throwsCode(() => pool.post(big), RangeError, 'ERR_OUT_OF_RANGE', /1000 bytes/);
    const small = Buffer.from('12345');
    Object.defineProperty(small, 'byteLength', { value: 10_000 });
    assert.equal((await pool.post(small)).result, sha256('12345'));
  } finally {
    await pool.close();
  }
});

test("queueFull 'wait': what a waiting post hashes was fixed when it was posted", async () => {
  const pool = new Pool({
    kernel: 'sha256',
    encoding: 'hex',
    maxThreads: 1,
    maxQueue: 1,
    queueFull: 'wait',
  });
  try {
    const posts = [];
    const arrays = [];
    for (let i = 0; i < 20; i++) {
      const parts = [crypto.randomBytes(64 << 10), Buffer.from(`#${i}`)];
      posts.push(pool.post(parts).then(({ result }) => result));
      arrays.push([parts, sha256(...parts)]);
    }
    assert.equal(pool.needsDrain, true, 'some posts wait for room');
    // Clear some arrays, put non-binaries into the others.
    arrays.forEach(([parts], i) => {
      if (i % 2) parts.length = 0;
      else parts[0] = 'not a binary';
    });
    gc();
    const results = await Promise.all(posts);
    results.forEach((r, i) => assert.equal(r, arrays[i][1], `post ${i}`));
    // The pool is not wedged: later posts and close() settle.
    assert.equal((await pool.post(Buffer.from('after'))).result, sha256('after'));
  } finally {
    await pool.close();
  }
});

test('detached binaries throw ERR_INVALID_STATE synchronously; nothing is queued', async () => {
  const pool = new Pool();
  try {
    const make = () => {
      const b = Buffer.alloc(4096, 1);
      const views = {
        buffer: b,
        arrayBuffer: b.buffer,
        dataView: new DataView(b.buffer),
        floats: new Float64Array(b.buffer),
      };
      structuredClone(b.buffer, { transfer: [b.buffer] });
      return views;
    };
    for (const [kind, value] of Object.entries(make())) {
      throwsCode(() => pool.post(value), TypeError, 'ERR_INVALID_STATE', /detached/);
      throwsCode(
        () => pool.post([Buffer.from('ok'), value]),
        TypeError,
        'ERR_INVALID_STATE',
        /message\[1\]/,
      );
      throwsCode(() => pool.postMessage({ data: value }), TypeError, 'ERR_INVALID_STATE');
      assert.equal(pool.stats().pending, 0, kind);
    }
    // Empty but attached binaries are fine: they hash as "".
    const empty = sha256('');
    for (const value of [
      Buffer.alloc(0),
      new ArrayBuffer(0),
      new DataView(new ArrayBuffer(0)),
      Buffer.alloc(8).subarray(8),
    ]) {
      assert.equal((await pool.post(value)).result.toString('hex'), empty);
    }
  } finally {
    await pool.close();
  }
});

test('resizable ArrayBuffers are refused (they could shrink under a task); growable shared ones are read', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    const ab = new ArrayBuffer(64, { maxByteLength: 128 });
    const inBounds = new Uint8Array(ab, 0, 32);
    const outOfBounds = new Uint8Array(new ArrayBuffer(64, { maxByteLength: 128 }), 16, 32);
    outOfBounds.buffer.resize(8);
    for (const value of [
      ab,
      inBounds,
      new DataView(ab),
      outOfBounds,
      Buffer.from(ab),
      [Buffer.alloc(1), inBounds],
    ]) {
      throwsCode(() => pool.post(value), TypeError, 'ERR_INVALID_ARG_VALUE', /resizable/);
    }
    // Nor does a resizable buffer pass for a shared one by its prototype.
    const disguised = new ArrayBuffer(16, { maxByteLength: 32 });
    Object.setPrototypeOf(disguised, SharedArrayBuffer.prototype);
    throwsCode(
      () => pool.post(new Uint8Array(disguised)),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /resizable/,
    );
    assert.equal(pool.stats().pending, 0);
    const sab = new SharedArrayBuffer(16, { maxByteLength: 64 });
    new Uint8Array(sab).fill(3);
    assert.equal((await pool.post(new Uint8Array(sab))).result, sha256(Buffer.alloc(16, 3)));
    assert.equal((await pool.post(sab)).result, sha256(Buffer.alloc(16, 3)));
  } finally {
    await pool.close();
  }
});

test('a Proxy (of a Buffer, of an Array, or as an element) gets TypeError ERR_INVALID_ARG_TYPE naming it', async () => {
  const pool = new Pool();
  try {
    const buf = Buffer.from('x');
    for (const value of [
      new Proxy(buf, {}),
      new Proxy([buf], {}),
      [buf, new Proxy(buf, {})],
      { data: new Proxy(buf, {}) },
    ]) {
      throwsCode(() => pool.post(value), TypeError, 'ERR_INVALID_ARG_TYPE', /Proxy/);
    }
    // A Proxy *message* is fine: only the binaries are read in place.
    const message = new Proxy({ data: buf }, {});
    assert.equal((await pool.post(message)).message, message);
  } finally {
    await pool.close();
  }
});

test('holes and nested Arrays are refused with the index of the bad element', async () => {
  const pool = new Pool();
  try {
    throwsCode(
      // eslint-disable-next-line no-sparse-arrays
      () => pool.post([Buffer.alloc(1), , Buffer.alloc(1)]),
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      /message\[1\]/,
    );
    throwsCode(
      () => pool.post([[Buffer.alloc(1)]]),
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      /message\[0\]/,
    );
  } finally {
    await pool.close();
  }
});

test('a signal with its own addEventListener cannot half-queue a post: the task is watched and settles once', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  try {
    const ac = new AbortController();
    ac.signal.addEventListener = () => {
      throw new Error('user code');
    };
    const { micros } = require('..');
    const blocker = pool.post(micros(50_000));
    const task = pool.post(micros(1000), { signal: ac.signal });
    assert.equal(pool.stats().pending, 2);
    ac.abort();
    await assert.rejects(task, { code: 'ABORT_ERR' });
    await blocker;
    assert.equal(pool.stats().pending, 0);
    assert.equal(pool.stats().failed, 1);
  } finally {
    await pool.close();
  }
});

test('the input fuzzer: every random input throws a typed error or hashes what was there (3 s, own process)', () => {
  const seed = Number(process.env.TIDEPOOL_FUZZ_SEED ?? Date.now() % 1e9);
  const r = spawnSync(
    process.execPath,
    [path.join(__dirname, 'fuzz', 'input.js'), '--seconds', '3', '--seed', String(seed)],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  assert.equal(
    r.signal,
    null,
    `the fuzzer's process died of ${r.signal} (seed ${seed})\n${r.stderr}`,
  );
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /input fuzz: \d+ cases/);
});

test('builtins replaced after require() change nothing a post reads or checks (own process)', () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'fuzz', 'tampered-globals.js')], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.signal, null, `died of ${r.signal}\n${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    weakref: { err: 'TypeError:ERR_INVALID_ARG_VALUE' },
    arrayProto: { ok: true },
    uint8array: { ok: true },
  });
});

test('every TypedArray kind the runtime has is read as exactly its bytes (Float16Array where it exists)', async () => {
  const pool = new Pool({ kernel: 'echo' });
  try {
    // Every TypedArray constructor of the global object, whatever the runtime adds.
    const TypedArray = Object.getPrototypeOf(Uint8Array);
    const kinds = Object.getOwnPropertyNames(globalThis)
      .map((name) => globalThis[name])
      .filter(
        (value) => typeof value === 'function' && Object.getPrototypeOf(value) === TypedArray,
      );
    assert.ok(kinds.length >= 11, kinds.map((Kind) => Kind.name).join());
    for (const Kind of kinds) {
      // A view in the middle of a larger buffer: a wrong element size
      // would read the bytes after it.
      const backing = crypto.randomBytes(64 + 8 * Kind.BYTES_PER_ELEMENT + 64);
      const view = new Kind(backing.buffer, backing.byteOffset + 64, 8);
      const bytes = Buffer.from(backing.buffer, backing.byteOffset + 64, view.byteLength);
      const tail = Buffer.from('tail');
      assert.deepEqual((await pool.post(view)).result, bytes, Kind.name);
      assert.deepEqual(
        (await pool.post([view, tail])).result,
        Buffer.concat([bytes, tail]),
        `${Kind.name} in an Array`,
      );
      assert.deepEqual(await pool.postMany([view]), [bytes], `${Kind.name}, postMany`);
      const records = await pool.postRecords([view, tail], [view.byteLength, 4]);
      assert.deepEqual(records, [bytes, tail], `${Kind.name}, postRecords`);
    }
  } finally {
    await pool.close();
  }
});
