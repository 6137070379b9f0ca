'use strict';
// tidepool with one thread against node:zlib's sync calls, per codec:
// the per-core comparison in docs/benchmarks-history.md ("Choosing the codecs").
//   node bench/probes/codec-per-core.js
const zlib = require('zlib');
const { Pool } = require('../..');
const json = [];
for (let i = 0; json.length < 20000; i++)
  json.push(
    JSON.stringify({
      id: i,
      user: 'user-' + (i % 313),
      tags: ['red', 'blue', String(i % 17)],
      score: (i * 7919) % 1000,
    }),
  );
const big = Buffer.from(json.join('\n'));
const msgs = Array.from({ length: 256 }, (_, i) =>
  big.subarray((i * 4099) % (big.length - 65536), ((i * 4099) % (big.length - 65536)) + 65536),
);
const gz = msgs.map((m) => zlib.gzipSync(m));
(async () => {
  const pool = new Pool({ maxThreads: 1, minThreads: 1 });
  const ops = {
    'gzip6 node': () => msgs.forEach((m) => zlib.gzipSync(m)),
    'gzip6 tidepool': () =>
      Promise.all(msgs.map((m) => pool.post(m, { kernel: 'gzip', params: { level: 6 } }))),
    'gzip1 node': () => msgs.forEach((m) => zlib.gzipSync(m, { level: 1 })),
    'gzip1 tidepool': () =>
      Promise.all(msgs.map((m) => pool.post(m, { kernel: 'gzip', params: { level: 1 } }))),
    'gunzip node': () => gz.forEach((m) => zlib.gunzipSync(m)),
    'gunzip tidepool': () => Promise.all(gz.map((m) => pool.post(m, { kernel: 'gunzip' }))),
    'brotli4 node': () =>
      msgs.forEach((m) =>
        zlib.brotliCompressSync(m, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
      ),
    'brotli4 tidepool': () =>
      Promise.all(
        msgs.map((m) => pool.post(m, { kernel: 'brotliCompress', params: { quality: 4 } })),
      ),
  };
  const out = {};
  for (const [name, f] of Object.entries(ops)) {
    await f();
    const t = process.hrtime.bigint();
    await f();
    out[name] = (256 * 65536) / 1e6 / (Number(process.hrtime.bigint() - t) / 1e9);
  }
  const r = (a) => (out[a + ' tidepool'] / out[a + ' node']).toFixed(2);
  console.log(
    Object.entries(out)
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(', '),
  );
  console.log(
    `ratios (1 thread vs node sync): gzip6 ${r('gzip6')} gzip1 ${r('gzip1')} gunzip ${r('gunzip')} brotli4 ${r('brotli4')}`,
  );
  console.log(
    'sizes: gzip1 node',
    msgs.reduce((a, m) => a + zlib.gzipSync(m, { level: 1 }).length, 0),
  );
  const ours = await Promise.all(
    msgs.map((m) => pool.post(m, { kernel: 'gzip', params: { level: 1 } })),
  );
  console.log(
    'sizes: gzip1 ours',
    ours.reduce((a, r) => a + r.result.length, 0),
  );
  await pool.close();
})();
