#!/usr/bin/env node
'use strict';
// `npm test`: every stage of the suite, each run to its end and reported,
// the command failing if any did (one failing stage hides none of the
// others).
//
//   node scripts/test.js                      rust, types, then js on this Node
//   node scripts/test.js --stage js           the JS suite alone
//   node scripts/test.js --stage js --runtime node22,node24,node26,bun,deno
//   node scripts/test.js --stage js -- __test__/hash.test.js   some files only
//
// Runtimes (scripts/runtimes.js fetches them from the npm registry):
// `current` (the Node running this script), node20..node26 (the whole JS
// suite; a line this Node is of runs on this Node), bun and deno (the part
// of the suite that is about the library itself: BUN_DENO_FILES).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { ensure, versionOf } = require('./runtimes');
const { FailureLines } = require('./failure-lines');

const root = path.resolve(__dirname, '..');

const STAGES = ['rust', 'types', 'js'];

/**
 * What Bun and Deno run: the pool, batches, hash and codec streams, and
 * @tidepool-rs/pool/zlib and /crypto used directly and through install(),
 * /password. The rest
 * is about Node itself (its permission model, worker_threads, --require,
 * child processes of `node`) or the repository (docs, deploy files).
 */
const BUN_DENO_FILES = [
  'api.test.js',
  'batch.test.js',
  'map.test.js',
  'hash.test.js',
  'hash-digest.test.js',
  'codec-stream.test.js',
  'codec-stream-ends.test.js',
  'records.test.js',
  'zlib-module.test.js',
  'crypto-module.test.js',
  'password.test.js',
  'working-memory.test.js',
  'entry-exports.test.js',
];

/**
 * The commands of the Rust stage (the crates' tests, the policy
 * simulation), in the release profile: they reuse every dependency the
 * install built for the addon, where the test profile compiled them all
 * again (twice the time under load, and 1.2 GB more of target/). Debug
 * assertions are CI's Shuttle and Miri runs' (npm run test:concurrency).
 */
const RUST = [
  [
    'cargo',
    [
      'test',
      '-p',
      'tidepool',
      '-p',
      'tidepool-core',
      '-p',
      'tidepool-kernel-sdk',
      '-p',
      'tidepool-example-kernels',
      '--release',
      '--locked',
      // Every test binary runs, and every failure is told, not the first.
      '--no-fail-fast',
    ],
  ],
  ['cargo', ['test', '-p', 'tidepool-core', '--release', '--locked', '--example', 'replicas_sim']],
];

/** Every test file of the JS suite, relative to the root, sorted. */
function jsFiles() {
  const dir = path.join(root, '__test__');
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((f) => f.endsWith('.test.js'))
    .map((f) => path.join('__test__', f))
    .sort();
}

/** How many lines of failure each failed stage repeats after the summary. */
const WHY_LINES = 16;
const whyOf = new Map();
/** How long output may go on after the command exited (a process it started may hold its pipes). */
const DRAIN_MS = 5000;

/**
 * Runs `cmd args` in the root for `stage`, its output as it comes; true
 * when it passed. Its output is also read for the lines that say why it
 * failed (FailureLines), kept for the stage.
 */
function run(stage, cmd, args) {
  console.log(`\n$ ${[cmd, ...args].join(' ')}`);
  // Through pipes the children see no terminal: colours as if they did.
  const colour = process.stdout.isTTY ? { CARGO_TERM_COLOR: 'always', FORCE_COLOR: '1' } : {};
  const child = spawn(cmd, args, {
    cwd: root,
    stdio: ['inherit', 'pipe', 'pipe'],
    env: { ...process.env, ...colour },
  });
  const failure = new FailureLines(WHY_LINES);
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    const reader = failure.reader();
    from.on('data', (chunk) => {
      to.write(chunk);
      reader.feed(chunk);
    });
    from.on('end', reader.end);
  }
  return new Promise((resolve) => {
    let settled = false;
    const done = (status, signal, error) => {
      if (settled) return;
      settled = true;
      const ok = status === 0;
      if (!ok) {
        const how = error
          ? `${cmd}: ${error.message}`
          : `${cmd} exited ${signal ? `on ${signal}` : `with ${status}`}`;
        if (error) console.error(`test: ${how}`);
        whyOf.set(stage, [...(whyOf.get(stage) ?? []), ...failure.lines, how]);
      }
      resolve(ok);
    };
    child.on('error', (error) => done(null, null, error));
    child.on('close', (status, signal) => done(status, signal));
    // 'close' waits for every holder of the pipes: a process the command
    // left behind would hold the summary back, forever if it never ends.
    child.on('exit', (status, signal) => {
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        done(status, signal);
      }, DRAIN_MS).unref();
    });
  });
}

/** The binary of `runtime`, and what to call it in the report. */
function binaryOf(runtime) {
  if (runtime === 'current') return { binary: process.execPath, version: process.version };
  const major = /^node(\d+)$/.exec(runtime)?.[1];
  if (major !== undefined && process.versions.node.split('.')[0] === major)
    return { binary: process.execPath, version: process.version };
  const binary = ensure(runtime);
  return { binary, version: versionOf(binary) };
}

/** The JS suite's `files` on `runtime`: true when it passed. */
function runJs(runtime, files, stage) {
  const { binary, version } = binaryOf(runtime);
  console.log(`\n== js on ${runtime} (${version})`);
  const subset = files.filter((f) => BUN_DENO_FILES.includes(path.basename(f)));
  if ((runtime === 'bun' || runtime === 'deno') && subset.length === 0) {
    // Given no file, bun and deno would run every file they find.
    console.log(`none of these files runs on ${runtime}`);
    return true;
  }
  if (runtime === 'bun') {
    return run(stage, binary, ['test', '--timeout', '600000', ...subset]);
  }
  if (runtime === 'deno') {
    return run(stage, binary, ['test', '-A', '--no-check', ...subset]);
  }
  // node --test takes the files by name on every line (a folder is a
  // module path from Node 22 on).
  return run(stage, binary, ['--test', '--test-timeout=600000', '--test-reporter=spec', ...files]);
}

async function main() {
  const { values, positionals } = parseArgs({
    options: {
      stage: { type: 'string', default: STAGES.join(',') },
      runtime: { type: 'string', default: 'current' },
    },
    allowPositionals: true,
  });
  const stages = values.stage.split(',');
  for (const stage of stages)
    if (!STAGES.includes(stage))
      throw new Error(`test: unknown stage '${stage}' (${STAGES.join(', ')})`);
  const files = positionals.length ? positionals : jsFiles();
  const report = [];
  const timed = async (what, fn) => {
    const started = Date.now();
    let ok = false;
    try {
      ok = await fn(what);
    } catch (err) {
      console.error(`test: ${what}: ${err.message}`);
      whyOf.set(what, [...(whyOf.get(what) ?? []), err.message]);
    }
    report.push({ what, ok, s: (Date.now() - started) / 1000 });
  };
  if (stages.includes('rust'))
    await timed('rust', async (stage) => {
      let ok = true;
      for (const [cmd, args] of RUST) ok = (await run(stage, cmd, args)) && ok;
      return ok;
    });
  if (stages.includes('types'))
    await timed('types', (stage) => run(stage, 'npm', ['run', '--silent', 'test:types']));
  if (stages.includes('js'))
    for (const runtime of values.runtime.split(','))
      await timed(`js on ${runtime}`, (stage) => runJs(runtime, files, stage));
  console.log('\n== summary');
  for (const { what, ok, s } of report)
    console.log(`${ok ? 'pass' : 'FAIL'}  ${what}  (${s.toFixed(0)} s)`);
  for (const { what, ok } of report) {
    if (ok) continue;
    console.log(`\n== why ${what} failed (its last lines of failure)`);
    for (const line of whyOf.get(what) ?? []) console.log(`  ${line}`);
  }
  if (!report.every((r) => r.ok)) process.exitCode = 1;
}

main();
