'use strict';
// Only an options object's own properties are options (issue #26): what a
// polluted Object.prototype holds is neither refused as an unknown name nor
// read as a value, by any function that takes options or kernel params.

const test = require('node:test');
const assert = require('node:assert/strict');
const { runInChild } = require('./child');
const client = require('prom-client');
const { Pool } = require('..');
const { collectMetrics } = require('@tidepool-rs/pool/metrics');

/** Everything a stream writes, once it ends. */
function output(stream, input) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
    stream.end(input);
  });
}

/**
 * Calls every function of tidepool that takes options (or kernel params),
 * each with an empty or plain options object; what each gave, or the code
 * it threw or rejected with.
 */
async function exercise(registry) {
  const input = Buffer.from('tidepool '.repeat(200));
  const outcomes = {};
  const attempt = async (name, fn) => {
    try {
      outcomes[name] = await fn();
    } catch (err) {
      outcomes[name] = `threw ${err.code}`;
    }
  };
  let pool;
  await attempt('new Pool({})', () => {
    pool = new Pool({});
    return 'made';
  });
  pool ??= new Pool();
  const gzipPool = await (async () => {
    let made;
    await attempt('new Pool({ kernel, params })', () => {
      made = new Pool({ kernel: 'gzip', params: { level: 6 } });
      return 'made';
    });
    return made ?? new Pool(); // (its results then differ: the outcome shows it)
  })();
  try {
    await attempt('post()', async () => (await pool.post(input)).result.toString('hex'));
    await attempt('post(b, {})', async () => (await pool.post(input, {})).result.toString('hex'));
    await attempt('post(b, { params })', async () =>
      (await pool.post(input, { kernel: 'gzip', params: { level: 6 } })).result.toString('hex'),
    );
    await attempt('pool params', async () => (await gzipPool.post(input)).result.toString('hex'));
    await attempt('postMany(a, {})', async () =>
      (await pool.postMany([input], {})).map((r) => r.toString('hex')),
    );
    await attempt('map(a, {})', async () => {
      const results = [];
      for await (const { result } of pool.map([input, input], {}))
        results.push(result.toString('hex'));
      return results;
    });
    await attempt('map(a)', async () => {
      const results = [];
      for await (const { result } of pool.map([input])) results.push(result.toString('hex'));
      return results;
    });
    await attempt('postFile(p, {})', async () =>
      (await pool.postFile(__filename, {})).result.toString('hex'),
    );
    await attempt('createGzip({})', async () =>
      (await output(pool.createGzip({}), input)).toString('hex'),
    );
    await attempt('createGzip({ params })', async () =>
      (await output(pool.createGzip({ params: { level: 6 } }), input)).toString('hex'),
    );
    await attempt('createHash(k, {})', () =>
      pool.createHash('sha256', {}).update(input).digest('hex'),
    );
    await attempt('stats({})', () => {
      const before = pool.stats().runTime.count;
      const after = pool.stats({}).runTime.count;
      return {
        counted: before > 0,
        kept: after === before && pool.stats().runTime.count === after,
      };
    });
    await attempt('collectMetrics(pool, { registry })', () => {
      collectMetrics(pool, { registry });
      return 'registered';
    });
  } finally {
    await Promise.all([pool.close(), gzipPool.close()]);
  }
  return outcomes;
}

test('a polluted Object.prototype is neither refused nor read as options or params', async () => {
  const clean = new client.Registry();
  const expected = await exercise(clean);
  for (const [name, outcome] of Object.entries(expected)) {
    assert.ok(!String(outcome).startsWith('threw'), `${name} without pollution: ${outcome}`);
  }

  let getterRuns = 0;
  const polluted = {
    foo: 1,
    signal: {},
    maxOutputBytes: 1,
    encoding: 'hex',
    reset: true,
    prefix: 'polluted_',
    level: 1,
  };
  const registry = new client.Registry();
  let actual;
  try {
    Object.assign(Object.prototype, polluted);
    // Enumerable, so that a for-in over the options meets it; getter-only, so
    // that reading it is seen.
    Object.defineProperty(Object.prototype, 'kernel', {
      configurable: true,
      enumerable: true,
      get() {
        getterRuns++;
        return 'md5';
      },
    });
    actual = await exercise(registry);
  } finally {
    for (const key of Object.keys(polluted)) delete Object.prototype[key];
    delete Object.prototype.kernel;
  }
  assert.deepEqual(actual, expected);
  assert.equal(getterRuns, 0, 'the inherited kernel getter never ran');
  // The registry's metrics kept their default prefix.
  assert.match(await registry.metrics(), /^# TYPE tidepool_tasks_total counter$/m);
  assert.doesNotMatch(await registry.metrics(), /polluted_/);
});

test('own unknown names are still refused, inherited ones are not options', async () => {
  const pool = new Pool();
  try {
    assert.throws(() => pool.post(Buffer.alloc(1), { kernal: 'md5' }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    assert.throws(() => pool.post(Buffer.alloc(1), { kernel: 'gzip', params: { levle: 1 } }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    assert.throws(() => new Pool({ maxThread: 2 }), { code: 'ERR_INVALID_ARG_VALUE' });
    // An object made from another holds its prototype's names as inherited: not options.
    const { result } = await pool.post(
      Buffer.from('x'),
      Object.create({ kernel: 'md5', kernal: 'md5' }),
    );
    assert.equal(result.length, 32, 'SHA-256, not MD5');
    const gzip = await pool.post(Buffer.from('x'), {
      kernel: 'gzip',
      params: Object.create({ level: 'not a level' }),
    });
    assert.equal(gzip.result[0], 0x1f);
  } finally {
    await pool.close();
  }
});

test('a set of params is never taken for another, whatever its names hold', async () => {
  const pool = new Pool();
  try {
    // Shared handles are kept by their set: a name that spells out another
    // set must still be refused once that set's handle is kept.
    const hiding = { 'level\u0000n9\u0000memLevel': 8 };
    const made = () => pool.createGzip({ params: hiding });
    assert.throws(made, { code: 'ERR_INVALID_ARG_VALUE' });
    const kept = pool.createGzip({ params: { level: 9, memLevel: 8 } });
    kept.resume();
    await output(kept, Buffer.from('x'));
    assert.throws(made, { code: 'ERR_INVALID_ARG_VALUE' });
    // true is not 1, -0 is not 0: each set is checked as it is.
    assert.throws(() => pool.createGzip({ params: { level: true } }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
    const one = pool.createGzip({ params: { level: 1 } });
    await output(one, Buffer.from('x'));
    assert.throws(() => pool.createGzip({ params: { level: true } }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
  } finally {
    await pool.close();
  }
});

test('a replaced Array iterator changes nothing a codec stream delivers', () => {
  // In a process of its own: the iterator is the test runner's too. On
  // Node 20 a derived class's default constructor spreads its arguments
  // through the iterator; the pool's Arrays must not. node:zlib's stream
  // runs beside them as the control.
  const script = `
    const assert = require('node:assert/strict');
    const zlib = require('node:zlib');
    const { Pool } = require('.');
    const dropIn = require('./lib/zlib');
    const body = Buffer.from('tidepool '.repeat(5000));
    const through = (stream) =>
      new Promise((resolve, reject) => {
        const out = [];
        stream.on('data', (chunk) => out.push(chunk));
        stream.on('end', () => resolve(Buffer.concat(out)));
        stream.on('error', reject);
        stream.write(body.subarray(0, 1000));
        stream.end(body.subarray(1000));
      });
    const iterator = Object.getPrototypeOf([][Symbol.iterator]());
    const next = iterator.next;
    (async () => {
      const pool = new Pool();
      let replaced = 0;
      iterator.next = function () {
        const step = next.call(this);
        if (step.done || typeof step.value !== 'number') return step;
        replaced++;
        return { value: 'evil', done: false };
      };
      let outputs;
      try {
        // node:zlib's stream first, as the control.
        outputs = await Promise.all([
          through(zlib.createGzip()),
          through(pool.createGzip()),
          through(dropIn.createGzip()),
        ]);
      } finally {
        iterator.next = next;
      }
      for (const output of outputs) assert.ok(zlib.gunzipSync(output).equals(body));
      await pool.close();
      console.log('held', replaced);
    })();
  `;
  assert.match(runInChild(script), /^held \d+$/);
});

test('a replaced Map.prototype.get or set never hands a stream another set of params', () => {
  // In a process of its own: the test runner uses Maps too. A dependency
  // loaded after tidepool answers every lookup of a params key with the
  // handle of the first set it saw (level 0); node:zlib, the control,
  // refuses level 99 as the pool must.
  const script = `
    const assert = require('node:assert/strict');
    const zlib = require('node:zlib');
    const { Pool } = require('.');
    const dropIn = require('./lib/zlib');
    const body = Buffer.from(require('node:crypto').randomBytes(1 << 15).toString('hex'));
    const size = (stream) =>
      new Promise((resolve, reject) => {
        let bytes = 0;
        stream.on('data', (chunk) => (bytes += chunk.length));
        stream.on('end', () => resolve(bytes));
        stream.on('error', reject);
        stream.end(body);
      });
    (async () => {
      const pool = new Pool();
      const nine = await size(dropIn.createGzip({ level: 9 }));
      const { get, set } = Map.prototype;
      let first;
      let asked = 0;
      Map.prototype.set = function (key, value) {
        if (typeof key === 'string' && key.includes('\\0')) first ??= value;
        return set.call(this, key, value);
      };
      Map.prototype.get = function (key) {
        if (typeof key === 'string' && key.includes('\\0')) {
          asked++;
          return first;
        }
        return get.call(this, key);
      };
      try {
        await size(dropIn.createGzip({ level: 0 }));
        assert.equal(await size(dropIn.createGzip({ level: 9 })), nine);
        assert.throws(() => zlib.createGzip({ level: 99 }), { code: 'ERR_OUT_OF_RANGE' });
        assert.throws(() => pool.createGzip({ params: { level: 99 } }), {
          code: 'ERR_OUT_OF_RANGE',
        });
        assert.throws(() => dropIn.createGzip({ level: 99 }), { code: 'ERR_OUT_OF_RANGE' });
      } finally {
        Map.prototype.get = get;
        Map.prototype.set = set;
      }
      await pool.close();
      await dropIn.pool.close();
      console.log('asked', asked);
    })();
  `;
  assert.equal(runInChild(script), 'asked 0');
});
