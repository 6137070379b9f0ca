'use strict';
// The worst event-loop turn while two threads stream echo results to
// postMessage listeners: 60,000 x 4 KiB, 300 x 1 MiB as 'hex', 600 x 1 MiB.
//   node bench/probes/delivery-turns.js
const { Pool } = require('../..');
async function run(enc, size, count) {
  const pool = new Pool({ kernel: 'echo', maxThreads: 2, encoding: enc });
  let n = 0,
    worst = 0,
    last = performance.now();
  pool.on('message', () => n++);
  const b = Buffer.alloc(size);
  for (let i = 0; i < count; i++) pool.postMessage(b);
  last = performance.now();
  await new Promise((resolve) => {
    (function t() {
      const x = performance.now();
      worst = Math.max(worst, x - last);
      last = x;
      n < count ? setImmediate(t) : resolve();
    })();
  });
  console.log(enc, size, 'worst turn', worst.toFixed(1), 'ms');
  await pool.close();
}
(async () => {
  await run('buffer', 4096, 60000);
  await run('hex', 1 << 20, 300);
  await run('buffer', 1 << 20, 600);
})();
