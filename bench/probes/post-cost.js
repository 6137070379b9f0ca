#!/usr/bin/env node
'use strict';
// Probe: the JS thread's cost of one postMessage() in steady state (slots
// reused), with the pool's only worker asleep so nothing competes for the
// core or the queue. Prints the median over 12 rounds of 4096 posts.
//
//   node bench/probes/post-cost.js
const { Pool, micros } = require('../..');
const N = 4096;
const msgs = Array.from({ length: N }, (_, id) => ({ id, data: Buffer.alloc(65536, id) }));
(async () => {
  const pool = new Pool({ maxThreads: 1, kernel: 'xxh3' });
  const res = [];
  for (let rep = 0; rep < 15; rep++) {
    const blocker = pool.post(micros(30_000), { kernel: 'sleep' });
    await new Promise((r) => setTimeout(r, 2));
    let left = N;
    const done = new Promise((resolve) => {
      const on = () => {
        if (--left === 0) {
          pool.off('message', on);
          resolve();
        }
      };
      pool.on('message', on);
    });
    const t = performance.now();
    for (let i = 0; i < N; i++) pool.postMessage(msgs[i]);
    res.push(((performance.now() - t) * 1000) / N);
    await blocker;
    await done;
  }
  const warm = res.slice(3).sort((a, b) => a - b);
  console.log(
    'us/postMessage steady, queue growing, worker asleep: median',
    warm[warm.length >> 1].toFixed(3),
    'min',
    warm[0].toFixed(3),
  );
  await pool.close();
})();
