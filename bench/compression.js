'use strict';
// The compression section of `npm run bench`: 1024 messages of 64 KiB
// (half JSON-like records, half this repository's own source text) through
// tidepool and through what a Node service uses today: zlib's sync calls
// on the event loop, its async calls (libuv's shared 4-thread pool), and
// piscina with a zlib worker. Every output is checked; MB/s counts the
// uncompressed bytes (a compressor's input, a decoder's output).
// The libuv cases time fs.promises.readFile and dns.lookup while the
// compression runs, to show who else waits for libuv's threads.

const fs = require('node:fs');
const path = require('node:path');
const { withLoopHealth } = require('./loop-health');
const { inFlight } = require('./in-flight');
const { sourceCorpus } = require('./corpus');

const ROOT = path.join(__dirname, '..');
const MESSAGES = 1024;
const BYTES = 64 * 1024;

/** The messages: even ones JSON-like, odd ones source text, each 64 KiB. */
function messages() {
  const records = [];
  let size = 0;
  for (let i = 0; size < 8 * BYTES; i++) {
    const line = JSON.stringify({
      id: i,
      user: `user-${i % 313}`,
      tags: ['red', 'blue', String(i % 17)],
      score: (i * 7919) % 1000,
      ok: i % 3 === 0,
    });
    records.push(line);
    size += line.length + 1;
  }
  const json = Buffer.from(records.join('\n'));
  const source = sourceCorpus();
  return Array.from({ length: MESSAGES }, (_, i) => {
    const from = i % 2 === 0 ? json : source;
    const start = (i * 4099) % (from.length - BYTES);
    return from.subarray(start, start + BYTES);
  });
}

const total = (bufs) => bufs.reduce((a, b) => a + b.length, 0);
const megabytes = (bufs) => total(bufs) / 1e6;

/** node:zlib's name and options for each operation measured. */
const OPS = {
  gzip: { node: 'gzip', options: { level: 6 }, params: { level: 6 }, kernel: 'gzip' },
  gunzip: { node: 'gunzip', options: undefined, params: undefined, kernel: 'gunzip' },
  brotli: {
    node: 'brotliCompress',
    options: { params: { [require('node:zlib').constants.BROTLI_PARAM_QUALITY]: 4 } },
    params: { quality: 4 },
    kernel: 'brotliCompress',
  },
  zstd: { node: null, options: undefined, params: { level: 3 }, kernel: 'zstdCompress' },
  lz4: { node: null, options: undefined, params: undefined, kernel: 'lz4Compress' },
};

/** The inputs of `op`: the messages, or (for gunzip) their gzip. */
function inputs(op) {
  const zlib = require('node:zlib');
  const msgs = messages();
  return op === 'gunzip' ? msgs.map((m) => zlib.gzipSync(m)) : msgs;
}

/** Checks a sample of outputs with node:zlib (zstd and LZ4, which Node 20 lacks: their magic numbers). */
function verify(op, ins, outs) {
  const zlib = require('node:zlib');
  for (let i = 0; i < ins.length; i += 97) {
    const out = Buffer.from(outs[i]);
    let ok;
    if (op === 'gzip') ok = zlib.gunzipSync(out).equals(ins[i]);
    else if (op === 'gunzip') ok = zlib.gunzipSync(ins[i]).equals(out);
    else if (op === 'brotli') ok = zlib.brotliDecompressSync(out).equals(ins[i]);
    else if (op === 'zstd') ok = out.readUInt32LE(0) === 0xfd2fb528;
    else ok = out.readUInt32LE(0) === 0x184d2204;
    if (!ok) throw new Error(`wrong ${op} output for message ${i}`);
  }
}

/** One timed round of `run(inputs)` with event-loop health and CPU. */
async function timed(op, runRound, extra = {}) {
  const ins = inputs(op);
  await runRound(ins.slice(0, 64)); // warm-up: JIT, threads, allocator
  let outs;
  const cpu = process.cpuUsage();
  const r = await withLoopHealth(async () => {
    const t = process.hrtime.bigint();
    outs = await runRound(ins);
    // MB/s of uncompressed data: a compressor's input, a decoder's output.
    return {
      value: megabytes(op === 'gunzip' ? outs : ins) / (Number(process.hrtime.bigint() - t) / 1e9),
    };
  });
  const used = process.cpuUsage(cpu);
  verify(op, ins, outs);
  return { ...r, ...extra, cpuS: (used.user + used.system) / 1e6, ratio: total(outs) / total(ins) };
}

async function tidepool(op) {
  const { Pool } = require(ROOT);
  const { kernel, params } = OPS[op];
  const pool = new Pool({ kernel, params, maxOutputBytes: 1 << 30 });
  const r = await timed(
    op,
    (ins) => Promise.all(ins.map((m) => pool.post(m))).then((rs) => rs.map((x) => x.result)),
    {
      threads: pool.stats().threads,
    },
  );
  r.threads = Math.max(r.threads, pool.stats().threads);
  await pool.close();
  return r;
}

async function zlibAsync(op) {
  const zlib = require('node:zlib');
  const { promisify } = require('node:util');
  const fn = promisify(zlib[OPS[op].node]);
  return timed(op, (ins) => Promise.all(ins.map((m) => fn(m, OPS[op].options))), { threads: 4 });
}

async function zlibSync(op) {
  const zlib = require('node:zlib');
  const fn = zlib[`${OPS[op].node}Sync`];
  return timed(op, async (ins) => ins.map((m) => fn(m, OPS[op].options)), { threads: 1 });
}

async function piscina(op) {
  const { Piscina } = require('piscina');
  const threads = require('node:os').availableParallelism();
  const pool = new Piscina({
    filename: path.join(__dirname, 'workers', 'zlib-piscina.js'),
    maxThreads: threads,
    minThreads: threads,
  });
  const r = await timed(
    op,
    (ins) =>
      Promise.all(
        ins.map((data) => pool.run({ op: OPS[op].node, data, options: OPS[op].options })),
      ),
    {
      threads,
    },
  );
  await pool.destroy();
  return r;
}

/**
 * fs.promises.readFile of a small file and dns.lookup('localhost'), one
 * after the other in a loop, while `load` (a promise) runs; p50/p99 of each.
 */
async function libuvLatency(load) {
  const dns = require('node:dns').promises;
  const file = path.join(ROOT, 'package.json');
  const read = [];
  const lookup = [];
  let done = false;
  const probe = (async () => {
    while (!done) {
      let t = process.hrtime.bigint();
      await fs.promises.readFile(file);
      read.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      await dns.lookup('localhost');
      lookup.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  })();
  await load();
  done = true;
  await probe;
  const { quantile } = require('./stats');
  return {
    value: quantile(read, 0.5),
    readP50: quantile(read, 0.5),
    readP99: quantile(read, 0.99),
    dnsP50: quantile(lookup, 0.5),
    dnsP99: quantile(lookup, 0.99),
  };
}

async function starvation(kind) {
  const zlib = require('node:zlib');
  const { promisify } = require('node:util');
  const ins = messages();
  if (kind === 'idle') return libuvLatency(() => new Promise((r) => setTimeout(r, 500)));
  if (kind === 'zlib') {
    const gzip = promisify(zlib.gzip);
    return libuvLatency(() => inFlight(ins, 64, (m) => gzip(m)));
  }
  const { Pool } = require(ROOT);
  const pool = new Pool({ kernel: 'gzip' });
  const r = await libuvLatency(() => inFlight(ins, 64, (m) => pool.post(m)));
  await pool.close();
  return r;
}

const MBS = 'MB/s';
const CASES = {
  'zip: tidepool gzip level 6': { unit: MBS, run: () => tidepool('gzip') },
  'zip: zlib.gzip level 6 (libuv pool)': { unit: MBS, run: () => zlibAsync('gzip') },
  'zip: zlib.gzipSync level 6 on the event loop': { unit: MBS, run: () => zlibSync('gzip') },
  'zip: piscina, zlib.gzipSync level 6 in workers': { unit: MBS, run: () => piscina('gzip') },
  'zip: tidepool gunzip': { unit: MBS, run: () => tidepool('gunzip') },
  'zip: zlib.gunzip (libuv pool)': { unit: MBS, run: () => zlibAsync('gunzip') },
  'zip: piscina, zlib.gunzipSync in workers': { unit: MBS, run: () => piscina('gunzip') },
  'zip: tidepool brotliCompress quality 4': { unit: MBS, run: () => tidepool('brotli') },
  'zip: zlib.brotliCompress quality 4 (libuv pool)': { unit: MBS, run: () => zlibAsync('brotli') },
  'zip: tidepool zstdCompress level 3': { unit: MBS, run: () => tidepool('zstd') },
  'zip: tidepool lz4Compress': { unit: MBS, run: () => tidepool('lz4') },
  'libuv: readFile + dns.lookup, idle': { unit: 'ms readFile p50', run: () => starvation('idle') },
  'libuv: readFile + dns.lookup while zlib.gzip compresses (64 in flight)': {
    unit: 'ms readFile p50',
    run: () => starvation('zlib'),
  },
  'libuv: readFile + dns.lookup while tidepool gzip compresses (64 in flight)': {
    unit: 'ms readFile p50',
    run: () => starvation('tidepool'),
  },
};

const RATIOS = [
  ['zip: tidepool gzip level 6', 'zip: zlib.gzip level 6 (libuv pool)'],
  ['zip: tidepool gzip level 6', 'zip: zlib.gzipSync level 6 on the event loop'],
  ['zip: tidepool gzip level 6', 'zip: piscina, zlib.gzipSync level 6 in workers'],
  ['zip: tidepool gunzip', 'zip: zlib.gunzip (libuv pool)'],
  ['zip: tidepool gunzip', 'zip: piscina, zlib.gunzipSync in workers'],
  ['zip: tidepool brotliCompress quality 4', 'zip: zlib.brotliCompress quality 4 (libuv pool)'],
  ['zip: tidepool zstdCompress level 3', 'zip: zlib.gzip level 6 (libuv pool)'],
  ['zip: tidepool lz4Compress', 'zip: zlib.gzip level 6 (libuv pool)'],
];

module.exports = { CASES, RATIOS, libuvLatency };
