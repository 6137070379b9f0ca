#!/usr/bin/env node
'use strict';
// Probe: how long one AbortController.abort() blocks the event loop when its
// signal is shared by N queued tasks (the pool's one thread is asleep on a
// long task, so all N are in the queue). Median of 5 rounds per N.
//
//   node bench/probes/abort-cost.js [root] [N ...]
const root = process.argv[2] && !/^\d+$/.test(process.argv[2]) ? process.argv[2] : '../..';
const sizes = process.argv
  .slice(2)
  .filter((a) => /^\d+$/.test(a))
  .map(Number);
const { Pool, micros } = require(root === '../..' ? '../..' : require('node:path').resolve(root));

(async () => {
  for (const n of sizes.length ? sizes : [1000, 10_000, 100_000]) {
    const times = [];
    for (let round = 0; round < 5; round++) {
      const pool = new Pool({ kernel: 'sleep', minThreads: 1, maxThreads: 1 });
      const stop = new AbortController();
      const blocker = pool.post(micros(60_000_000), { signal: stop.signal }).catch(() => {});
      while (pool.stats().busyThreads === 0) await new Promise((r) => setTimeout(r, 1));
      const ac = new AbortController();
      const tasks = [];
      for (let i = 0; i < n; i++)
        tasks.push(pool.post(micros(1), { signal: ac.signal }).catch(() => {}));
      const t = process.hrtime.bigint();
      ac.abort();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      stop.abort();
      await Promise.all([blocker, ...tasks]);
      await pool.close();
    }
    times.sort((a, b) => a - b);
    console.log(
      `abort() of ${n} queued tasks: median ${times[2].toFixed(1)} ms [${times[0].toFixed(1)}–${times[4].toFixed(1)}]`,
    );
  }
})();
