#!/usr/bin/env node
'use strict';
// Probe: the cost of delivering large results to JavaScript, for the paths
// a result past the inline size can take. Each tree is a built checkout;
// build one with `--features copy-large-results` to measure the copy path
// beside the default (external buffers):
//
//   CARGO_TARGET_DIR=/tmp/copy-target cargo build -p tidepool --release --features copy-large-results
//   node bench/probes/large-result.js external=. copy=/tmp/copytree [--reps 5] [--sizes 1024,65536,1048576,16777216]
//
// Every run is a fresh process: a 2-thread `echo` pool kept 8 tasks deep
// until ~256 MiB of results (at most 20 000 tasks) have come back. Reported
// per size and path, median [min–max] over the reps, the cases alternated:
// results/s, the event loop's busy time per result (µs, from
// eventLoopUtilization) and the part of it spent in GC pauses (µs, from
// PerformanceObserver 'gc' entries), and peak RSS.

const path = require('node:path');
const { spawnSync } = require('node:child_process');

if (process.argv[2] === '--child') {
  child(process.argv[3], Number(process.argv[4]));
} else {
  parent();
}

function child(tree, size) {
  const { Pool } = require(path.resolve(tree));
  const { performance, PerformanceObserver } = require('node:perf_hooks');
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  const count = Math.max(64, Math.min(20_000, Math.floor((256 << 20) / size)));
  const input = Buffer.alloc(size, 7);
  const pool = new Pool({ kernel: 'echo', minThreads: 2, maxThreads: 2 });
  let posted = 0;
  let done = 0;
  let peak = 0;
  const started = performance.now();
  const elu = performance.eventLoopUtilization();
  new Promise((resolve) => {
    const next = () => {
      if (posted === count) return;
      posted++;
      pool.post(input).then(({ result }) => {
        if (result.length !== size) throw new Error('short result');
        if (++done % 16 === 0) peak = Math.max(peak, process.memoryUsage.rss());
        if (done === count) resolve();
        else next();
      });
    };
    for (let i = 0; i < 8; i++) next();
  }).then(async () => {
    const ms = performance.now() - started;
    const busy = performance.eventLoopUtilization(elu).active;
    await pool.close();
    gc.disconnect();
    const gcUs = (gcMs * 1000) / count;
    console.log(
      JSON.stringify({
        perSec: (count / ms) * 1000,
        loopUs: (busy * 1000) / count,
        gcUs,
        peakMiB: peak / 2 ** 20,
      }),
    );
  });
}

function parent() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    return i === -1 ? fallback : args[i + 1];
  };
  const reps = Number(option('--reps', 5));
  const sizes = option('--sizes', '1024,65536,1048576,16777216').split(',').map(Number);
  const trees = args.filter((a) => a.includes('=')).map((a) => a.split('='));
  if (trees.length === 0) trees.push(['default', path.join(__dirname, '..', '..')]);
  const runs = new Map();
  for (let rep = 0; rep < reps; rep++) {
    for (const size of sizes) {
      const order = rep % 2 === 0 ? trees : [...trees].reverse();
      for (const [name, tree] of order) {
        const out = spawnSync(process.execPath, [__filename, '--child', tree, String(size)], {
          encoding: 'utf8',
        });
        if (out.status !== 0) throw new Error(`${name} ${size}: ${out.stderr}`);
        const key = `${size}\t${name}`;
        if (!runs.has(key)) runs.set(key, []);
        runs.get(key).push(JSON.parse(out.stdout));
      }
    }
  }
  const stat = (values, digits) => {
    values.sort((a, b) => a - b);
    const f = (v) => v.toFixed(digits);
    return `${f(values[values.length >> 1])} [${f(values[0])}–${f(values[values.length - 1])}]`;
  };
  console.log(
    '| result size | path | results/s | event loop µs per result | of which GC µs | peak RSS MiB |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const [key, list] of runs) {
    const [size, name] = key.split('\t');
    const sizeText = size >= 1 << 20 ? `${size / (1 << 20)} MiB` : `${size / 1024} KiB`;
    console.log(
      `| ${sizeText} | ${name} | ${stat(
        list.map((r) => r.perSec),
        0,
      )} | ${stat(
        list.map((r) => r.loopUs),
        1,
      )} | ${stat(
        list.map((r) => r.gcUs),
        1,
      )} | ${stat(
        list.map((r) => r.peakMiB),
        0,
      )} |`,
    );
  }
}
