#!/usr/bin/env node
'use strict';
// Probe: what the workers' lower priority (niceIncrement) costs when other
// processes keep every core busy. 32 gzips of 1 MiB of JSON, all at once,
// through node:zlib (libuv's threads, the process's priority) and through
// a pool at niceIncrement 10 (the default) and 0, each in a fresh process:
// on an idle machine, beside one spinning process per core in this
// session, and beside them in a session of their own (Linux's autogroups
// then share the CPU between sessions first, whatever the nice values).
//
//   node bench/probes/niced-against-others.js [rounds]
const { execFileSync, spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const MODES = ['node:zlib', '10', '0'];

/** One measurement in a fresh process: MiB/s. */
function measure(mode) {
  const script = `
    const zlib = require('node:zlib');
    const { promisify } = require('node:util');
    const { Pool } = require(${JSON.stringify(ROOT)});
    const lines = [];
    for (let i = 0; lines.length < 30000; i++)
      lines.push(JSON.stringify({ id: i, user: 'user-' + (i % 313), tags: ['red', String(i % 17)], score: (i * 7919) % 1000 }));
    const body = Buffer.from(lines.join('\\n')).subarray(0, 1 << 20);
    (async () => {
      let run;
      let pool;
      if (${JSON.stringify(mode)} === 'node:zlib') run = (gz => () => gz(body))(promisify(zlib.gzip));
      else {
        pool = new Pool({ kernel: 'gzip', niceIncrement: ${Number(mode) || 0} });
        run = () => pool.post(body);
      }
      await Promise.all(Array.from({ length: 4 }, run));
      const t = process.hrtime.bigint();
      await Promise.all(Array.from({ length: 32 }, run));
      const s = Number(process.hrtime.bigint() - t) / 1e9;
      console.log(32 / s);
      if (pool) await pool.close();
    })();`;
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}

/** One spinning process per core; `detached`: in a session of its own. */
function spinners(detached) {
  return Array.from({ length: os.availableParallelism() }, () =>
    spawn(process.execPath, ['-e', 'for (;;);'], { detached, stdio: 'ignore' }),
  );
}

const rounds = Number(process.argv[2] ?? 2);
for (const [what, detached] of [
  ['idle', undefined],
  ['spinners in this session', false],
  ['spinners in their own session', true],
]) {
  const spinning = detached === undefined ? [] : spinners(detached);
  try {
    const rows = MODES.map((mode) => {
      const rates = Array.from({ length: rounds }, () => measure(mode).toFixed(0));
      return `${mode.padEnd(10)} ${rates.join(', ')} MiB/s`;
    });
    console.log(`${what}:\n  ${rows.join('\n  ')}`);
  } finally {
    for (const child of spinning) child.kill('SIGKILL');
  }
}
