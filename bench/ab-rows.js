#!/usr/bin/env node
'use strict';
// A/B of benchmark rows between two trees (e.g. this one and a `git worktree`
// of an older commit, built with its own CARGO_TARGET_DIR): runs each tree's
// own `bench/run.js --only <text> --reps 1` alternately (ABBA), every case in a fresh
// process as run.js does, and prints per row the medians and the paired
// ratio B/A (median [min–max]) over the repetitions.
//
//   node bench/ab-rows.js <tree-a> <tree-b> [--reps 6] [--only tidepool]
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    reps: { type: 'string', default: '6' },
    only: { type: 'string', default: 'tidepool' },
  },
});
if (positionals.length !== 2) {
  console.error('usage: node bench/ab-rows.js <tree-a> <tree-b> [--reps 6] [--only tidepool]');
  process.exit(2);
}
const trees = positionals.map((t) => path.resolve(t));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-ab-'));
const rows = new Map(); // name -> [[a values], [b values]]
for (let rep = 0; rep < Number(values.reps); rep++) {
  // A then B, then B then A: whichever runs second in a pair runs on a
  // machine the first has warmed or heated (A against itself: 0.92x
  // second), so each side takes each place as often.
  const order = rep % 2 === 0 ? [0, 1] : [1, 0];
  order.forEach((side) => {
    const tree = trees[side];
    const out = path.join(dir, `${side}-${rep}.json`);
    process.stderr.write(
      `\r[${rep + 1}/${values.reps}] ${side === 0 ? 'A' : 'B'}: ${tree}`.padEnd(100),
    );
    execFileSync(
      process.execPath,
      ['bench/run.js', '--only', values.only, '--reps', '1', '--json', out],
      { cwd: tree, stdio: 'ignore' },
    );
    for (const [name, runs] of Object.entries(JSON.parse(fs.readFileSync(out, 'utf8')).results)) {
      if (!rows.has(name)) rows.set(name, [[], []]);
      rows.get(name)[side].push(runs[0].value);
    }
  });
}
process.stderr.write('\n');
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (v) => (v >= 1e5 ? `${(v / 1e3).toFixed(0)}k` : v.toPrecision(3));
console.log(`A = ${trees[0]}\nB = ${trees[1]}\n`);
console.log('| case | A median | B median | B/A, paired |\n|---|---|---|---|');
for (const [name, [a, b]] of rows) {
  const ratios = a.map((x, i) => b[i] / x).filter(Number.isFinite);
  if (ratios.length === 0) continue;
  const r = `${median(ratios).toFixed(2)} [${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}]`;
  console.log(`| ${name} | ${fmt(median(a))} | ${fmt(median(b))} | ${r} |`);
}
