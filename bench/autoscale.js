#!/usr/bin/env node
'use strict';
// Autoscaling benchmark: one load profile, open-loop arrivals of `spin` tasks
// of known cost, played against several pool configurations.
//
//   npm run bench:autoscale                  # table + docs/autoscale.svg
//   npm run bench:autoscale -- --reps 3      # median of 3 runs per configuration
//   npm run bench:autoscale -- --json out.json
//
// Profile: idle -> trickle -> ramp -> overload step -> drop -> periodic bursts
// -> idle. Each configuration runs in a fresh process. The "oracle" is not a
// pool: it is the oracle of bench/load-profile.js (shared with
// bench:autoscale:many), FIFO service of each run's own posting times by
// exactly the threads Little's law gives for the arrival rate around every
// instant, so the table shows how far each real configuration is from a
// policy that knows the load.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { quantile, median } = require('./stats');
const { totalMs, loadAt, phaseStart, oracle } = require('./load-profile');

const ROOT = path.join(__dirname, '..');
const COST_US = 1000; // one task = 1 ms of CPU
const TICK_MS = 1; // arrivals are posted on a 1 ms timer (open loop)
const SAMPLE_EVERY = 5; // ticks between two samples of stats()
const CORES = require('node:os').availableParallelism();
const MAX = Math.max(2, CORES);

/** Load in "threads' worth" (1 = one thread kept busy), by phase. */
const PHASES = [
  { name: 'idle', ms: 500, load: () => 0 },
  { name: 'trickle', ms: 1000, load: () => 0.2 },
  { name: 'ramp', ms: 1500, load: (f) => 0.2 + f * (MAX * 0.75 - 0.2) },
  { name: 'step', ms: 1500, load: () => MAX * 0.8 },
  { name: 'drop', ms: 1000, load: () => 0.3 },
  { name: 'bursts', ms: 2500, load: (f, t) => (t % 500 < 100 ? MAX * 0.9 : 0.1) },
  { name: 'idle', ms: 2500, load: () => 0 },
];
const TOTAL_MS = totalMs(PHASES);

const CONFIGS = {
  "tidepool defaults (scaleRule 'demand')": {},
  "tidepool scaleRule 'queue-age' (the article's)": { scaleRule: 'queue-age' },
  "tidepool scaleRule 'backlog'": { scaleRule: 'backlog' },
  'tidepool idleTimeoutMs 250': { idleTimeoutMs: 250 },
  'tidepool idleTimeoutMs 1000': { idleTimeoutMs: 1000 },
  'tidepool spawnDelayMs 0.5': { spawnDelayMs: 0.5 },
  'fixed 1 thread': { minThreads: 1, maxThreads: 1 },
  [`fixed ${MAX} threads`]: { minThreads: MAX, maxThreads: MAX },
};

/** Arrival times (ms) of the whole profile: the integral of the rate. */
function schedule() {
  const out = [];
  let acc = 0;
  for (let t = 0; t < TOTAL_MS; t += 0.1) {
    acc += (loadAt(PHASES, t).load * 0.1) / (COST_US / 1000);
    while (acc >= 1) {
      out.push(t);
      acc -= 1;
    }
  }
  return out;
}

// ---- child: play the profile against one pool configuration ---------------

async function child(name) {
  const { Pool, micros } = require(ROOT);
  const pool = new Pool({ kernel: 'spin', ...CONFIGS[name] });
  const input = micros(COST_US);
  const arrivals = schedule();
  const samples = [];
  const events = [];
  const phases = [];
  const t0 = performance.now();
  const at = () => performance.now() - t0;
  pool.on('spawn', (e) => {
    // The core threads' start is not part of the profile.
    if (e.reason !== 'core')
      events.push({ t: at(), type: 'spawn', threads: e.threads, reason: e.reason });
  });
  pool.on('retire', (e) =>
    events.push({ t: at(), type: 'retire', threads: e.threads, reason: e.reason }),
  );
  let next = 0;
  let posted = 0;
  const posts = [];
  let settled = 0;
  let phaseIndex = 0;
  let phaseEnd = PHASES[0].ms;
  pool.stats({ reset: true });
  await new Promise((resolve) => {
    let ticks = 0;
    const tick = () => {
      const t = at();
      while (next < arrivals.length && arrivals[next] <= t) {
        posts.push(Math.round(t * 100) / 100);
        posted++;
        pool.post(input).then(() => settled++);
        next++;
      }
      if (ticks++ % SAMPLE_EVERY === 0 || t >= phaseEnd) {
        const s = pool.stats();
        samples.push({
          t,
          threads: s.threads,
          busy: s.busyThreads,
          queued: s.queued,
          age: s.oldestQueuedMs,
          done: s.completed,
        });
      }
      if (t >= phaseEnd) {
        const { waitTime } = pool.stats({ reset: true });
        phases.push({ name: PHASES[phaseIndex].name, waitTime });
        phaseIndex++;
        if (phaseIndex === PHASES.length) {
          resolve();
          return;
        }
        phaseEnd += PHASES[phaseIndex].ms;
      }
      setTimeout(tick, TICK_MS);
    };
    tick();
  });
  // Idle CPU of the pool: one second with nothing running and no sampling.
  const before = process.cpuUsage();
  const wallBefore = performance.now();
  await new Promise((r) => setTimeout(r, 1000));
  const cpu = process.cpuUsage(before);
  const idleCpu = (cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore);
  const final = pool.stats();
  await pool.close();
  return {
    name,
    samples,
    events,
    phases,
    posted,
    posts,
    settled,
    idleCpu,
    threadsAtEnd: final.threads,
  };
}

// ---- parent: run, summarise, draw -----------------------------------------

/** The oracle's waits of the tasks posted during the step (FIFO: waits[i] is posts[i]'s). */
function withStepWaits(orc, posts) {
  const from = phaseStart(PHASES, 'step');
  const to = from + PHASES.find((p) => p.name === 'step').ms;
  return { ...orc, stepWaits: orc.waits.filter((_, i) => posts[i] >= from && posts[i] < to) };
}

function summarise(run) {
  const { samples, events, phases } = run;
  let threadMs = 0;
  for (let k = 1; k < samples.length; k++)
    threadMs += samples[k - 1].threads * (samples[k].t - samples[k - 1].t);
  const step = phases.find((p) => p.name === 'step').waitTime;
  const all = phases.map((p) => p.waitTime);
  const stepStart = phaseStart(PHASES, 'step');
  const stepWant = Math.ceil(loadAt(PHASES, stepStart + 1).load);
  const reached = samples.find((s) => s.t >= stepStart && s.threads >= stepWant);
  const lastIdle = TOTAL_MS - PHASES[PHASES.length - 1].ms;
  const minThreads = samples.length ? Math.min(...samples.map((s) => s.threads)) : 1;
  const backToCore = samples.find(
    (s) => s.t >= lastIdle && s.threads === minThreads && s.queued === 0 && s.busy === 0,
  );
  const burstStart = phaseStart(PHASES, 'bursts');
  const burstEvents = events.filter((e) => e.t >= burstStart && e.t < burstStart + 2500);
  return {
    stepWait: step,
    overallMaxWait: Math.max(...all.map((w) => w.max)),
    threadSeconds: threadMs / 1000,
    spawns: events.filter((e) => e.type === 'spawn').length,
    retires: events.filter((e) => e.type === 'retire').length,
    burstPairs: Math.min(
      burstEvents.filter((e) => e.type === 'spawn').length,
      burstEvents.filter((e) => e.type === 'retire').length,
    ),
    reactMs: reached ? Math.max(0, reached.t - stepStart) : NaN,
    backToCoreMs: backToCore ? backToCore.t - lastIdle : NaN,
    idleCpuPct: run.idleCpu * 100,
  };
}

function svg(runs) {
  const W = 960;
  const panelH = 150;
  const left = 50;
  const right = 60;
  const names = Object.keys(runs);
  const H = 60 + names.length * (panelH + 40);
  const x = (t) => left + (t / TOTAL_MS) * (W - left - right);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="16" font-size="13">tidepool autoscaling: threads (blue, left axis), oracle threads (dashed), load in threads' worth (grey area),</text>`,
    `<text x="${left}" y="31" font-size="13">age of the oldest queued task (red, right axis in ms, scaled per panel)</text>`,
  ];
  names.forEach((name, k) => {
    const top = 60 + k * (panelH + 40);
    const y = (v) => top + panelH - (v / (MAX + 0.5)) * panelH;
    const maxAge = Math.max(10, ...runs[name].samples.map((s) => s.age));
    const ya = (v) => top + panelH - (v / maxAge) * panelH;
    parts.push(`<text x="${left}" y="${top - 6}" font-size="12" font-weight="bold">${name}</text>`);
    parts.push(
      `<rect x="${left}" y="${top}" width="${W - left - right}" height="${panelH}" fill="none" stroke="#999"/>`,
    );
    // load area
    const pts = [];
    for (let t = 0; t <= TOTAL_MS; t += 10)
      pts.push(`${x(t).toFixed(1)},${y(loadAt(PHASES, t).load).toFixed(1)}`);
    parts.push(
      `<polygon points="${x(0)},${y(0)} ${pts.join(' ')} ${x(TOTAL_MS)},${y(0)}" fill="#ddd"/>`,
    );
    // oracle threads
    const op = [];
    const { want } = oracle(runs[name].posts, PHASES, COST_US / 1000);
    for (let t = 0; t <= TOTAL_MS; t += 10)
      op.push(`${x(t).toFixed(1)},${y(want[Math.min(want.length - 1, t)]).toFixed(1)}`);
    parts.push(
      `<polyline points="${op.join(' ')}" fill="none" stroke="#555" stroke-dasharray="4 3"/>`,
    );
    // queue age
    const ap = runs[name].samples.map((s) => `${x(s.t).toFixed(1)},${ya(s.age).toFixed(1)}`);
    parts.push(`<polyline points="${ap.join(' ')}" fill="none" stroke="#d33" stroke-width="1"/>`);
    // threads (step line)
    const tp = [];
    let prev = null;
    for (const s of runs[name].samples) {
      if (prev !== null) tp.push(`${x(s.t).toFixed(1)},${y(prev).toFixed(1)}`);
      tp.push(`${x(s.t).toFixed(1)},${y(s.threads).toFixed(1)}`);
      prev = s.threads;
    }
    parts.push(
      `<polyline points="${tp.join(' ')}" fill="none" stroke="#1f5fbf" stroke-width="2"/>`,
    );
    // axes
    for (let v = 0; v <= MAX; v++)
      parts.push(`<text x="${left - 8}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
    parts.push(
      `<text x="${W - right + 6}" y="${top + 10}" fill="#d33">${maxAge.toFixed(0)} ms</text>`,
    );
    parts.push(`<text x="${W - right + 6}" y="${top + panelH}" fill="#d33">0</text>`);
    let start = 0;
    for (const p of PHASES) {
      parts.push(
        `<line x1="${x(start)}" y1="${top}" x2="${x(start)}" y2="${top + panelH}" stroke="#ccc"/>`,
      );
      parts.push(`<text x="${x(start) + 3}" y="${top + panelH + 14}" fill="#666">${p.name}</text>`);
      start += p.ms;
    }
  });
  parts.push(
    `<text x="${W - right}" y="${H - 6}" text-anchor="end" fill="#666">time: 0 - ${TOTAL_MS / 1000} s; spin tasks of ${COST_US / 1000} ms</text>`,
  );
  parts.push('</svg>');
  return parts.join('\n');
}

function fmt(x, digits = 1) {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

async function parent() {
  const { values } = parseArgs({
    options: {
      reps: { type: 'string', default: '1' },
      json: { type: 'string' },
      svg: { type: 'string', default: path.join(ROOT, 'docs', 'autoscale.svg') },
    },
  });
  const reps = Number(values.reps);
  const results = Object.fromEntries(Object.keys(CONFIGS).map((n) => [n, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const name of Object.keys(CONFIGS)) {
      process.stderr.write(`\r[${rep + 1}/${reps}] ${name} (${TOTAL_MS / 1000 + 2} s)`.padEnd(60));
      const r = spawnSync(process.execPath, [__filename, '--child', name], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 120_000,
        maxBuffer: 64 << 20,
      });
      if (r.status !== 0) throw new Error(`${name} failed:\n${r.stderr}`);
      results[name].push(JSON.parse(r.stdout));
    }
  }
  process.stderr.write('\r'.padEnd(60) + '\r');
  // The oracle, replayed on the posting times of every run of every
  // configuration; the row shows the medians.
  const oracles = Object.values(results)
    .flat()
    .map((r) => withStepWaits(oracle(r.posts, PHASES, COST_US / 1000), r.posts));
  const orcQ = (f) => median(oracles.map(f));
  const orcStepP99 = orcQ((o) => quantile(o.stepWaits, 0.99));
  const rows = [];
  const summaries = {};
  for (const [name, runs] of Object.entries(results)) {
    const ss = runs.map(summarise);
    const m = (f) => median(ss.map(f));
    summaries[name] = ss;
    rows.push([
      name,
      `${fmt(
        m((s) => s.stepWait.p50),
        2,
      )} / ${fmt(
        m((s) => s.stepWait.p99),
        2,
      )} / ${fmt(
        m((s) => s.stepWait.max),
        1,
      )}`,
      fmt(
        m((s) => s.overallMaxWait),
        1,
      ),
      fmt(
        m((s) => s.threadSeconds),
        2,
      ),
      `${m((s) => s.spawns)} / ${m((s) => s.retires)}`,
      fmt(
        m((s) => s.burstPairs),
        0,
      ),
      fmt(
        m((s) => s.reactMs),
        0,
      ),
      fmt(
        m((s) => s.backToCoreMs),
        0,
      ),
      fmt(
        m((s) => s.idleCpuPct),
        2,
      ),
    ]);
  }
  rows.push([
    "oracle (Little's law on the run's own arrivals)",
    `${fmt(
      orcQ((o) => quantile(o.stepWaits, 0.5)),
      2,
    )} / ${fmt(orcStepP99, 2)} / ${fmt(
      orcQ((o) => quantile(o.stepWaits, 1)),
      1,
    )}`,
    fmt(
      orcQ((o) => quantile(o.waits, 1)),
      1,
    ),
    fmt(
      orcQ((o) => o.threadSeconds),
      2,
    ),
    '-',
    '-',
    '0',
    '0',
    '-',
  ]);
  console.log(
    `autoscale benchmark: ${CORES} CPUs, maxThreads ${MAX}, spin tasks of ${COST_US / 1000} ms, ${reps} run(s) per configuration, profile ${PHASES.map((p) => `${p.name} ${p.ms / 1000}s`).join(' -> ')}\n`,
  );
  const header = [
    'configuration',
    'step wait p50 / p99 / max (ms)',
    'max wait (ms)',
    'thread-seconds',
    'spawns / retires',
    'spawn+retire pairs in bursts',
    'react to step (ms)',
    'back to core (ms)',
    'idle CPU (% core)',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  const def = summaries["tidepool defaults (scaleRule 'demand')"];
  if (def) {
    const p99 = median(def.map((s) => s.stepWait.p99));
    const ts = median(def.map((s) => s.threadSeconds));
    console.log(
      `\ndefaults vs oracle: step p99 wait ${fmt(p99 / Math.max(orcStepP99, 1e-3), 2)}x (oracle p99 ${fmt(orcStepP99, 2)} ms), thread-seconds ${fmt(ts / orcQ((o) => o.threadSeconds), 2)}x`,
    );
  }
  fs.mkdirSync(path.dirname(values.svg), { recursive: true });
  // Draw, per configuration, the run whose step p99 wait is the median one
  // (not an outlier in either direction).
  const representative = (runs) => {
    const order = runs.map((r, i) => [summarise(r).stepWait.p99, i]).sort((a, b) => a[0] - b[0]);
    return runs[order[Math.floor((order.length - 1) / 2)][1]];
  };
  fs.writeFileSync(
    values.svg,
    svg(Object.fromEntries(Object.entries(results).map(([n, r]) => [n, representative(r)]))),
  );
  console.log(`timeline written to ${path.relative(process.cwd(), values.svg)}`);
  if (values.json)
    fs.writeFileSync(
      values.json,
      JSON.stringify(
        { results, oracle: { threadSeconds: orcQ((o) => o.threadSeconds), stepP99: orcStepP99 } },
        null,
        1,
      ),
    );
}

require('./main').main(child, parent);
