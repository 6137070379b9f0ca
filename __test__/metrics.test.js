'use strict';
// require('@tidepool-rs/pool/metrics'): a pool's numbers in a prom-client registry,
// scraped over HTTP and parsed as Prometheus' text format.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const client = require('prom-client');
const { Pool, micros } = require('..');
const { collectMetrics } = require('@tidepool-rs/pool/metrics');
const { NAMES, parse, value } = require('./prometheus-text');
const { waitFor, poolState, holdThread, everySettled } = require('./wait');

/** An HTTP server on loopback serving `registry` at /metrics; `scrape()` fetches and parses it. */
async function serve(registry) {
  const server = http.createServer(async (req, res) => {
    res.setHeader('content-type', registry.contentType);
    res.end(await registry.metrics());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/metrics`;
  return {
    scrape: async () => parse(await (await fetch(url)).text()),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

test('every metric is there, with its type, and the histograms count what stats() counts', async () => {
  // An extra thread the 200 posts start stays until the pool closes: one
  // that retired between the scrape and stats() would make them differ.
  const pool = new Pool({ maxThreads: 2, idleTimeoutMs: 60_000 });
  const registry = new client.Registry();
  collectMetrics(pool, { registry });
  const server = await serve(registry);
  try {
    await Promise.all(Array.from({ length: 200 }, (_, i) => pool.post(Buffer.alloc(64 + i))));
    await assert.rejects(pool.post(Buffer.from('not gzip'), { kernel: 'gunzip' }), {
      code: 'Z_DATA_ERROR',
    });
    const ac = new AbortController();
    const aborted = pool.post(micros(200_000), { kernel: 'sleep', signal: ac.signal });
    ac.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    await assert.rejects(pool.post(micros(200_000), { kernel: 'sleep', timeoutMs: 10 }), {
      code: 'ERR_TIDEPOOL_TIMEOUT',
    });
    const m = await server.scrape();
    for (const [name, type] of Object.entries(NAMES)) assert.equal(m.types[name], type, name);
    const stats = pool.stats();
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'completed' }), stats.completed);
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'failed', code: 'Z_DATA_ERROR' }), 1);
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'aborted' }), 1);
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'timed_out' }), 1);
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'dropped' }), 0);
    const failed = m.samples.filter(
      (s) => s.name === 'tidepool_tasks_total' && s.labels.outcome !== 'completed',
    );
    assert.equal(
      failed.reduce((sum, s) => sum + s.value, 0),
      stats.failed,
    );
    assert.equal(value(m, 'tidepool_threads'), stats.threads);
    assert.equal(value(m, 'tidepool_thread_spawns_total', { reason: 'core' }), 1);
    for (const [name, latency] of [
      ['tidepool_task_wait_seconds', stats.waitTime],
      ['tidepool_task_run_seconds', stats.runTime],
    ]) {
      const count = value(m, `${name}_count`);
      assert.equal(count, latency.count, name);
      assert.equal(value(m, `${name}_bucket`, { le: '+Inf' }), count);
      const buckets = m.samples.filter((s) => s.name === `${name}_bucket`);
      for (let i = 1; i < buckets.length; i++)
        assert.ok(buckets[i].value >= buckets[i - 1].value, `${name} buckets grow`);
      assert.ok(value(m, `${name}_sum`) > 0);
    }
    // The 10 ms timeout ran for at least 10 ms: the run histogram puts it past 4 ms.
    const run = (le) => value(m, 'tidepool_task_run_seconds_bucket', { le });
    assert.ok(run('+Inf') - run('0.004194303') >= 1);
  } finally {
    await server.close();
    await pool.close();
  }
});

test('the queue-age gauge rises under a step and falls to 0; counters only grow, whatever stats({ reset }) does', async () => {
  const pool = new Pool({ minThreads: 1, maxThreads: 1 });
  const registry = new client.Registry();
  collectMetrics(pool, { registry });
  const server = await serve(registry);
  let hold;
  try {
    // The step: a first task that holds the thread until the test has
    // scraped, and 11 queued behind it.
    hold = await holdThread(pool);
    const step = Array.from({ length: 11 }, () => pool.post(micros(50_000), { kernel: 'sleep' }));
    await waitFor(() => pool.stats().oldestQueuedMs >= 30, {
      what: 'the oldest queued task to be 30 ms old',
      state: poolState(pool),
    });
    const during = await server.scrape();
    assert.ok(value(during, 'tidepool_queue_length') >= 1);
    assert.ok(
      value(during, 'tidepool_queue_oldest_age_seconds') >= 0.03,
      `${value(during, 'tidepool_queue_oldest_age_seconds')} s`,
    );
    hold.release();
    await Promise.all([hold.settled, ...step]);
    pool.stats({ reset: true });
    const after = await server.scrape();
    assert.equal(value(after, 'tidepool_queue_oldest_age_seconds'), 0);
    assert.equal(value(after, 'tidepool_queue_length'), 0);
    for (const s of during.samples) {
      if (!/_total$|_bucket$|_count$|_sum$/.test(s.name)) continue;
      const later = value(after, s.name, s.labels);
      assert.ok(
        later >= s.value,
        `${s.name} ${JSON.stringify(s.labels)} went from ${s.value} to ${later}`,
      );
    }
    assert.equal(
      value(after, 'tidepool_task_run_seconds_count'),
      12,
      'the reset left the histograms whole',
    );
    assert.equal(pool.stats().runTime.count, 0, 'stats() starts afresh');
  } finally {
    hold?.release();
    await server.close();
    await pool.close();
  }
});

test('several pools in one registry are told apart by labels; bad options throw', async () => {
  const registry = new client.Registry();
  const a = new Pool();
  const b = new Pool();
  try {
    collectMetrics(a, { registry, labels: { pool: 'a' } });
    const stopB = collectMetrics(b, { registry, labels: { pool: 'b' } });
    await a.post(Buffer.from('a'));
    let m = parse(await registry.metrics());
    assert.equal(value(m, 'tidepool_tasks_total', { pool: 'a', outcome: 'completed' }), 1);
    assert.equal(value(m, 'tidepool_tasks_total', { pool: 'b', outcome: 'completed' }), 0);
    assert.throws(() => collectMetrics(b, { registry, labels: { pool: 'a' } }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /apart/,
    });
    stopB();
    m = parse(await registry.metrics());
    assert.equal(
      m.samples.some((s) => s.labels.pool === 'b'),
      false,
    );
    // One metric's series share their label names: a pool without labels,
    // or with other names, beside labelled ones is refused, either way round.
    const names = { code: 'ERR_INVALID_ARG_VALUE', message: /label names of the other pools/ };
    assert.throws(() => collectMetrics(b, { registry }), names);
    assert.throws(() => collectMetrics(b, { registry, labels: { pool: 'b', zone: 'z' } }), names);
    const unlabelled = new client.Registry();
    collectMetrics(a, { registry: unlabelled });
    assert.throws(() => collectMetrics(b, { registry: unlabelled, labels: { pool: 'b' } }), names);
    assert.equal(
      parse(await unlabelled.metrics()).samples.some((s) => s.labels.pool === 'b'),
      false,
    );
    // Another prefix is another set of metrics.
    collectMetrics(b, { registry, prefix: 'other_' });
    assert.equal(parse(await registry.metrics()).types.other_threads, 'gauge');

    assert.throws(() => collectMetrics({}), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => collectMetrics(a, { registy: registry }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /registry/,
    });
    assert.throws(() => collectMetrics(a, { registry: {} }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => collectMetrics(a, { registry, prefix: '9bad' }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    assert.throws(() => collectMetrics(a, { registry, labels: { le: 'x' } }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    assert.throws(() => collectMetrics(a, { registry, labels: { pool: 1 } }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
    // The default registry, when none is given.
    const stop = collectMetrics(a, { labels: { pool: 'default' } });
    assert.equal(parse(await client.register.metrics()).types.tidepool_threads, 'gauge');
    stop();
  } finally {
    await a.close();
    await b.close();
  }
});

test('OpenMetrics names, batch cancellations, a closed pool replaced, and what is not a pool', async () => {
  const registry = new client.Registry();
  registry.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE);
  const old = new Pool();
  collectMetrics(old, { registry, labels: { pool: 'p' } });
  try {
    const text = await registry.metrics();
    assert.match(text, /^# TYPE tidepool_tasks counter$/m);
    assert.match(text, /^tidepool_tasks_total\{pool="p",outcome="completed"\} 0$/m);
    assert.doesNotMatch(text, /_total_total/);
    // A postMany aborted mid-flight: every task counts as aborted, none as an unknown failure.
    const ac = new AbortController();
    const batch = old.postMany(
      Array.from({ length: 5 }, () => micros(100_000)),
      { kernel: 'sleep', signal: ac.signal },
    );
    ac.abort();
    await assert.rejects(batch, { name: 'AbortError' });
    // (The task that was running settles once its kernel stopped.)
    await waitFor(() => old.stats().pending === 0, {
      what: 'the running task to settle',
      state: poolState(old),
    });
    const after = await registry.metrics();
    assert.match(after, /^tidepool_tasks_total\{pool="p",outcome="aborted"\} 5$/m);
    assert.doesNotMatch(after, /outcome="failed"/);
    // An empty label would be the same series as none.
    assert.throws(() => collectMetrics(old, { registry, labels: { pool: '' } }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    // The same labels for a second pool: refused while the first is open, taken once it closed.
    const next = new Pool();
    assert.throws(() => collectMetrics(next, { registry, labels: { pool: 'p' } }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    await old.close();
    collectMetrics(next, { registry, labels: { pool: 'p' } });
    await next.post(Buffer.from('x'));
    assert.match(
      await registry.metrics(),
      /^tidepool_tasks_total\{pool="p",outcome="completed"\} 1$/m,
    );
    await next.close();
    assert.throws(() => collectMetrics(Object.create(Pool.prototype), { registry }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
  } finally {
    await old.close();
  }
});

test("a map() source's own error codes count as one `other` series; tidepool's and Node's keep theirs", async () => {
  const pool = new Pool({ maxThreads: 1 });
  const registry = new client.Registry();
  collectMetrics(pool, { registry });
  /** A source that yields one task (in flight when it throws), then throws `error`. */
  async function* failing(error) {
    yield micros(1_000_000);
    throw error;
  }
  const codeOf = (code) => Object.assign(new Error('the source failed'), { code });
  try {
    const distinct = 300;
    for (let i = 0; i < distinct; i++) {
      const error = codeOf(`ERR_MY_SOURCE_${i}`);
      await assert.rejects(pool.map(failing(error), { kernel: 'sleep' }).next(), error);
    }
    // A code Node gives (a source reading files) and one without a code.
    await assert.rejects(pool.map(failing(codeOf('ENOENT')), { kernel: 'sleep' }).next(), {
      code: 'ENOENT',
    });
    await assert.rejects(pool.map(failing(new Error('no code')), { kernel: 'sleep' }).next(), {
      message: 'no code',
    });
    // A kernel's failure.
    await assert.rejects(pool.post(Buffer.from('not gzip'), { kernel: 'gunzip' }), {
      code: 'Z_DATA_ERROR',
    });
    // The cancelled sleep tasks settle once their kernel stopped (within a millisecond each).
    const deadline = Date.now() + 10_000;
    while (pool.stats().pending !== 0) {
      assert.ok(Date.now() < deadline, 'every task settled');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const m = parse(await registry.metrics());
    const failed = m.samples.filter(
      (s) => s.name === 'tidepool_tasks_total' && s.labels.outcome === 'failed',
    );
    assert.deepEqual(failed.map((s) => s.labels.code).sort(), ['ENOENT', 'Z_DATA_ERROR', 'other']);
    assert.equal(
      value(m, 'tidepool_tasks_total', { outcome: 'failed', code: 'other' }),
      distinct + 1,
    );
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'failed', code: 'ENOENT' }), 1);
    assert.equal(
      failed.reduce((sum, s) => sum + s.value, 0),
      pool.stats().failed,
    );
  } finally {
    await pool.close();
  }
});

test('streams destroyed with work queued or running count it as aborted, not as failures', async () => {
  // What a client's disconnect does to a compressed response: the
  // stream is destroyed (with an error or without) while its chunk
  // waits for a thread. No node:zlib control: it has no metrics.
  const pool = new Pool({ maxThreads: 1 });
  const registry = new client.Registry();
  collectMetrics(pool, { registry });
  try {
    const hold = await holdThread(pool);
    const streams = [pool.createGzip(), pool.createGzip(), pool.createBrotliCompress()];
    for (const stream of streams) {
      stream.on('error', () => {});
      stream.write(Buffer.alloc(100_000, 7));
    }
    await waitFor(() => pool.stats().queued === streams.length, {
      what: 'the three chunks to be queued',
      state: poolState(pool),
    });
    streams[0].destroy();
    streams[1].destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    streams[2].close();
    hold.release();
    await hold.settled;
    await everySettled(pool);
    const m = parse(await registry.metrics());
    const failed = m.samples.filter(
      (s) => s.name === 'tidepool_tasks_total' && s.labels.outcome === 'failed',
    );
    assert.deepEqual(failed, []);
    // The three chunks, and the task that held the thread.
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'aborted' }), streams.length + 1);
  } finally {
    await pool.close();
  }
});

test("a destroyed stream's queued chunk a thread takes before the end of the job does not run", async () => {
  // The chunk leaves the queue at the end of the job (with those of every
  // stream destroyed in it); a thread may take it first. Here it must: this
  // job holds the event loop until the thread has taken the chunk and is
  // idle again. No node:zlib control: it has no metrics.
  const pool = new Pool({ maxThreads: 1 });
  const registry = new client.Registry();
  collectMetrics(pool, { registry });
  try {
    const hold = await holdThread(pool);
    const stream = pool.createGzip();
    stream.on('error', () => {});
    stream.write(Buffer.alloc(100_000, 7));
    await waitFor(() => pool.stats().queued === 1, {
      what: 'the chunk to be queued',
      state: poolState(pool),
    });
    stream.destroy();
    hold.release();
    const deadline = Date.now() + 10_000;
    for (let s = pool.stats(); s.queued !== 0 || s.busyThreads !== 0; s = pool.stats()) {
      if (Date.now() > deadline)
        assert.fail(`the thread never ran the chunk (${poolState(pool)()})`);
    }
    await hold.settled;
    const stats = await everySettled(pool);
    assert.equal(stats.completed, 0);
    const m = parse(await registry.metrics());
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'aborted' }), 2);
  } finally {
    await pool.close();
  }
});
