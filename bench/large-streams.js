#!/usr/bin/env node
'use strict';
// A proof, not a ratio: streams past every output limit through node:zlib
// after @tidepool-rs/pool/zlib's install(), as tar or an HTTP client uses
// them, checked against node:zlib's own and with the process's peak RSS.
//
//   node bench/large-streams.js [--gunzip-mib 320] [--gzip-gib 5]
//
// gunzip: node:zlib's gzip of N MiB (text, a quarter noise) decoded by the
// installed createGunzip(); its output hashed against the input's.
// gzip: N GiB made on the fly, through the installed createGzip(), its
// output decoded by node:zlib's own createGunzip() (taken before install)
// and hashed against the input's. Memory: the peak RSS (VmHWM) of the
// process, which holds neither input nor output whole.

const crypto = require('node:crypto');
const fs = require('node:fs');
const { Readable, Writable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const { parseArgs } = require('node:util');
const nodeZlib = require('node:zlib');

const { values } = parseArgs({
  options: {
    'gunzip-mib': { type: 'string', default: '320' },
    'gzip-gib': { type: 'string', default: '5' },
  },
});
const MIB = 1 << 20;
// node:zlib's own, before install() replaces them.
const nodeGzip = nodeZlib.createGzip;
const nodeGunzip = nodeZlib.createGunzip;
require('@tidepool-rs/pool/zlib').install();

/** 1 MiB of text-like bytes, every fourth KiB of it noise (gzip: about 3:1). */
function block(i) {
  const out = Buffer.alloc(MIB);
  const words = Buffer.from(`record ${i} {"id":${i},"user":"user-${i % 97}","tags":["a","b"]}\n`);
  for (let at = 0; at < MIB; at += words.length) words.copy(out, at);
  for (let at = 0; at < MIB; at += 4096) crypto.randomFillSync(out, at, 1024);
  return out;
}

/** A Readable of `blocks` blocks, hashing what it gives. */
function source(blocks, hash) {
  let i = 0;
  return new Readable({
    read() {
      if (i === blocks) return this.push(null);
      const b = block(i++);
      hash.update(b);
      this.push(b);
    },
  });
}

/** A Writable that hashes what it is given and counts it. */
function sink(hash, counted) {
  return new Writable({
    write(chunk, _enc, cb) {
      hash.update(chunk);
      counted.bytes += chunk.length;
      cb();
    },
  });
}

function peakRssMib() {
  const line = fs.readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\s+(\d+) kB/);
  return line ? Number(line[1]) / 1024 : NaN;
}

async function gunzip(mib) {
  // node:zlib's gzip of the input, made in pieces (no 320 MiB Buffer).
  const compressed = [];
  const inHash = crypto.createHash('sha256');
  await pipeline(
    source(mib, inHash),
    nodeGzip(),
    new Writable({
      write(chunk, _enc, cb) {
        compressed.push(chunk);
        cb();
      },
    }),
  );
  const want = inHash.digest('hex');
  const outHash = crypto.createHash('sha256');
  const counted = { bytes: 0 };
  const before = peakRssMib();
  const started = process.hrtime.bigint();
  await pipeline(Readable.from(compressed), nodeZlib.createGunzip(), sink(outHash, counted));
  const s = Number(process.hrtime.bigint() - started) / 1e9;
  const equal = outHash.digest('hex') === want;
  console.log(
    `gunzip, installed: ${mib} MiB out of ${(compressed.reduce((n, c) => n + c.length, 0) / MIB).toFixed(1)} MiB in ${s.toFixed(1)} s; ` +
      `equal to the input: ${equal}; peak RSS ${peakRssMib().toFixed(0)} MiB (${before.toFixed(0)} before, the compressed input held)`,
  );
  if (!equal || counted.bytes !== mib * MIB) process.exitCode = 1;
}

async function gzip(gib) {
  const blocks = gib * 1024;
  const inHash = crypto.createHash('sha256');
  const outHash = crypto.createHash('sha256');
  const counted = { bytes: 0 };
  let compressedBytes = 0;
  const started = process.hrtime.bigint();
  await pipeline(
    source(blocks, inHash),
    nodeZlib.createGzip(),
    async function* (chunks) {
      for await (const c of chunks) {
        compressedBytes += c.length;
        yield c;
      }
    },
    nodeGunzip(),
    sink(outHash, counted),
  );
  const s = Number(process.hrtime.bigint() - started) / 1e9;
  const equal = outHash.digest('hex') === inHash.digest('hex');
  console.log(
    `gzip, installed: ${gib} GiB in, ${(compressedBytes / MIB).toFixed(0)} MiB out in ${s.toFixed(1)} s, decoded by node:zlib; ` +
      `equal to the input: ${equal}; peak RSS ${peakRssMib().toFixed(0)} MiB`,
  );
  if (!equal || counted.bytes !== blocks * MIB) process.exitCode = 1;
}

(async () => {
  console.log(`${process.version}, ${require('node:os').cpus()[0].model}`);
  if (Number(values['gunzip-mib']) > 0) await gunzip(Number(values['gunzip-mib']));
  if (Number(values['gzip-gib']) > 0) await gzip(Number(values['gzip-gib']));
  await require('@tidepool-rs/pool/zlib').pool.close();
})();
