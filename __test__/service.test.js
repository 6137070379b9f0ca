'use strict';
// examples/service, run as its own process on loopback: its routes, then
// /metrics scraped through a load step (every metric there, counters that
// only grow, the queue-age gauge rising and falling back to 0, histogram
// counts equal to stats()), then SIGTERM with requests in flight.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const zlib = require('node:zlib');
const { NAMES, parse, value, series } = require('./prometheus-text');
const { ROOT, projectWithTidepool } = require('./project');
const { waitFor } = require('./wait');

const SERVICE = path.join(ROOT, 'examples', 'service');

/** A node_modules where `tidepool` is this repository (the service's package.json names it by path). */
const modules = () => projectWithTidepool('tidepool-service-');

/** Starts server.js (inside the cgroup directory `cgroup`, if given); resolves once it says where it listens. */
async function start(t, env = {}, cgroup = undefined) {
  const dir = modules();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const server = path.join(SERVICE, 'server.js');
  // A shell that moves itself into the cgroup, then becomes node.
  const [command, args] =
    cgroup === undefined
      ? [process.execPath, [server]]
      : [
          'sh',
          [
            '-c',
            'echo $$ > "$1/cgroup.procs" && exec "$2" "$3"',
            'sh',
            cgroup,
            process.execPath,
            server,
          ],
        ];
  const child = spawn(command, args, {
    env: {
      ...process.env,
      NODE_PATH: path.join(dir, 'node_modules'),
      PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(() => child.kill('SIGKILL'));
  const lines = [];
  const listening = new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(JSON.parse(line));
      if (lines.at(-1).msg === 'listening') resolve(lines.at(-1));
    });
    exited.then(({ code }) => reject(new Error(`server.js exited with ${code} before listening`)));
  });
  const { port, metricsPort, maxThreads } = await listening;
  const base = `http://127.0.0.1:${port}`;
  const internal = `http://127.0.0.1:${metricsPort}`;
  return {
    child,
    exited,
    lines,
    maxThreads,
    port,
    url: (route) => `${base}${route}`,
    internal: (route) => `${internal}${route}`,
    scrape: async () => parse(await (await fetch(`${internal}/metrics`)).text()),
    stats: async () => (await fetch(`${internal}/stats`)).json(),
  };
}

/** Polls `check` (async, returns truthy when done; a throw counts as not yet) every 20 ms for at most `ms`. */
const until = (check, ms, what) =>
  waitFor(() => check().catch(() => false), { timeoutMs: ms, what, interval: 20 });

const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');

/**
 * A POST whose Content-Length says `length` (none: chunked) and whose body the caller
 * sends (or not): `req`, and `response`, a promise of { status, headers, body }.
 */
function upload(url, length, headers = {}) {
  const declared = length === undefined ? {} : { 'content-length': length };
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: { ...declared, ...headers },
  });
  const response = new Promise((resolve, reject) => {
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  return { req, response };
}

/**
 * What a raw HTTP/1.1 exchange on a new socket reads back: `text` is sent,
 * then `body` once the server asks for it (an interim 1xx response). Done
 * once a final response is whole (its Content-Length, its last chunk, or
 * the socket's end), or after a hang guard of 30 s (then what came).
 */
function raw(port, text, { body } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    socket.setEncoding('latin1'); // a character a byte: lengths are Content-Length's
    let got = '';
    let asked = false;
    const done = () => {
      clearTimeout(guard);
      socket.destroy();
      resolve(got);
    };
    const guard = setTimeout(done, 30_000);
    /** Whether `got` ends a final response (answering an interim one on the way). */
    const whole = () => {
      for (let at = 0; ;) {
        const end = got.indexOf('\r\n\r\n', at);
        if (end < 0) return false;
        const head = got.slice(at, end);
        at = end + 4;
        if (/^HTTP\/1\.[01] 1\d\d /.test(head)) {
          if (body !== undefined && !asked) socket.write(body);
          asked = true;
          continue;
        }
        const length = /\r\ncontent-length: *(\d+)/i.exec(head);
        if (length !== null) return got.length - at >= Number(length[1]);
        if (/\r\ntransfer-encoding: *chunked/i.test(head)) return got.endsWith('\r\n0\r\n\r\n');
        return false; // until the socket ends
      }
    };
    socket.on('data', (d) => {
      got += d;
      if (whole()) done();
    });
    socket.on('error', reject);
    socket.on('close', done);
  });
}

test(
  'the example service: its routes, and /metrics through a load step',
  { timeout: 120_000 },
  async (t) => {
    const service = await start(t, { TIDEPOOL_MAX_THREADS: '2', SHUTDOWN_DELAY_MS: '2000' });
    assert.equal(service.maxThreads, 2);
    const scrapes = [];
    const scrape = async () => {
      const m = await service.scrape();
      scrapes.push(m);
      return m;
    };

    // Idle: every metric there, with its type; one core thread, no queue.
    let m = await scrape();
    for (const [name, type] of Object.entries(NAMES)) assert.equal(m.types[name], type, name);
    assert.equal(
      m.types.process_cpu_seconds_total,
      'counter',
      "prom-client's default metrics are there too",
    );
    assert.equal(value(m, 'tidepool_threads'), 1);
    assert.equal(value(m, 'tidepool_queue_oldest_age_seconds'), 0);

    // The routes.
    let ok = 0;
    const body = crypto.randomBytes(1 << 20);
    let res = await fetch(service.url('/sha256'), { method: 'POST', body });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), `${sha256(body)}\n`);
    ok++;
    res = await fetch(service.url('/gzip'), { method: 'POST', body });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/gzip');
    assert.deepEqual(zlib.gunzipSync(Buffer.from(await res.arrayBuffer())), body);
    ok++;
    // A body without Content-Length (chunked).
    const chunked = upload(service.url('/sha256?x=1'), undefined, {
      'transfer-encoding': 'chunked',
    });
    chunked.req.end(body);
    assert.deepEqual(await chunked.response.then((r) => [r.status, r.body]), [
      200,
      `${sha256(body)}\n`,
    ]);
    ok++;
    res = await fetch(service.url('/sha256'));
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    res = await fetch(service.url('/healthz'), { method: 'POST', body: 'x' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
    assert.equal((await fetch(service.url('/nowhere'))).status, 404);
    assert.equal(
      (await fetch(service.url('/metrics'))).status,
      404,
      '/metrics is not on the public port',
    );
    assert.equal(
      (await fetch(service.internal('/sha256'), { method: 'POST', body: 'x' })).status,
      404,
    );
    assert.equal((await fetch(service.url('/healthz'))).status, 200);
    assert.equal((await fetch(service.url('/readyz'))).status, 200);
    // Targets that are not URLs: 404, not 500.
    for (const target of ['//[', '//%zz', 'http://[/', '//a:99999/']) {
      assert.match(
        await raw(service.port, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`),
        /^HTTP\/1\.1 404 /,
        target,
      );
    }
    // Too large: 413 without reading the body, and without a 100 Continue.
    let big = upload(service.url('/sha256'), 16 * 1024 * 1024 + 1);
    assert.equal((await big.response).status, 413);
    big.req.destroy();
    const expect = (length) =>
      `POST /sha256 HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    assert.match(await raw(service.port, expect(99_999_999_999)), /^HTTP\/1\.1 413 /);
    // Asked for (100 Continue first), and waited for: the answer is its digest.
    const continued = (got, what) => {
      assert.match(got, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, what);
      assert.ok(got.endsWith(`${sha256('hello')}\n`), `${what}: ${got}`);
      ok++;
    };
    continued(
      await raw(service.port, expect(5), { body: 'hello' }),
      'a body that fits is asked for',
    );
    const expectMore =
      'POST /sha256 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue, foo\r\n\r\n';
    continued(await raw(service.port, expectMore, { body: 'hello' }), 'as Node reads Expect');
    // HTTP/1.0 has no 100 Continue: its client sends the body at once.
    const old = await raw(
      service.port,
      'POST /sha256 HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello',
    );
    assert.match(old, /^HTTP\/1\.1 200 /);
    assert.ok(old.endsWith(`${sha256('hello')}\n`));
    ok++;

    // A load step: 32 gzip requests of 2 MiB at once, 2 threads. /metrics is
    // scraped every 20 ms meanwhile, and after, until the pool is idle.
    const step = crypto.randomBytes(2 << 20);
    let loading = true;
    const sampler = (async () => {
      while (loading) {
        await scrape();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const responses = await Promise.all(
      Array.from({ length: 32 }, async () => {
        const r = await fetch(service.url('/gzip'), { method: 'POST', body: step });
        return [r.status, Buffer.from(await r.arrayBuffer())];
      }),
    );
    loading = false;
    await sampler;
    for (const [status, gz] of responses) {
      assert.equal(status, 200);
      assert.ok(zlib.gunzipSync(gz).equals(step));
    }
    ok += responses.length;
    const peak = (name) => Math.max(...scrapes.map((s) => value(s, name)));
    t.diagnostic(
      `${scrapes.length} scrapes; queue age peaked at ${peak('tidepool_queue_oldest_age_seconds')} s, queue length at ${peak('tidepool_queue_length')}`,
    );
    assert.ok(
      peak('tidepool_queue_oldest_age_seconds') > 0.02,
      `the queue-age gauge rose: peak ${peak('tidepool_queue_oldest_age_seconds')} s`,
    );
    assert.ok(peak('tidepool_queue_length') >= 2, 'tasks queued');
    assert.equal(peak('tidepool_threads'), 2, 'the pool grew to maxThreads');
    assert.equal(peak('tidepool_threads_busy'), 2);

    // Idle again: the gauge falls to 0, and the extra thread retires.
    await until(
      async () => {
        m = await scrape();
        return (
          value(m, 'tidepool_queue_oldest_age_seconds') === 0 &&
          value(m, 'tidepool_queue_length') === 0 &&
          value(m, 'tidepool_threads_busy') === 0
        );
      },
      10_000,
      'an empty queue',
    );
    await until(
      async () => value((m = await scrape()), 'tidepool_threads') === 1,
      10_000,
      'the extra thread to retire',
    );
    assert.ok(value(m, 'tidepool_thread_retires_total') >= 1);
    const extras = m.samples.filter(
      (s) => s.name === 'tidepool_thread_spawns_total' && s.labels.reason !== 'core',
    );
    assert.ok(extras.reduce((sum, s) => sum + s.value, 0) >= 1, 'an extra thread was started');

    // Counters, histogram buckets, counts and sums never went down, scrape to scrape.
    const grows = (types, name) =>
      types[name] === 'counter' || types[name.replace(/_(bucket|count|sum)$/, '')] === 'histogram';
    const last = new Map();
    for (const [i, scraped] of scrapes.entries()) {
      for (const sample of scraped.samples.filter((s) => grows(scraped.types, s.name))) {
        const key = series(sample);
        if (last.has(key))
          assert.ok(
            sample.value >= last.get(key),
            `${key} went from ${last.get(key)} to ${sample.value} at scrape ${i}`,
          );
        last.set(key, sample.value);
      }
    }
    assert.ok(scrapes.length >= 5, `${scrapes.length} scrapes`);
    assert.ok(
      [...last.keys()].filter((key) => key.startsWith('tidepool_')).length >= 40,
      "the pool's counters and buckets were among them",
    );

    // The histograms count what stats() counts; every request was one completed task.
    const stats = await service.stats();
    m = await scrape();
    assert.equal(value(m, 'tidepool_task_wait_seconds_count'), stats.waitTime.count);
    assert.equal(value(m, 'tidepool_task_run_seconds_count'), stats.runTime.count);
    assert.equal(
      value(m, 'tidepool_task_wait_seconds_bucket', { le: '+Inf' }),
      stats.waitTime.count,
    );
    assert.equal(stats.completed, ok);
    assert.equal(value(m, 'tidepool_tasks_total', { outcome: 'completed' }), ok);
    assert.equal(stats.waitTime.count, ok);

    // SIGTERM with an upload half sent: readiness goes, the upload is still
    // answered (with `connection: close`), and the process exits 0.
    const half = upload(service.url('/sha256'), body.length);
    // Sent (the server reads it within the 2 s it still accepts for).
    await new Promise((resolve) => half.req.write(body.subarray(0, body.length / 2), resolve));
    service.child.kill('SIGTERM');
    await until(
      async () => (await fetch(service.url('/readyz'))).status === 503,
      5_000,
      '/readyz to fail',
    );
    half.req.end(body.subarray(body.length / 2));
    const answered = await half.response;
    assert.deepEqual(
      [answered.status, answered.body, answered.headers.connection],
      [200, `${sha256(body)}\n`, 'close'],
    );
    assert.deepEqual(await service.exited, { code: 0, signal: null });
    assert.deepEqual(
      service.lines.map((l) => l.msg),
      ['listening', 'shutting down'],
    );
  },
);

test(
  'the example service bounds the bodies it holds at once: past its budget, 503 and Retry-After',
  { timeout: 60_000 },
  async (t) => {
    const service = await start(t, { BODY_BUDGET_MIB: '32', SHUTDOWN_DELAY_MS: '0' });
    const held = async () => value(await service.scrape(), 'service_request_bodies_held_bytes');
    assert.equal(value(await service.scrape(), 'service_request_bodies_budget_bytes'), 32 << 20);
    // Bodies count as they arrive, twice for gzip (its output can be as
    // large): all but the last byte of a 16 MiB gzip body hold the budget.
    const first = upload(service.url('/gzip'), 16 << 20, { expect: '100-continue' });
    first.response.catch(() => {});
    await new Promise((resolve) => first.req.once('continue', resolve));
    assert.equal(await held(), 0, 'nothing is held before the bytes come');
    first.req.write(Buffer.alloc((16 << 20) - 1));
    await until(async () => (await held()) === 2 * ((16 << 20) - 1), 10_000, 'the body to arrive');
    const refused = await fetch(service.url('/sha256'), { method: 'POST', body: 'x'.repeat(1024) });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    // Chunked bodies count chunk by chunk.
    const chunked = upload(service.url('/sha256'), undefined, { 'transfer-encoding': 'chunked' });
    chunked.req.end('hello');
    assert.equal((await chunked.response).status, 503);
    // A declared length that cannot fit is refused before the body is asked for.
    const expect = (path, length) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    assert.match(await raw(service.port, expect('/sha256', 1024)), /^HTTP\/1\.1 503 /);
    // The first client goes away: its share comes back.
    first.req.destroy();
    await until(async () => (await held()) === 0, 5_000, 'the budget to come back');
    assert.equal(
      (await fetch(service.url('/sha256'), { method: 'POST', body: 'hello' })).status,
      200,
    );
    // Pipelined: a response queued behind another never closes when the
    // connection dies first; the second body's share must come back anyway.
    const pipelined = net.connect(service.port, '127.0.0.1', () => {
      const one = Buffer.alloc(1 << 20);
      pipelined.write(
        Buffer.concat([
          Buffer.from(`POST /sha256 HTTP/1.1\r\nHost: x\r\nContent-Length: ${one.length}\r\n\r\n`),
          one,
          Buffer.from(`POST /gzip HTTP/1.1\r\nHost: x\r\nContent-Length: ${15 << 20}\r\n\r\nabc`),
        ]),
      );
    });
    pipelined.on('error', () => {});
    await until(
      async () => (await held()) === 6,
      5_000,
      "the second body's three bytes to be held",
    );
    pipelined.destroy();
    await until(async () => (await held()) === 0, 5_000, 'the whole budget to be free');
    service.child.kill('SIGTERM');
    assert.deepEqual(await service.exited, { code: 0, signal: null });
  },
);

test(
  'the example service drains within DRAIN_TIMEOUT_MS, whatever its clients do',
  { timeout: 60_000 },
  async (t) => {
    const service = await start(t, { SHUTDOWN_DELAY_MS: '2000', DRAIN_TIMEOUT_MS: '500' });
    // A client that sent half its headers, and one that sends a body slowly.
    const headers = net.connect(service.port, '127.0.0.1', () =>
      headers.write('POST /sha256 HTTP/1.1\r\nHost: x\r\n'),
    );
    headers.on('error', () => {});
    const slow = upload(service.url('/sha256'), 1000);
    slow.req.write('x');
    slow.response.catch(() => {});
    // A keep-alive client: while draining, its response says `connection: close`.
    const agent = new http.Agent({ keepAlive: true });
    const get = () =>
      new Promise((resolve, reject) => {
        http
          .get(service.url('/healthz'), { agent }, (res) => {
            res.resume();
            resolve(res.headers.connection);
          })
          .on('error', reject);
      });
    assert.equal(await get(), 'keep-alive');
    const started = Date.now();
    service.child.kill('SIGTERM');
    await until(async () => (await get()) === 'close', 2_000, 'a closing response');
    // It still serves, during the delay.
    assert.equal((await fetch(service.url('/readyz'))).status, 503);
    service.child.kill('SIGTERM'); // a second signal changes nothing
    assert.deepEqual(await service.exited, { code: 0, signal: null });
    const took = Date.now() - started;
    assert.ok(
      took >= 2_000 && took < 10_000,
      `exited ${took} ms after SIGTERM (delay 2000 + drain 500)`,
    );
    assert.deepEqual(
      service.lines.map((l) => l.msg),
      [
        'listening',
        'shutting down',
        'already shutting down',
        'drain timeout: closing the connections left',
      ],
    );
    agent.destroy();
    headers.destroy();
  },
);

/**
 * A new cgroup limited to `cpus` CPUs (as a container's limits.cpu makes
 * one): its directory, or why none can be made here. cgroup v1's cpu
 * controller, or v2's when the root delegates it.
 */
function cpuLimitedCgroup(t, cpus) {
  const name = `tidepool-test-${process.pid}`;
  const v1 = '/sys/fs/cgroup/cpu';
  const v2 = '/sys/fs/cgroup';
  const read = (file) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  let dir;
  let limit;
  if (fs.existsSync(path.join(v1, 'cpu.cfs_quota_us'))) {
    dir = path.join(v1, name);
    limit = () => {
      fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), '100000');
      fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(cpus * 100000));
    };
  } else if (read(path.join(v2, 'cgroup.subtree_control')).split(/\s+/).includes('cpu')) {
    dir = path.join(v2, name);
    limit = () => fs.writeFileSync(path.join(dir, 'cpu.max'), `${cpus * 100000} 100000`);
  } else {
    return { why: 'no cgroup cpu controller to write to' };
  }
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    return { why: `cannot make a cgroup: ${err.code}` };
  }
  t.after(() => fs.rmdirSync(dir));
  limit();
  return { dir };
}

test(
  "the service's pool follows the container's CPU limit (the cgroup quota), as deploy/kubernetes/ relies on",
  { timeout: 60_000 },
  async (t) => {
    if (os.availableParallelism() < 2)
      return t.skip('needs 2 CPUs or more, to see a quota of 1 make a difference');
    const { dir, why } = cpuLimitedCgroup(t, 1);
    if (why) return t.skip(why);
    const service = await start(t, { SHUTDOWN_DELAY_MS: '0' }, dir);
    assert.equal(service.maxThreads, 1, 'one CPU of quota: one thread at most');
    const m = await service.scrape();
    assert.equal(value(m, 'tidepool_threads'), 1);
    service.child.kill('SIGTERM');
    assert.deepEqual(await service.exited, { code: 0, signal: null });
  },
);

test('the example service refuses a bad setting at start', { timeout: 30_000 }, async (t) => {
  const dir = modules();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const child = spawn(process.execPath, [path.join(SERVICE, 'server.js')], {
    env: {
      ...process.env,
      NODE_PATH: path.join(dir, 'node_modules'),
      PORT: '0',
      TIDEPOOL_MAX_THREADS: '2.5',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 2);
  assert.match(stderr, /TIDEPOOL_MAX_THREADS must be a whole number ≥ 1, not "2.5"/);
});

test("the example's Dockerfile names files that exist and the version being packed", () => {
  const dockerfile = fs.readFileSync(path.join(SERVICE, 'Dockerfile'), 'utf8');
  const { name, version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  // npm pack names a scoped package's tarball without the @, the / a dash.
  const tarball = `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
  assert.ok(
    dockerfile.includes(`dependencies.${name}=file:/tmp/${tarball}`),
    'the tarball npm pack makes',
  );
  const copies = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
    m[1].split(' '),
  );
  assert.ok(copies.length >= 3);
  for (const source of copies) assert.ok(fs.existsSync(path.join(ROOT, source)), `COPY ${source}`);
  const ignored = fs
    .readFileSync(path.join(SERVICE, 'Dockerfile.dockerignore'), 'utf8')
    .split('\n');
  for (const heavy of ['target', 'node_modules', '.git'])
    assert.ok(ignored.includes(heavy), `${heavy} is kept out of the build context`);
  const service = JSON.parse(fs.readFileSync(path.join(SERVICE, 'package.json'), 'utf8'));
  assert.equal(service.dependencies[name], 'file:../..');
  assert.equal(
    service.dependencies['prom-client'],
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies[
      'prom-client'
    ],
  );
});
