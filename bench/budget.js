#!/usr/bin/env node
'use strict';
// The machine budget (`budget: 'machine'`): several processes on one
// machine, each with its own pool, running CPU tasks flat out.
//
//   npm run bench:budget                        # 4 processes, 3 reps
//   npm run bench:budget -- --procs 4 --reps 5 --seconds 4
//
// Per repetition, in alternating order, each in fresh processes:
// - alone:   one process, `maxThreads` = the CPUs, no budget (the rate to match);
// - process: `--procs` processes with `maxThreads` = the CPUs each, no budget;
// - machine: the same with `budget: 'machine'`; halfway through, one of them
//   is killed with SIGKILL and the others' rate is followed.
// This process reaps the killed child, and reports its own time in the
// kernel after the kill and how long its event loop stood still: a
// reaper that spins in the kernel takes a CPU from the survivors.
// Busy threads are counted from /proc every 5 ms: pool threads (named
// `tidepool-N`) that are running or runnable, across the processes. The
// budget's table lives in a directory of the run's own, so nothing else on
// the machine shares it.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { quantile, median } = require('./stats');

// CPU work, not the `spin` kernel (which spins to a wall-clock time, so an
// oversubscribed machine would seem to finish more of it): SHA-256 of 1 MiB.
const TASK_BYTES = 1 << 20;
const REPORT_MS = 50;
// The survivors' rate after a SIGKILL is judged over windows this long: a
// share moves between processes every time slice (100 ms), so a shorter
// window sees the slices, not the rate.
const RECOVERY_WINDOW = 250;

if (process.argv[2] === '--child') child(JSON.parse(process.argv[3]));
else main();

/** One process: keeps 4 tasks per thread in flight, reports its count. */
function child({ budget, threads, seconds }) {
  const { Pool } = require('..');
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const pool = new Pool({ kernel: 'sha256', maxThreads: threads, budget });
  const input = Buffer.alloc(TASK_BYTES, 7);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let done = 0;
  let stopping = false;
  const one = () =>
    pool.post(input).then(() => {
      done++;
      if (!stopping) one();
    });
  for (let i = 0; i < threads * 4; i++) one();
  // Stamped here, on the machine's clock: a parent slow to read does not
  // move the counts in time.
  const report = setInterval(
    () => process.stdout.write(`${performance.timeOrigin + performance.now()} ${done}\n`),
    REPORT_MS,
  );
  setTimeout(async () => {
    stopping = true;
    clearInterval(report);
    loop.disable();
    await pool.close();
    process.stdout.write(`end ${JSON.stringify({ done, loopP99Ms: loop.percentile(99) / 1e6 })}\n`);
  }, seconds * 1000);
}

/** The pool threads of `pid` that are running or runnable now. */
function busyThreads(pid) {
  let n = 0;
  let tasks;
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
    } catch {
      continue;
    }
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const name = stat.slice(open + 1, close);
    const state = stat[close + 2];
    if (/^tidepool-\d+$/.test(name) && state === 'R') n++;
  }
  return n;
}

/** Runs `procs` children; resolves with their counts over time and the busy-thread samples. */
function run({ procs, budget, threads, seconds, killAtMs, dir }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const children = [];
    const samples = [];
    for (let i = 0; i < procs; i++) {
      const c = spawn(
        process.execPath,
        [__filename, '--child', JSON.stringify({ budget, threads, seconds })],
        { env: { ...process.env, TIDEPOOL_BUDGET_DIR: dir }, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const rec = { c, counts: [], end: null, killedAt: null };
      let buf = '';
      c.stdout.on('data', (d) => {
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.startsWith('end ')) rec.end = JSON.parse(line.slice(4));
          else {
            const [at, n] = line.split(' ').map(Number);
            rec.counts.push([at - performance.timeOrigin - start, n]);
          }
        }
      });
      children.push(rec);
    }
    // From the kill to the end (see the top of the file).
    let lastTick = null;
    let reaper = null;
    const sampler = setInterval(() => {
      const t = performance.now() - start;
      if (reaper && lastTick !== null) reaper.stallMs = Math.max(reaper.stallMs, t - lastTick);
      lastTick = t;
      if (t > 500 && t < seconds * 1000) {
        let n = 0;
        for (const r of children) if (r.killedAt === null) n += busyThreads(r.c.pid);
        samples.push(n);
      }
    }, 5);
    if (killAtMs !== undefined)
      setTimeout(() => {
        children[0].killedAt = performance.now() - start;
        reaper = { atKill: process.cpuUsage(), stallMs: 0, kernelMs: 0 };
        children[0].c.kill('SIGKILL');
      }, killAtMs);
    let left = procs;
    for (const r of children)
      r.c.on('exit', (code, signal) => {
        if (code !== 0 && signal !== 'SIGKILL') reject(new Error(`child exited ${code} ${signal}`));
        if (--left === 0) {
          clearInterval(sampler);
          if (reaper) reaper.kernelMs = process.cpuUsage(reaper.atKill).system / 1000;
          resolve({ children, samples, reaper });
        }
      });
  });
}

/** Tasks per second of `children` (alive through it) between `from` and `to` ms. */
function rate(children, from, to) {
  let tasks = 0;
  for (const r of children) {
    const at = (t) => {
      let last = 0;
      for (const [when, n] of r.counts) {
        if (when > t) break;
        last = n;
      }
      return last;
    };
    tasks += at(to) - at(from);
  }
  return (tasks / (to - from)) * 1000;
}

async function main() {
  const { values } = parseArgs({
    options: {
      procs: { type: 'string', default: '4' },
      reps: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '4' },
      json: { type: 'string' },
    },
  });
  const procs = Number(values.procs);
  const reps = Number(values.reps);
  const seconds = Number(values.seconds);
  const cpus = os.availableParallelism();
  const threads = cpus;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-budget-bench-'));
  const rows = { alone: [], process: [], machine: [] };
  const steady = [500, seconds * 1000 - 100];
  try {
    for (let rep = 0; rep < reps; rep++) {
      const order =
        rep % 2 === 0 ? ['alone', 'process', 'machine'] : ['machine', 'process', 'alone'];
      for (const mode of order) {
        const n = mode === 'alone' ? 1 : procs;
        const budget = mode === 'machine' ? 'machine' : 'process';
        const killAtMs = mode === 'machine' ? (seconds * 1000) / 2 : undefined;
        const { children, samples, reaper } = await run({
          procs: n,
          budget,
          threads,
          seconds,
          killAtMs,
          dir,
        });
        const until = killAtMs ?? steady[1];
        const row = {
          busyP99: quantile(
            samples.slice().sort((a, b) => a - b),
            0.99,
          ),
          busyMax: Math.max(...samples),
          // Share of the samples above the CPUs.
          busyOver: samples.filter((n) => n > cpus).length / Math.max(1, samples.length),
          rate: rate(children, steady[0], until),
          loopP99Ms: Math.max(...children.filter((r) => r.end).map((r) => r.end.loopP99Ms)),
          perProcess: children.map((r) => rate([r], steady[0], until)),
        };
        if (killAtMs !== undefined) {
          const rest = children.slice(1);
          row.after = rate(rest, killAtMs + 1000, steady[1]);
          // When the survivors' rate, in 100 ms windows, first reaches 0.8x
          // the lone process's rate of this repetition (or of the first).
          row.killedAt = killAtMs;
          row.rest = rest;
          row.reaper = reaper;
        }
        rows[mode].push(row);
        process.stderr.write(
          `rep ${rep + 1} ${mode}: ${Math.round(row.rate)}/s busy p99 ${row.busyP99}\n`,
        );
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const alone = median(rows.alone.map((r) => r.rate));
  for (const row of rows.machine) {
    row.recoveryMs = null;
    for (let t = row.killedAt; t + RECOVERY_WINDOW <= steady[1]; t += 25) {
      if (rate(row.rest, t, t + RECOVERY_WINDOW) >= 0.8 * alone) {
        row.recoveryMs = t + RECOVERY_WINDOW - row.killedAt;
        break;
      }
    }
    row.series = [];
    for (let t = row.killedAt - 500; t + 100 <= steady[1]; t += 100)
      row.series.push(Math.round((rate(row.rest, t, t + 100) / alone) * 100) / 100);
    delete row.rest;
  }
  const fmt = (xs, d = 2) => {
    const s = xs.slice().sort((a, b) => a - b);
    return `${median(s).toFixed(d)} [${s[0].toFixed(d)}-${s[s.length - 1].toFixed(d)}]`;
  };
  console.log(
    `${procs} processes, ${cpus} CPUs (${os.cpus()[0].model}), ${threads} threads each, ` +
      `SHA-256 of ${TASK_BYTES >> 20} MiB per task, ${seconds} s, ${reps} reps; median [min-max]`,
  );
  console.log(
    '| run | busy threads p99 | busy max | samples over the CPUs | tasks/s (x alone) | loop p99 ms (worst process) |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const mode of ['alone', 'process', 'machine']) {
    const r = rows[mode];
    console.log(
      `| ${mode} | ${fmt(
        r.map((x) => x.busyP99),
        0,
      )} | ${fmt(
        r.map((x) => x.busyMax),
        0,
      )} | ` +
        `${fmt(
          r.map((x) => x.busyOver * 100),
          1,
        )} % | ` +
        `${fmt(r.map((x) => x.rate / alone))} | ${fmt(r.map((x) => x.loopP99Ms))} |`,
    );
  }
  const m = rows.machine;
  console.log(
    `machine, per process (x alone / ${procs}): ` +
      fmt(m.flatMap((x) => x.perProcess.map((p) => (p * procs) / alone))),
  );
  console.log(
    `machine, after a SIGKILL: the other ${procs - 1} at ${fmt(m.map((x) => x.after / alone))}x alone ` +
      `(from 1 s after the kill); back to 0.8x alone within ` +
      `${m.map((x) => (x.recoveryMs === null ? 'never' : `${x.recoveryMs} ms`)).join(', ')}`,
  );
  for (const x of m)
    console.log(
      `  survivors per 100 ms from 500 ms before the kill (x alone): ${x.series.join(' ')}; ` +
        `this process (the reaper) after the kill: ${Math.round(x.reaper.kernelMs)} ms in the ` +
        `kernel, its event loop still for ${Math.round(x.reaper.stallMs)} ms at most`,
    );
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(rows, null, 2));
}
