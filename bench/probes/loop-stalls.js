#!/usr/bin/env node
'use strict';
// Probe: where in a warm demo round the event loop stalls. A 1 ms timer chain
// records every interval; intervals more than 0.8 ms late are printed with
// their position in the round (the posting loop is the one at the start).
//
//   node bench/probes/loop-stalls.js      (add --trace-gc to correlate with GC)
const { Pool } = require('../..');
const { messageRound } = require('./message-round');
const crypto = require('node:crypto');
const msgs = Array.from({ length: 4096 }, (_, id) => ({ id, data: crypto.randomBytes(65536) }));
const pool = new Pool();
const round = () => messageRound(pool, msgs);
(async () => {
  await round();
  await round();
  const gaps = [];
  let last = performance.now();
  let on = true;
  const tick = () => {
    const n = performance.now();
    gaps.push([n - last, n]);
    last = n;
    if (on) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  await new Promise((r) => setTimeout(r, 10));
  const t0 = performance.now();
  await round();
  const t1 = performance.now();
  await new Promise((r) => setTimeout(r, 3));
  on = false;
  const big = gaps
    .filter(([d, n]) => d > 1.8 && n > t0)
    .map(([d, n]) => `${(d - 1).toFixed(2)}ms ending at +${(n - t0).toFixed(1)}`);
  console.log(
    `round ${(t1 - t0).toFixed(0)} ms, ${gaps.filter(([, n]) => n > t0).length} ticks; stalls:`,
    big.join(', '),
  );
  await pool.close();
})();
