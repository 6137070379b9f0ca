'use strict';
// The HTTP section of `npm run bench`: an express + compression server
// sending a 64 KiB JSON body, gzip-encoded (or deflate, or brotli: each an
// encoding the middleware negotiates), to a loopback load generator in
// a process of its own (bench/workers/http-load.js: 32 connections back to
// back) while a /health probe in a third process asks every 10 ms, once
// with node:zlib as it is and once behind @tidepool-rs/pool/zlib's
// install(), the app's code the same. All three share this machine's cores.
// The server's process also reads a small file in a loop meanwhile
// (fs.promises.readFile, on libuv's pool, like node:zlib's async work) and
// times it.

const fs = require('node:fs');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { quantile } = require('./stats');
const { threadGroupMicros, groupMicrosSince } = require('./thread-cpu');

const ROOT = path.join(__dirname, '..');
const CONNECTIONS = 32;
const WARMUP_MS = 1000;
const DURATION_MS = 4000;

/** A JSON body of about 64 KiB: records as an API would send them. */
function body() {
  const records = [];
  let size = 0;
  for (let i = 0; size < 64 * 1024 - 200; i++) {
    const record = {
      id: i,
      user: `user-${i % 313}`,
      email: `user-${i % 313}@example.com`,
      tags: ['red', 'blue', String(i % 17)],
      score: (i * 7919) % 1000,
      active: i % 3 === 0,
    };
    records.push(record);
    size += JSON.stringify(record).length + 1;
  }
  return JSON.stringify(records);
}

/**
 * Serves /data and /health with express + compression (node:zlib, or
 * node:zlib behind install() when `routed`), loads it from another
 * process asking for `encoding`, and probes readFile meanwhile.
 */
async function serve(routed, encoding = 'gzip') {
  let tidepoolZlib;
  if (routed) {
    tidepoolZlib = require(path.join(ROOT, 'lib', 'zlib'));
    tidepoolZlib.install();
  }
  const express = require('express');
  const compression = require('compression');
  const app = express();
  const data = body();
  app.use(compression());
  let served = 0;
  app.get('/data', (_req, res) => {
    served++;
    res.type('json').send(data);
  });
  app.get('/health', (_req, res) => res.send('ok'));
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const reads = [];
  let reading = true;
  const file = path.join(ROOT, 'package.json');
  const probe = (async () => {
    await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
    while (reading) {
      const t = process.hrtime.bigint();
      await fs.promises.readFile(file);
      reads.push(Number(process.hrtime.bigint() - t) / 1e6);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  // CPU per request, for the whole time the clients run (warm-up
  // included, as the count is): the process, and of it the event loop's
  // thread where this Node can tell (process.threadCpuUsage, Node 23.9+);
  // the rest is the pool's threads, or libuv's, and V8's helpers.
  const cpu = process.cpuUsage();
  const threadCpu = process.threadCpuUsage?.();
  const groups = threadGroupMicros();
  served = 0;
  const client = (mode) =>
    new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [
          path.join(__dirname, 'workers', 'http-load.js'),
          mode,
          String(server.address().port),
          String(CONNECTIONS),
          String(WARMUP_MS),
          String(DURATION_MS),
          encoding,
        ],
        { cwd: ROOT, encoding: 'utf8' },
        (err, stdout, stderr) =>
          err
            ? reject(new Error(`${err.message}\n${stderr}`))
            : resolve(JSON.parse(stdout.trim().split('\n').pop())),
      );
    });
  const [load, health] = await Promise.all([client('load'), client('health')]);
  reading = false;
  await probe;
  const used = process.cpuUsage(cpu);
  const mainUsed = threadCpu && process.threadCpuUsage(threadCpu);
  const byGroup = groupMicrosSince(groups);
  const requests = served;
  const tasks = routed ? tidepoolZlib.pool.stats().completed : 0;
  server.close();
  if (routed) {
    if (tasks === 0) throw new Error('install() was active but the pool ran no task');
    tidepoolZlib.uninstall();
    await tidepoolZlib.pool.close();
  }
  return {
    value: load.rps,
    healthP50: health.healthP50,
    healthP99: health.healthP99,
    readP50: quantile(reads, 0.5),
    readP99: quantile(reads, 0.99),
    serverCpuS: (used.user + used.system) / 1e6,
    serverUsPerRequest: (used.user + used.system) / requests,
    mainUsPerRequest: mainUsed ? (mainUsed.user + mainUsed.system) / requests : NaN,
    loadUsPerRequest: load.cpuUsPerRequest,
    // The server's CPU µs per request by thread (Linux): event loop, pool,
    // libuv, V8 helpers (the collector's, the compiler's), other.
    ...(byGroup &&
      Object.fromEntries(
        Object.entries(byGroup).map(([group, us]) => [`${group} µs/request`, us / requests]),
      )),
    encodedBytes: load.encodedBytes,
  };
}

const RPS = 'requests/s';
const CASES = {};
const RATIOS = [];
// gzip keeps its names (the row of earlier runs); the others say theirs.
for (const encoding of ['gzip', 'deflate', 'br']) {
  const suffix = encoding === 'gzip' ? '' : `, ${encoding}`;
  const node = `http: express + compression, node:zlib${suffix}`;
  const ours = `http: express + compression, behind install()${suffix}`;
  CASES[node] = { unit: RPS, run: () => serve(false, encoding) };
  CASES[ours] = { unit: RPS, run: () => serve(true, encoding) };
  RATIOS.push([ours, node]);
}

module.exports = { CASES, RATIOS, body };
