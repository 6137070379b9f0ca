#!/usr/bin/env node
'use strict';
// Autoscaling on many-core servers, measured on any machine: open-loop
// arrivals of 1 ms `sleep` tasks (they block their thread without using
// CPU, so N threads behave like N cores) in four load profiles, at
// maxThreads 8, 16 and 32, against several pool configurations.
//
//   npm run bench:autoscale:many                          # 1 run each, table + docs/autoscale-many.svg
//   npm run bench:autoscale:many -- --reps 3 --max 16     # medians of 3, one size
//   npm run bench:autoscale:many -- --profiles ramp,step --configs "queue-age,backlog"
//   npm run bench:autoscale:many -- --profiles sawtooth --configs "demand,demand idle 250"
//   npm run bench:autoscale:many -- --post immediate   # arrivals posted from a setImmediate loop
//
// Arrivals are posted from a 1 ms timer by default (a tick posts what came
// due since the last: clumps of a millisecond); `--post immediate` posts each
// at its time from a setImmediate loop, one at a time, as a busy server's
// requests do (the event loop then never sleeps: it takes a core).
//
// Profiles (load in threads' worth, M = maxThreads), each ending in 1.2 s idle:
//   ramp     0.5 for 0.3 s, then 0.5 -> 0.85 M over 3 s, 0.85 M for 0.5 s
//   step     1 for 1 s, 0.8 M for 2 s, 1 for 1 s
//   bursts   3 s of 100 ms at 0.9 M every 500 ms, 1 between
//   poisson  3 s of Poisson arrivals at a mean of 0.6 M (seeded)
//   poisson6 4 s of Poisson arrivals at a mean of 6 (seeded): bursty, far below M
//   sawtooth 4 s alternating 2 and 10 every 400 ms
//
// The oracle is not a pool: it serves each run's own posting times FIFO with
// exactly the threads those arrivals need at every instant (Little's law:
// busy threads = arrival rate x the run's own median service time), in
// exact integer microseconds; see oracle() below. The fixed-pool oracle
// ("fixed"): the fewest threads, fixed per phase (per 400 ms for the
// sawtooth), that serve the same arrivals FIFO with a p99 wait of at most
// 2 ms in every phase; see fixedOracle() in load-profile.js.
// Every configuration runs in a fresh process.
//
// Per configuration: queue wait p50 / p99 / max (the pool's own histogram),
// thread-seconds (and the ratio to the oracle's), spawns / retires, the
// largest overshoot (threads beyond the most the oracle needed in the last
// idleTimeoutMs + 100 ms, which a pool keeps by design), the reaction to the step
// (time until the pool has the oracle's thread count) and the time back to
// the core thread after the load ends.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { quantile, median } = require('./stats');
const { totalMs, loadAt, phaseStart, oracle, fixedOracle } = require('./load-profile');

const ROOT = path.join(__dirname, '..');
const COST_US = 1000;
const TICK_MS = 1;
// Threads a pool keeps by design after the load falls: an extra retires
// idleTimeoutMs after its last task (plus the policy's checks). So the
// overshoot's window follows each configuration's idleTimeoutMs.
const keepMs = (config) =>
  (CONFIGS[config](1).idleTimeoutMs ?? require(ROOT).defaults.idleTimeoutMs) + 100;
const IDLE_END_MS = 1200;

const PROFILES = {
  ramp: (M) => [
    { name: 'low', ms: 300, load: () => 0.5 },
    { name: 'ramp', ms: 3000, load: (f) => 0.5 + f * (0.85 * M - 0.5) },
    { name: 'hold', ms: 500, load: () => 0.85 * M },
  ],
  step: (M) => [
    { name: 'base', ms: 1000, load: () => 1 },
    { name: 'step', ms: 2000, load: () => 0.8 * M },
    { name: 'after', ms: 1000, load: () => 1 },
  ],
  bursts: (M) => [{ name: 'bursts', ms: 3000, load: (f, t) => (t % 500 < 100 ? 0.9 * M : 1) }],
  poisson: (M) => [{ name: 'poisson', ms: 3000, load: () => 0.6 * M, poisson: true }],
  poisson6: () => [{ name: 'poisson6', ms: 4000, load: () => 6, poisson: true }],
  sawtooth: () =>
    Array.from({ length: 10 }, (_, i) => ({
      name: `saw${i}`,
      ms: 400,
      load: () => (i % 2 === 0 ? 2 : 10),
    })),
};

/** Pool options per configuration; `M` is maxThreads. */
const CONFIGS = {
  'queue-age': (M) => ({ maxThreads: M, scaleRule: 'queue-age' }),
  backlog: (M) => ({ maxThreads: M, scaleRule: 'backlog' }),
  demand: (M) => ({ maxThreads: M, scaleRule: 'demand' }),
  // The default before #31: threads kept through 250 ms of a lull.
  'demand idle 250': (M) => ({ maxThreads: M, scaleRule: 'demand', idleTimeoutMs: 250 }),
  'fixed M': (M) => ({ minThreads: M, maxThreads: M }),
  'demand nice 0': (M) => ({ maxThreads: M, scaleRule: 'demand', niceIncrement: 0 }),
};

function phasesOf(profile, M) {
  return [...PROFILES[profile](M), { name: 'idle', ms: IDLE_END_MS, load: () => 0 }];
}

/** Arrival times (ms): the integral of the rate, or a Poisson process of that rate (seeded). */
function schedule(phases) {
  let seed = 0x2545f491;
  const uniform = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return ((seed >>> 0) + 0.5) / 2 ** 32;
  };
  const out = [];
  const dt = 0.05;
  let acc = 0;
  let threshold = 1;
  const end = totalMs(phases);
  for (let t = 0; t < end; t += dt) {
    const { load, phase } = loadAt(phases, t);
    acc += (load * dt) / (COST_US / 1000);
    while (acc >= threshold) {
      out.push(t);
      acc -= threshold;
      threshold = phase.poisson ? -Math.log(uniform()) : 1;
    }
  }
  return out;
}

// ---- child: one profile against one configuration --------------------------

async function child(spec) {
  const { profile, M, config, post } = JSON.parse(spec);
  const { Pool, micros } = require(ROOT);
  const phases = phasesOf(profile, M);
  const end = totalMs(phases);
  const pool = new Pool({ kernel: 'sleep', ...CONFIGS[config](M) });
  await new Promise((r) => setTimeout(r, 50)); // core threads up
  const input = micros(COST_US);
  const arrivals = schedule(phases);
  const samples = [];
  const events = [];
  const posts = [];
  const t0 = performance.now();
  const at = () => performance.now() - t0;
  pool.on('spawn', () => events.push({ t: at(), type: 'spawn' }));
  pool.on('retire', () => events.push({ t: at(), type: 'retire' }));
  pool.stats({ reset: true });
  let next = 0;
  const settled = [];
  let sampled = -Infinity;
  await new Promise((resolve) => {
    const tick = () => {
      const t = at();
      while (next < arrivals.length && arrivals[next] <= t) {
        posts.push(t);
        settled.push(pool.post(input));
        next++;
      }
      if (t - sampled >= TICK_MS || t >= end) {
        const s = pool.stats();
        samples.push({ t, threads: s.threads, queued: s.queued, age: s.oldestQueuedMs });
        sampled = t;
      }
      if (t >= end) resolve();
      else if (post === 'immediate') setImmediate(tick);
      else setTimeout(tick, TICK_MS);
    };
    tick();
  });
  await Promise.all(settled);
  const { waitTime, runTime } = pool.stats();
  await pool.close();
  return { posts, samples, events, wait: waitTime, runMs: runTime.p50 };
}

// ---- summary ------------------------------------------------------------------

function summarise(run, phases, orc, keep) {
  const end = totalMs(phases);
  const { samples, events } = run;
  let threadMs = 0;
  for (let k = 1; k < samples.length; k++) {
    const a = Math.min(samples[k - 1].t, end);
    const b = Math.min(samples[k].t, end);
    threadMs += samples[k - 1].threads * (b - a);
  }
  // Overshoot: threads beyond the most the oracle wanted in the last idle timeout.
  let overshoot = 0;
  for (const s of samples) {
    if (s.t > end) break;
    const from = Math.max(0, Math.floor(s.t - keep));
    const to = Math.min(orc.want.length - 1, Math.floor(s.t));
    let most = 1;
    for (let i = from; i <= to; i++) most = Math.max(most, orc.want[i]);
    overshoot = Math.max(overshoot, s.threads - most);
  }
  const stepStart = phaseStart(phases, 'step');
  let reactMs = NaN;
  if (Number.isFinite(stepStart)) {
    const need = orc.want[Math.floor(stepStart) + 5];
    const reached = samples.find((s) => s.t >= stepStart && s.threads >= need);
    reactMs = reached ? reached.t - stepStart : Infinity;
  }
  const idleStart = end - IDLE_END_MS;
  const minThreads = Math.min(...samples.map((s) => s.threads));
  const back = samples.find((s) => s.t >= idleStart && s.threads === minThreads);
  return {
    p50: run.wait.p50,
    p99: run.wait.p99,
    max: run.wait.max,
    threadSeconds: threadMs / 1000,
    spawns: events.filter((e) => e.type === 'spawn').length,
    retires: events.filter((e) => e.type === 'retire').length,
    overshoot,
    reactMs,
    backMs: back ? back.t - idleStart : NaN,
  };
}

function fmt(x, digits = 1) {
  if (x === Infinity) return 'never';
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

function svg(runs, phases, M, title) {
  const W = 960;
  const panelH = 130;
  const left = 40;
  const right = 20;
  const end = totalMs(phases);
  const names = Object.keys(runs);
  const H = 50 + names.length * (panelH + 30);
  const x = (t) => left + (Math.min(t, end) / end) * (W - left - right);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="18" font-size="13">${title}: threads (blue), oracle threads (dashed), load in threads' worth (grey)</text>`,
  ];
  names.forEach((name, k) => {
    const top = 40 + k * (panelH + 30);
    const y = (v) => top + panelH - (v / (M + 1)) * panelH;
    parts.push(`<text x="${left}" y="${top - 4}" font-size="12" font-weight="bold">${name}</text>`);
    parts.push(
      `<rect x="${left}" y="${top}" width="${W - left - right}" height="${panelH}" fill="none" stroke="#999"/>`,
    );
    const load = [];
    const want = [];
    const orc = oracle(runs[name].posts, phases, runs[name].runMs);
    for (let t = 0; t <= end; t += 10) {
      load.push(`${x(t).toFixed(1)},${y(loadAt(phases, t).load).toFixed(1)}`);
      want.push(`${x(t).toFixed(1)},${y(orc.want[t]).toFixed(1)}`);
    }
    parts.push(
      `<polygon points="${x(0)},${y(0)} ${load.join(' ')} ${x(end)},${y(0)}" fill="#ddd"/>`,
    );
    parts.push(
      `<polyline points="${want.join(' ')}" fill="none" stroke="#555" stroke-dasharray="4 3"/>`,
    );
    const tp = [];
    let prev = null;
    for (const s of runs[name].samples) {
      if (s.t > end) break;
      if (prev !== null) tp.push(`${x(s.t).toFixed(1)},${y(prev).toFixed(1)}`);
      tp.push(`${x(s.t).toFixed(1)},${y(s.threads).toFixed(1)}`);
      prev = s.threads;
    }
    parts.push(
      `<polyline points="${tp.join(' ')}" fill="none" stroke="#1f5fbf" stroke-width="1.5"/>`,
    );
    for (let v = 0; v <= M; v += M / 4)
      parts.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

async function parent() {
  const { values } = parseArgs({
    options: {
      reps: { type: 'string', default: '1' },
      max: { type: 'string', default: '8,16,32' },
      profiles: { type: 'string', default: Object.keys(PROFILES).join(',') },
      // 'demand idle 250' (the default before #31) only when asked for.
      configs: { type: 'string', default: 'queue-age,backlog,demand,fixed M' },
      json: { type: 'string' },
      dump: { type: 'string' },
      svg: { type: 'string', default: path.join(ROOT, 'docs', 'autoscale-many.svg') },
      post: { type: 'string', default: 'timer' },
    },
  });
  if (!['timer', 'immediate'].includes(values.post)) throw new Error('--post: timer or immediate');
  const reps = Number(values.reps);
  const sizes = values.max.split(',').map(Number);
  const profiles = values.profiles.split(',');
  const configs = values.configs.split(',');
  for (const c of configs) if (!CONFIGS[c]) throw new Error(`unknown configuration ${c}`);
  for (const p of profiles) if (!PROFILES[p]) throw new Error(`unknown profile ${p}`);
  const results = {}; // `${M} ${profile} ${config}` -> [run]
  for (let rep = 0; rep < reps; rep++) {
    for (const M of sizes) {
      for (const profile of profiles) {
        const order = rep % 2 === 0 ? configs : [...configs].reverse();
        for (const config of order) {
          process.stderr.write(
            `\r[${rep + 1}/${reps}] maxThreads ${M} ${profile} ${config}`.padEnd(70),
          );
          const spec = JSON.stringify({ profile, M, config, post: values.post });
          const r = spawnSync(process.execPath, [__filename, '--child', spec], {
            cwd: ROOT,
            encoding: 'utf8',
            maxBuffer: 256 << 20,
          });
          if (r.status !== 0) throw new Error(`${spec} failed:\n${r.stderr}`);
          const key = `${M} ${profile} ${config}`;
          (results[key] ??= []).push(JSON.parse(r.stdout.trim().split('\n').pop()));
        }
      }
    }
  }
  process.stderr.write('\r'.padEnd(70) + '\r');
  console.log(
    `autoscale, many threads: sleep tasks of ${COST_US / 1000} ms, ${reps} run(s) per cell, medians\n`,
  );
  const header = [
    'maxThreads',
    'profile',
    'configuration',
    'wait p50 / p99 / max (ms)',
    'p99 vs oracle',
    'thread-s (x oracle)',
    'spawns / retires',
    'overshoot',
    'react (ms)',
    'back to core (ms)',
    'thread-s (x fixed)',
    'p99 / max(3, 2x fixed)',
  ];
  const rows = [];
  const summaries = {};
  for (const M of sizes) {
    for (const profile of profiles) {
      const phases = phasesOf(profile, M);
      const oracles = configs.flatMap((c) =>
        results[`${M} ${profile} ${c}`].map((r) => oracle(r.posts, phases, r.runMs)),
      );
      const oP99 = median(oracles.map((o) => quantile(o.waits, 0.99)));
      const oTs = median(oracles.map((o) => o.threadSeconds));
      const waitsOf = (os) =>
        `${fmt(median(os.map((o) => quantile(o.waits, 0.5))), 2)} / ${fmt(median(os.map((o) => quantile(o.waits, 0.99))), 2)} / ${fmt(median(os.map((o) => Math.max(...o.waits))), 1)}`;
      rows.push([
        M,
        profile,
        'oracle',
        waitsOf(oracles),
        '1',
        `${fmt(oTs, 1)}`,
        '-',
        '0',
        '0',
        '-',
      ]);
      rows[rows.length - 1].push('-', '-');
      const fixeds = configs.flatMap((c) =>
        results[`${M} ${profile} ${c}`].map((r) => fixedOracle(r.posts, phases, r.runMs)),
      );
      rows.push([
        M,
        profile,
        `fixed (${median(fixeds.map((f) => Math.max(...f.threads)))} threads at most)`,
        waitsOf(fixeds),
        '-',
        `${fmt(median(fixeds.map((f) => f.threadSeconds)), 1)}`,
        '-',
        '-',
        '-',
        '-',
        '1',
        '-',
      ]);
      for (const config of configs) {
        const runs = results[`${M} ${profile} ${config}`];
        const ss = runs.map((r) => {
          const s = summarise(r, phases, oracle(r.posts, phases, r.runMs), keepMs(config));
          // Against the fixed pool for this run's own arrivals.
          const f = fixedOracle(r.posts, phases, r.runMs);
          s.vsFixed = s.threadSeconds / f.threadSeconds;
          s.p99Bar = s.p99 / Math.max(3, 2 * quantile(f.waits, 0.99));
          return s;
        });
        summaries[`${M} ${profile} ${config}`] = ss;
        const m = (f) => median(ss.map(f));
        rows.push([
          M,
          profile,
          config,
          `${fmt(
            m((s) => s.p50),
            2,
          )} / ${fmt(
            m((s) => s.p99),
            2,
          )} / ${fmt(
            m((s) => s.max),
            1,
          )}`,
          fmt(m((s) => s.p99) / Math.max(oP99, 2 / 1.5), 2),
          `${fmt(
            m((s) => s.threadSeconds),
            1,
          )} (${fmt(m((s) => s.threadSeconds) / oTs, 2)})`,
          `${m((s) => s.spawns)} / ${m((s) => s.retires)}`,
          m((s) => s.overshoot),
          fmt(
            m((s) => s.reactMs),
            0,
          ),
          fmt(
            m((s) => s.backMs),
            0,
          ),
          fmt(
            m((s) => s.vsFixed),
            2,
          ),
          fmt(
            m((s) => s.p99Bar),
            2,
          ),
        ]);
      }
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  console.log(
    "\n'p99 vs oracle': the pool's p99 wait over max(oracle p99, 1.33 ms), so <= 1.5 meets the target 'p99 <= 1.5x the oracle's or <= 2 ms'." +
      "\n'x fixed': thread-seconds over the fixed-pool oracle's for the same arrivals; 'p99 / max(3, 2x fixed)' <= 1 meets #31's wait bound.",
  );
  const drawM = sizes.includes(16) ? 16 : sizes[0];
  if (profiles.includes('ramp')) {
    const phases = phasesOf('ramp', drawM);
    const pick = (runs) => {
      const order = runs.map((r, i) => [r.wait.p99, i]).sort((a, b) => a[0] - b[0]);
      return runs[order[Math.floor((order.length - 1) / 2)][1]];
    };
    const drawn = Object.fromEntries(configs.map((c) => [c, pick(results[`${drawM} ramp ${c}`])]));
    fs.mkdirSync(path.dirname(values.svg), { recursive: true });
    fs.writeFileSync(values.svg, svg(drawn, phases, drawM, `ramp at maxThreads ${drawM}`));
    console.log(`timeline written to ${path.relative(process.cwd(), values.svg)}`);
  }
  if (values.json) fs.writeFileSync(values.json, JSON.stringify({ results, summaries }, null, 1));
  if (values.dump) {
    // Each run's posting times (ms, one per line) and its median run time in
    // the name, for `cargo run --example policy_sim -- --replay`.
    fs.mkdirSync(values.dump, { recursive: true });
    for (const [key, runs] of Object.entries(results)) {
      runs.forEach((r, i) => {
        const name = `${key.replace(/ /g, '-')}-${i}-run${Math.round(r.runMs * 1000)}us.txt`;
        fs.writeFileSync(path.join(values.dump, name), r.posts.map((t) => t.toFixed(3)).join('\n'));
      });
    }
    console.log(`arrivals written to ${values.dump}`);
  }
}

module.exports = { PROFILES, phasesOf, schedule, oracle, loadAt };

if (require.main === module) require('./main').main(child, parent);
