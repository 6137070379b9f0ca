#!/usr/bin/env node
'use strict';
// Where a tiny task's CPU goes: for each tiny-task row of `npm run bench`
// (200,000 SHA-256 tasks of 64 B), the CPU per task of the JS thread and of
// every other thread (the pool's, and V8's GC helpers), and the JS thread's
// split as its CPU profile sees it (garbage collection, native code outside
// any JS function, JS and the native calls made from it), with the
// functions that cost most. A row runs in a fresh process: one warm-up
// round, then ROUNDS profiled rounds.
//
//   node bench/breakdown.js                 # every row
//   node bench/breakdown.js 'postMany()'    # rows whose name contains it
//   TIDEPOOL_DIR=/path/to/checkout node bench/breakdown.js   # another build
//
// The profiler's sampling slows the JS thread (10-20 %): compare rows and
// builds measured by this script, not with `npm run bench`'s rates. The JS
// thread's CPU is read from /proc (Linux only), in 10 ms ticks.

const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const { jsThreadMicros } = require('./thread-cpu');
const path = require('node:path');
const { Session } = require('node:inspector');
const { inFlight } = require('./in-flight');

const TASKS = 200_000;
const ROUNDS = 6;

const ROWS = {
  'post(), all at once': (pool, msgs) => Promise.all(msgs.map((m) => pool.post(m))),
  'post(), 1024 in flight': (pool, msgs) => inFlight(msgs, 1024, (m) => pool.post(m)),
  'post() with { signal }, 1024 in flight': (pool, msgs, signal) =>
    inFlight(msgs, 1024, (m) => pool.post(m, { signal })),
  'postMany(), one batch': (pool, msgs) => pool.postMany(msgs),
  'postMany({ packed: true }), one batch': (pool, msgs) => pool.postMany(msgs, { packed: true }),
  // The same 200,000 messages as records of the one binary they are views of.
  'postRecords(), one binary': (pool, msgs, signal, bytes) => pool.postRecords(bytes, 64),
  'postRecords({ packed: true }), one binary': (pool, msgs, signal, bytes) =>
    pool.postRecords(bytes, 64, { packed: true }),
  'map(), 4096 in flight': async (pool, msgs) => {
    for await (const result of pool.map(msgs, { concurrency: 4096 })) void result;
  },
};

async function measure(name) {
  const { Pool } = require(process.env.TIDEPOOL_DIR ?? path.join(__dirname, '..'));
  const pool = new Pool({ kernel: 'sha256' });
  const bytes = crypto.randomBytes(64 * TASKS);
  const msgs = Array.from({ length: TASKS }, (_, i) => bytes.subarray(i * 64, i * 64 + 64));
  const { signal } = new AbortController();
  const run = ROWS[name];
  await run(pool, msgs, signal, bytes);
  const session = new Session();
  session.connect();
  const call = (method) =>
    new Promise((resolve, reject) =>
      session.post(method, (err, out) => (err ? reject(err) : resolve(out))),
    );
  await call('Profiler.enable');
  await call('Profiler.start');
  const cpu = process.cpuUsage();
  const js = jsThreadMicros();
  const start = process.hrtime.bigint();
  for (let r = 0; r < ROUNDS; r++) await run(pool, msgs, signal, bytes);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const jsMicros = jsThreadMicros() - js;
  const { profile } = await call('Profiler.stop');
  await pool.close();
  const tasks = ROUNDS * TASKS;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = nodes.get(profile.samples[i]).callFrame;
    // A function without a script is native: V8 names the raw calls
    // (submit, submitMany...) after whatever it finds, so they are one row.
    const key =
      frame.url === '' && !frame.functionName.startsWith('(')
        ? 'native calls '
        : `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(lib|bench)\//, '$1/')}`;
    self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[i]);
    total += profile.timeDeltas[i];
  }
  const idle = self.get('(idle) ') ?? 0;
  /** µs per task of the JS thread's CPU spent where `time` of the profile was. */
  const perTask = (time) => (jsMicros * (time / (total - idle))) / tasks;
  const gc = perTask(self.get('(garbage collector) ') ?? 0);
  const program = perTask(self.get('(program) ') ?? 0);
  const top = [...self]
    .filter(([key]) => !key.startsWith('('))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([key, time]) => `${key.trim()} ${perTask(time).toFixed(2)}`);
  return {
    name,
    rate: tasks / seconds,
    cpu: (used.user + used.system) / tasks,
    js: jsMicros / tasks,
    others: (used.user + used.system - jsMicros) / tasks,
    gc,
    program,
    code: jsMicros / tasks - gc - program,
    top,
  };
}

async function main() {
  if (process.argv[2] === '--row') {
    console.log(JSON.stringify(await measure(process.argv[3])));
    return;
  }
  const filter = process.argv[2] ?? '';
  const f = (x) => x.toFixed(2);
  console.log(
    '| row | rate | CPU µs/task | JS thread | other threads | JS: GC | JS: native | JS: code and calls | costliest on the JS thread (µs/task) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const name of Object.keys(ROWS).filter((n) => n.includes(filter))) {
    const out = execFileSync(process.execPath, [__filename, '--row', name], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').pop());
    console.log(
      `| ${r.name} | ${(r.rate / 1e6).toFixed(2)}M/s | ${f(r.cpu)} | ${f(r.js)} | ${f(r.others)} | ${f(r.gc)} | ${f(r.program)} | ${f(r.code)} | ${r.top.join('; ')} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
