#!/usr/bin/env node
'use strict';
// One big input on an idle pool: a one-shot gzip, zstd or BLAKE3 task (and
// a createGzip() stream) over 128 MiB of mixed text and noise, on
// `new Pool()` against `new Pool({ maxThreads: 1 })`.
//
//   npm run bench:one-big                    # 128 MiB, 3 reps
//   npm run bench:one-big -- --mib 64 --reps 5
//   npm run bench:one-big -- --jobs createGzip,gzip
//
// Each measurement runs in a fresh process, the two pools alternating.
// Every output is checked: it decodes to the input (node:zlib; zstd with
// node:zlib where this Node has it, else the pool's decoder), its size
// against the one-thread run's, and BLAKE3's digest against the
// one-thread run's.

const { spawnSync } = require('node:child_process');
const os = require('node:os');
const { parseArgs } = require('node:util');
const { median } = require('./stats');

const JOBS = ['gzip', 'zstdCompress', 'blake3', 'createGzip'];

if (process.argv[2] === '--child') child(JSON.parse(process.argv[3]));
else main();

function mixed(len) {
  const out = Buffer.allocUnsafe(len);
  let state = 0x9e3779b9;
  let at = 0;
  while (at < len) {
    if ((at >> 12) % 3 === 0) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      out[at++] = state & 0xff;
    } else {
      const line = `${at} GET /item/${state % 1000} 200 ${(state >>> 8) % 97}ms\n`;
      at += out.write(line, at, 'latin1');
    }
  }
  return out;
}

async function child({ job, maxThreads, mib }) {
  const zlib = require('node:zlib');
  const { Pool } = require('..');
  const input = mixed(mib << 20);
  const pool = new Pool(maxThreads === 1 ? { maxThreads: 1 } : {});
  await new Promise((r) => setTimeout(r, 50));
  const t0 = performance.now();
  let output;
  if (job === 'createGzip') {
    const stream = pool.createGzip();
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    const done = new Promise((resolve, reject) => {
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    for (let at = 0; at < input.length; at += 1 << 20) {
      if (!stream.write(input.subarray(at, at + (1 << 20))))
        await new Promise((r) => stream.once('drain', r));
    }
    stream.end();
    await done;
    output = Buffer.concat(chunks);
  } else {
    output = (await pool.post(input, { kernel: job })).result;
  }
  const ms = performance.now() - t0;
  let ok;
  if (job === 'blake3') ok = output.toString('hex');
  else {
    // zstd: node:zlib's decoder where this Node has one, else the pool's.
    const back =
      job !== 'zstdCompress'
        ? zlib.gunzipSync(output)
        : (zlibZstd(zlib, output) ??
          (await pool.post(output, { kernel: 'zstdDecompress', maxOutputBytes: input.length }))
            .result);
    ok = back.equals(input);
  }
  await pool.close();
  process.stdout.write(JSON.stringify({ ms, size: output.length, ok }));
}

/** node:zlib's zstd where this Node has it (22.15+), else null. */
function zlibZstd(zlib, data) {
  return typeof zlib.zstdDecompressSync === 'function' ? zlib.zstdDecompressSync(data) : null;
}

function main() {
  const { values } = parseArgs({
    options: {
      mib: { type: 'string', default: '128' },
      reps: { type: 'string', default: '3' },
      jobs: { type: 'string', default: JOBS.join(',') },
    },
  });
  const jobs = values.jobs.split(',');
  for (const job of jobs) if (!JOBS.includes(job)) throw new Error(`unknown job ${job}`);
  const mib = Number(values.mib);
  const reps = Number(values.reps);
  console.log(
    `${mib} MiB of mixed text and noise, ${os.availableParallelism()} CPUs (${os.cpus()[0].model}), ` +
      `${reps} reps, fresh process each; median [min-max] of (one thread's time / default pool's)`,
  );
  console.log('| job | speed-up | size vs one thread | output checked |');
  console.log('|---|---|---|---|');
  for (const job of jobs) {
    const ratios = [];
    const sizes = [];
    const checks = new Set();
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 ? [1, 0] : [0, 1];
      const r = {};
      for (const maxThreads of order) {
        const p = spawnSync(
          process.execPath,
          [__filename, '--child', JSON.stringify({ job, maxThreads, mib })],
          { encoding: 'utf8', maxBuffer: 1 << 20 },
        );
        if (p.status !== 0) throw new Error(`${job}: ${p.stderr}`);
        r[maxThreads] = JSON.parse(p.stdout);
      }
      ratios.push(r[1].ms / r[0].ms);
      sizes.push(r[0].size / r[1].size);
      if (job === 'blake3') checks.add(r[0].ok === r[1].ok ? 'same digest' : 'DIGESTS DIFFER');
      else
        checks.add(r[0].ok === true && r[1].ok === true ? 'decodes to the input' : String(r[0].ok));
    }
    const s = (xs, d) => {
      const y = xs.slice().sort((a, b) => a - b);
      return `${median(y).toFixed(d)} [${y[0].toFixed(d)}-${y[y.length - 1].toFixed(d)}]`;
    };
    console.log(`| ${job} | ${s(ratios, 2)}x | ${s(sizes, 4)} | ${[...checks].join(', ')} |`);
  }
}
