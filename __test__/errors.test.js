'use strict';
// Bad input gets a clear, typed, synchronous error; kernel failures reject
// only their own task; every task settles exactly once.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Pool, micros } = require('..');

function throwsCode(fn, Ctor, code) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof Ctor, `${err} is not a ${Ctor.name}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

test('non-binary messages throw ERR_INVALID_ARG_TYPE synchronously', async () => {
  const pool = new Pool();
  try {
    for (const bad of [
      undefined,
      null,
      42,
      'text',
      true,
      Symbol('s'),
      {},
      { data: 'str' },
      [Buffer.alloc(1), 'x'],
      [[Buffer.alloc(1)]],
      () => {},
    ]) {
      throwsCode(() => pool.post(bad), TypeError, 'ERR_INVALID_ARG_TYPE');
      throwsCode(() => pool.postMessage(bad), TypeError, 'ERR_INVALID_ARG_TYPE');
    }
    const custom = new Pool({ select: (m) => m.payload });
    throwsCode(() => custom.post({ payload: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE');
    await custom.close();
    assert.equal(pool.stats().pending, 0, 'nothing was queued');
  } finally {
    await pool.close();
  }
});

test('unknown kernels throw ERR_TIDEPOOL_UNKNOWN_KERNEL', async () => {
  throwsCode(() => new Pool({ kernel: 'sha3' }), TypeError, 'ERR_TIDEPOOL_UNKNOWN_KERNEL');
  throwsCode(() => new Pool({ kernel: 5 }), TypeError, 'ERR_INVALID_ARG_TYPE');
  const pool = new Pool();
  try {
    throwsCode(
      () => pool.post(Buffer.alloc(1), { kernel: 'nope' }),
      TypeError,
      'ERR_TIDEPOOL_UNKNOWN_KERNEL',
    );
    throwsCode(() => pool.post(Buffer.alloc(1), 'sha1'), TypeError, 'ERR_INVALID_ARG_TYPE');
    throwsCode(() => pool.post(Buffer.alloc(1), null), TypeError, 'ERR_INVALID_ARG_TYPE');
  } finally {
    await pool.close();
  }
});

test("a newcomer's slips name the way out: a kernel's other spelling, node:zlib's level, a string", async () => {
  const pool = new Pool();
  try {
    // node:crypto's and WebCrypto's spellings, and a near miss.
    for (const [name, meant] of [
      ['SHA256', 'sha256'],
      ['sha-256', 'sha256'],
      ['SHA-512', 'sha512'],
      ['blake', 'blake3'],
      ['brotli_compress', 'brotliCompress'],
    ]) {
      assert.throws(() => pool.post(Buffer.alloc(1), { kernel: name }), {
        name: 'TypeError',
        code: 'ERR_TIDEPOOL_UNKNOWN_KERNEL',
        message: new RegExp(`Did you mean '${meant}'\\?`),
      });
    }
    assert.throws(() => pool.createHash('Sha1'), {
      code: 'ERR_TIDEPOOL_UNKNOWN_KERNEL',
      message: /Did you mean 'sha1'/,
    });
    assert.throws(
      () => new Pool({ kernel: 'nothing-like-it' }),
      (err) => !/Did you mean/.test(err.message),
    );
    // node:zlib takes level beside the options, and so does createGzip(); post() takes params.
    assert.throws(() => pool.post(Buffer.alloc(1), { kernel: 'gzip', level: 9 }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message:
        /'level' is a kernel parameter here: pass it in params, post\(message, \{ params: \{ level: \.\.\. \} \}\)/,
    });
    assert.throws(() => pool.createBrotliCompress({ quality: 4 }), {
      message: /createBrotliCompress\(\{ params: \{ quality/,
    });
    assert.throws(() => pool.post(Buffer.alloc(1), { level: 1 }), {
      message: /post\(message, \{ params: \{ level/,
    });
    assert.throws(() => new Pool({ key: 'k' }), { message: /new Pool\(\{ params: \{ key/ });
    assert.throws(() => pool.createGunzip({ maxOutputLength: 1 }), {
      message: /node:zlib's 'maxOutputLength' is 'maxOutputBytes' here/,
    });
    // A string has no bytes until an encoding is chosen.
    for (const bad of [
      () => pool.post('hello'),
      () => pool.post({ data: 'hello' }),
      () => pool.postMany(['hello']),
    ]) {
      assert.throws(bad, {
        code: 'ERR_INVALID_ARG_TYPE',
        message: /Received type string \('hello'\): pass Buffer\.from\(string\)/,
      });
    }
  } finally {
    await pool.close();
  }
});

test('bad pool options throw TypeError or RangeError with Node codes', () => {
  throwsCode(() => new Pool(5), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => new Pool(null), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => new Pool({ maxThreads: '2' }), TypeError, 'ERR_INVALID_ARG_TYPE');
  for (const maxThreads of [0, -1, 1.5, NaN, Infinity, 100000]) {
    throwsCode(() => new Pool({ maxThreads }), RangeError, 'ERR_OUT_OF_RANGE');
  }
  throwsCode(() => new Pool({ minThreads: 3, maxThreads: 2 }), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => new Pool({ minThreads: -1 }), RangeError, 'ERR_OUT_OF_RANGE');
  for (const key of ['spawnDelayMs', 'idleTimeoutMs', 'checkIntervalMs']) {
    throwsCode(() => new Pool({ [key]: -5 }), RangeError, 'ERR_OUT_OF_RANGE');
    throwsCode(() => new Pool({ [key]: '5' }), TypeError, 'ERR_INVALID_ARG_TYPE');
  }
  throwsCode(() => new Pool({ checkIntervalMs: 0 }), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => new Pool({ encoding: 'utf9' }), TypeError, 'ERR_INVALID_ARG_VALUE');
  throwsCode(() => new Pool({ scaleRule: 'fastest' }), TypeError, 'ERR_INVALID_ARG_VALUE');
  throwsCode(() => new Pool({ scaleRule: 1 }), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => new Pool({ encoding: 1 }), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => new Pool({ select: 'data' }), TypeError, 'ERR_INVALID_ARG_TYPE');
  throwsCode(() => micros(-1), RangeError, 'ERR_OUT_OF_RANGE');
  throwsCode(() => micros('1'), TypeError, 'ERR_INVALID_ARG_TYPE');
});

test('spin/sleep inputs shorter than 4 bytes throw ERR_OUT_OF_RANGE', async () => {
  const pool = new Pool({ kernel: 'sleep' });
  try {
    throwsCode(() => pool.post(Buffer.alloc(3)), RangeError, 'ERR_OUT_OF_RANGE');
    throwsCode(
      () => pool.post(Buffer.alloc(3), { kernel: 'spin' }),
      RangeError,
      'ERR_OUT_OF_RANGE',
    );
    // Four bytes spread over an array are fine.
    await pool.post([Buffer.from([1, 0]), Buffer.from([0, 0])]);
  } finally {
    await pool.close();
  }
});

test('a kernel panic rejects that task with ERR_TIDEPOOL_PANIC and the pool keeps its capacity', async () => {
  const pool = new Pool({ minThreads: 2, maxThreads: 2 });
  try {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) =>
        pool.post(Buffer.from([i]), { kernel: i % 2 ? 'panic' : 'sha256' }),
      ),
    );
    for (let i = 0; i < outcomes.length; i++) {
      if (i % 2) {
        assert.equal(outcomes[i].status, 'rejected');
        assert.equal(outcomes[i].reason.code, 'ERR_TIDEPOOL_PANIC');
        assert.match(outcomes[i].reason.message, /panicked on purpose/);
      } else {
        assert.equal(outcomes[i].status, 'fulfilled');
      }
    }
    assert.equal(pool.stats().threads, 2, 'no thread was lost');
    assert.equal(pool.stats().failed, 50);
    const after = await pool.post(Buffer.from('still works'), { kernel: 'sha1' });
    assert.equal(after.result.length, 20);
  } finally {
    await pool.close();
  }
});

test('posts after close() reject with ERR_TIDEPOOL_CLOSED; postMessage emits error', async () => {
  const pool = new Pool();
  const closing = pool.close();
  await assert.rejects(pool.post(Buffer.alloc(1)), { code: 'ERR_TIDEPOOL_CLOSED' });
  const message = Buffer.alloc(2);
  const errored = new Promise((resolve) => pool.once('error', (err, msg) => resolve([err, msg])));
  pool.postMessage(message);
  const [err, msg] = await errored;
  assert.equal(err.code, 'ERR_TIDEPOOL_CLOSED');
  assert.equal(msg, message);
  await closing;
  // Bad arguments still throw synchronously after close.
  assert.throws(() => pool.post(42), { code: 'ERR_INVALID_ARG_TYPE' });
});

const kFailSpawnsAfter = Symbol.for('tidepool.test.failSpawnsAfter');

test('a thread the OS refuses to start: spawnError event, stats, and the pool works on', async () => {
  const pool = new Pool({ kernel: 'spin', minThreads: 1, maxThreads: 2, [kFailSpawnsAfter]: 1 });
  const errors = [];
  pool.on('spawnError', (e) => errors.push(e));
  try {
    const results = await Promise.all(Array.from({ length: 200 }, () => pool.post(micros(300))));
    assert.equal(results.length, 200);
    assert.ok(errors.length >= 1, 'spawnError emitted');
    assert.match(errors[0].error, /EAGAIN/);
    assert.equal(errors[0].threads, 1);
    const s = pool.stats();
    assert.equal(s.threads, 1);
    assert.equal(s.spawnErrors, errors.length);
  } finally {
    await pool.close();
  }
});

test('no core thread can start: the constructor throws ERR_TIDEPOOL_SPAWN_FAILED', () => {
  throwsCode(() => new Pool({ [kFailSpawnsAfter]: 0 }), Error, 'ERR_TIDEPOOL_SPAWN_FAILED');
});

test('unknown option names throw ERR_INVALID_ARG_VALUE naming the option', async () => {
  throwsCode(() => new Pool({ kernal: 'md5' }), TypeError, 'ERR_INVALID_ARG_VALUE');
  assert.throws(() => new Pool({ kernal: 'md5' }), /'options\.kernal'.*Did you mean 'kernel'\?/);
  assert.throws(() => new Pool({ maxThread: 2 }), /Did you mean 'maxThreads'\?/);
  throwsCode(() => new Pool({ kernel: 'md5', timeoutMs: 5 }), TypeError, 'ERR_INVALID_ARG_VALUE');
  const pool = new Pool();
  try {
    assert.throws(() => pool.post(Buffer.alloc(1), { encoding: 'hex' }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /'encoding' is an option of new Pool\(\), not of post\(\)/,
    });
    throwsCode(
      () => pool.post(Buffer.alloc(1), { key: Buffer.alloc(32) }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
    );
    throwsCode(
      () => pool.post(Buffer.alloc(1), { kernel: 'md5', singal: null }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
    );
    throwsCode(() => pool.stats({ rest: true }), TypeError, 'ERR_INVALID_ARG_VALUE');
    // Inherited names are not options: neither refused nor read (own-options.test.js).
    await pool.post(Buffer.alloc(1), Object.create({ kernal: 'md5' }));
    // Symbol keys are not options.
    await pool.post(Buffer.alloc(1), { [Symbol('meta')]: 1 });
    assert.equal(pool.stats().pending, 0);
  } finally {
    await pool.close();
  }
});

test('every exception thrown by a listener surfaces as an uncaught exception; every task is delivered', () => {
  const { spawnSync } = require('node:child_process');
  const code = `
    const { Pool } = require('.');
    const { everySettled } = require('./__test__/wait');
    let uncaught = 0, delivered = 0;
    process.on('uncaughtException', () => uncaught++);
    const pool = new Pool({ maxThreads: 1 });
    pool.on('message', () => { delivered++; throw new Error('listener'); });
    for (let i = 0; i < 100; i++) pool.postMessage(Buffer.from([i]));
    everySettled(pool).then(async () => { await pool.close(); console.log(JSON.stringify({ uncaught, delivered })); });
  `;
  const r = spawnSync(process.execPath, ['-e', code], {
    cwd: require('node:path').join(__dirname, '..'),
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { uncaught: 100, delivered: 100 });
});

test('new Pool() without options does not read a polluted Object.prototype', async () => {
  Object.prototype.kernel = 'md5';
  let pool;
  try {
    pool = new Pool();
  } finally {
    delete Object.prototype.kernel;
  }
  try {
    assert.equal((await pool.post(Buffer.from('x'))).result.length, 32, 'SHA-256, not MD5');
  } finally {
    await pool.close();
  }
});

test('a getter-only code on Object.prototype changes nothing a failed task carries', async () => {
  const pool = new Pool({ maxThreads: 2 });
  let ran = 0;
  // Before the fix, the first task error threw here (`err.code = …` on a
  // getter-only accessor), inside the batch callback.
  Object.defineProperty(Object.prototype, 'code', {
    configurable: true,
    get() {
      ran++;
      throw new Error('code getter ran');
    },
  });
  let outcomes;
  try {
    const ac = new AbortController();
    const batch = pool.postMany([micros(50_000), micros(50_000)], {
      kernel: 'sleep',
      signal: ac.signal,
    });
    ac.abort();
    outcomes = await Promise.allSettled([
      pool.post(Buffer.from('not gzip'), { kernel: 'gunzip' }),
      pool.post(micros(200_000), { kernel: 'sleep', timeoutMs: 5 }),
      pool.post(Buffer.from('x'), { kernel: 'panic' }),
      batch,
    ]);
  } finally {
    delete Object.prototype.code;
  }
  try {
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected', 'rejected'],
    );
    assert.deepEqual(
      outcomes.map((o) => Object.getOwnPropertyDescriptor(o.reason, 'code')?.value),
      ['Z_DATA_ERROR', 'ERR_TIDEPOOL_TIMEOUT', 'ERR_TIDEPOOL_PANIC', 'ABORT_ERR'],
    );
    assert.equal(ran, 0, 'no getter of the caller ran');
  } finally {
    await pool.close();
  }
});

test('the errors a newcomer meets first say what to do', async () => {
  const pool = new Pool();
  try {
    // A task shaped for another pool (piscina's { id, buf }): its keys, and both ways out.
    assert.throws(() => pool.post({ id: 1, buf: Buffer.from('x') }), {
      code: 'ERR_INVALID_ARG_TYPE',
      message:
        /Received an instance of Object with the keys id, buf and no "data": put the bytes in "data", or give the pool a select function that finds them \(new Pool\(\{ select: \(m\) => m\.buf \}\)\)$/,
    });
    // Another algorithm is no suggestion; a spelling of the same one is.
    assert.throws(
      () => new Pool({ kernel: 'sha3-256' }),
      (err) => {
        assert.equal(err.code, 'ERR_TIDEPOOL_UNKNOWN_KERNEL');
        assert.doesNotMatch(err.message, /Did you mean/);
        // The kernels for tests and benchmarks are no answer.
        assert.doesNotMatch(err.message, /\b(spin|sleep|panic|echo)\b/);
        assert.match(err.message, /Known kernels: sha256, /);
        return true;
      },
    );
    assert.throws(() => new Pool({ kernel: 'SHA-256' }), { message: /Did you mean 'sha256'\?/ });
    // Nor are they suggested for a name near theirs (they stay usable by name).
    for (const near of ['SPIN', 'slep', 'pani', 'ech'])
      assert.throws(
        () => new Pool({ kernel: near }),
        (err) => err.code === 'ERR_TIDEPOOL_UNKNOWN_KERNEL' && !/Did you mean/.test(err.message),
      );
    // Options given as the thing they name.
    assert.throws(() => require('@tidepool-rs/pool/zlib').install(pool), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /is a Pool, not the options: pass \{ pool \}/,
    });
    const { Registry } = require('prom-client');
    const { collectMetrics } = require('@tidepool-rs/pool/metrics');
    assert.throws(() => collectMetrics(pool, new Registry()), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /is a prom-client Registry, not the options: pass \{ registry \}/,
    });
  } finally {
    await pool.close();
  }
});
