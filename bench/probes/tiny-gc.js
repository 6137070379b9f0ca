#!/usr/bin/env node
'use strict';
// Probe: share of a 200,000-task round spent in GC pauses (PerformanceObserver
// 'gc' entries), for post() all at once, bare promises without a pool, and
// postMessage + 'message'.
//
//   node bench/probes/tiny-gc.js post | floor | postMessage
const { PerformanceObserver, performance } = require('node:perf_hooks');
const { Pool } = require('../..');
const { messageRound } = require('./message-round');
const crypto = require('node:crypto');
const kind = process.argv[2] || 'post';
const msgs = Array.from({ length: 200000 }, () => crypto.randomBytes(64));
let gcMs = 0,
  gcCount = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcCount++;
  }
}).observe({ entryTypes: ['gc'] });
const pool = new Pool();
const round =
  kind === 'floor'
    ? () => {
        const rs = new Array(msgs.length);
        const all = Promise.all(
          msgs.map(
            (m, i) =>
              new Promise((r) => {
                rs[i] = r;
              }),
          ),
        );
        setImmediate(() => {
          for (let i = 0; i < msgs.length; i++)
            rs[i]({ result: msgs[i].subarray(0, 32), message: msgs[i] });
        });
        return all;
      }
    : kind === 'postMessage'
      ? () => messageRound(pool, msgs)
      : () => Promise.all(msgs.map((m) => pool.post(m)));
(async () => {
  const out = [];
  for (let r = 0; r < 5; r++) {
    gcMs = 0;
    gcCount = 0;
    const t = performance.now();
    await round();
    const ms = performance.now() - t;
    await new Promise((r) => setTimeout(r, 5));
    if (r > 0)
      out.push(
        `${(200000 / ms / 1000).toFixed(2)}M/s gc ${((100 * gcMs) / ms).toFixed(0)}%(${gcCount})`,
      );
  }
  console.log(kind.padEnd(12), out.join(' | '));
  await pool.close();
})();
