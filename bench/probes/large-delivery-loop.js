'use strict';
// Event-loop delay while 1024 gunzip results of ~300 KB each (large
// results: external Buffers made on the JS thread) arrive.
//   node bench/probes/large-delivery-loop.js
const { Pool } = require('../..');
const { gunzipInputs } = require('./gunzip-inputs');
const { monitorEventLoopDelay } = require('perf_hooks');
const ins = gunzipInputs();
(async () => {
  const pool = new Pool({ kernel: 'gunzip' });
  await Promise.all(ins.slice(0, 64).map((m) => pool.post(m)));
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await new Promise((r) => setTimeout(r, 20));
  h.reset();
  const t = process.hrtime.bigint();
  await Promise.all(ins.map((m) => pool.post(m)));
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  await new Promise((r) => setTimeout(r, 3));
  h.disable();
  console.log(
    'ms',
    ms.toFixed(1),
    'p99',
    (h.percentile(99) / 1e6 - 1).toFixed(2),
    'max',
    (h.max / 1e6 - 1).toFixed(2),
  );
  await pool.close();
})();
