'use strict';
// The clients of bench/http.js, each kind in a process of its own (so the
// /health probe's own event loop is idle, and its latency is the server's):
//   node http-load.js load <port> <connections> <warmupMs> <durationMs> [encoding]
//   node http-load.js health <port> 0 <warmupMs> <durationMs>
// `load`: `connections` clients ask GET /data (Accept-Encoding: encoding,
// gzip by default) back
// to back and read each body whole; prints requests/s over the measured
// interval, the encoded bytes of one response and its own CPU per request. `health`: one client asks
// GET /health every 10 ms; prints its latencies (p50, p99, ms).

const { Client } = require('undici');
const { quantile } = require('../stats');

const mode = process.argv[2];
const [port, connections, warmupMs, durationMs] = process.argv.slice(3, 7).map(Number);
const encoding = process.argv[7] ?? 'gzip';
const origin = `http://127.0.0.1:${port}`;

async function main() {
  let measuring = false;
  let stop = false;
  let requests = 0;
  let encodedBytes = 0;
  let all = 0;
  const cpu = process.cpuUsage();
  const loaders = Array.from({ length: mode === 'load' ? connections : 0 }, async () => {
    const client = new Client(origin, { pipelining: 1 });
    while (!stop) {
      const res = await client.request({
        path: '/data',
        method: 'GET',
        headers: { 'accept-encoding': encoding },
      });
      let bytes = 0;
      for await (const chunk of res.body) bytes += chunk.length;
      if (res.statusCode !== 200 || res.headers['content-encoding'] !== encoding)
        throw new Error(`GET /data: ${res.statusCode} ${res.headers['content-encoding']}`);
      encodedBytes = bytes;
      all++;
      if (measuring) requests++;
    }
    await client.close();
  });
  const health = [];
  const prober = (async () => {
    if (mode !== 'health') return;
    const client = new Client(origin, { pipelining: 1 });
    while (!stop) {
      const t = process.hrtime.bigint();
      const res = await client.request({ path: '/health', method: 'GET' });
      await res.body.text();
      if (measuring) health.push(Number(process.hrtime.bigint() - t) / 1e6);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await client.close();
  })();
  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  measuring = true;
  const t = process.hrtime.bigint();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  measuring = false;
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  const counted = requests;
  stop = true;
  await Promise.all([...loaders, prober]);
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify(
      mode === 'load'
        ? { rps: counted / seconds, encodedBytes, cpuUsPerRequest: (used.user + used.system) / all }
        : {
            healthP50: quantile(health, 0.5),
            healthP99: quantile(health, 0.99),
            healthCount: health.length,
          },
    ),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
