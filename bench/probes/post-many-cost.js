#!/usr/bin/env node
'use strict';
// Probe: the JS time of one postMany() of the article's 4096 messages (64 KiB
// each, `{ id, data }`), i.e. how long it holds the event loop: reading and
// checking every message and queuing the first chunk of 1024 (the others go
// one per later turn). Two settings, alternated, 40 calls each:
//   * idle: the pool's only worker is asleep, nothing competes for the core
//     and the messages stay in cache between calls;
//   * after a round: each call follows a full round of real hashing, which
//     streamed 256 MiB through the caches (as in the demo).
// Prints median and [p10 - p90] in ms.
//
//   node bench/probes/post-many-cost.js
const { Pool, micros } = require('../..');
const crypto = require('node:crypto');

const msgs = Array.from({ length: 4096 }, (_, id) => ({ id, data: crypto.randomBytes(65536) }));
const summary = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))].toFixed(2);
  return `${at(0.5)} ms [${at(0.1)} - ${at(0.9)}]`;
};

async function idle(pool) {
  const blocker = pool.post(micros(10_000_000), { kernel: 'sleep' }).catch(() => {});
  while (pool.stats().busyThreads === 0) await new Promise((r) => setTimeout(r, 1));
  const ac = new AbortController();
  const t = performance.now();
  const batch = pool.postMany(msgs, { signal: ac.signal });
  const ms = performance.now() - t;
  batch.catch(() => {});
  ac.abort();
  await pool.destroy();
  await blocker;
  return ms;
}

(async () => {
  const idleMs = [];
  const afterMs = [];
  const busy = new Pool();
  await busy.postMany(msgs);
  for (let rep = 0; rep < 40; rep++) {
    idleMs.push(await idle(new Pool({ maxThreads: 1 })));
    await busy.postMany(msgs); // a full round: the caches now hold other bytes
    const t = performance.now();
    const round = busy.postMany(msgs);
    afterMs.push(performance.now() - t);
    await round;
  }
  await busy.close();
  console.log(
    `postMany() of 4096 × 64 KiB, JS time: idle ${summary(idleMs)}; after a round ${summary(afterMs)}`,
  );
})();
