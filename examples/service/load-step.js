'use strict';
// A load step against a running example service, with its pool's metrics
// read from /metrics every 100 ms while the step runs and until the pool is
// idle again: what Prometheus would see, at a finer grain.
//
//   node load-step.js [API URL] [metrics URL] [requests] [MiB per request]
//   node load-step.js http://127.0.0.1:8080 http://127.0.0.1:9090 32 8
//
// The defaults (32 requests of 8 MiB, all at once) keep a 2-thread pool
// busy for about a second.

const crypto = require('node:crypto');

const [
  base = 'http://127.0.0.1:8080',
  metrics = 'http://127.0.0.1:9090',
  requests = '32',
  mib = '8',
] = process.argv.slice(2);
const count = Number(requests);
const size = Number(mib) * 1024 * 1024;
if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(size) || size < 1) {
  console.error(
    'usage: node load-step.js [API URL] [metrics URL] [requests ≥ 1] [MiB per request ≥ 1]',
  );
  process.exit(2);
}

/** The samples of the pool's metrics that the table shows. */
async function read() {
  const text = await (await fetch(`${metrics}/metrics`)).text();
  const get = (name, labels = '') => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return {
    threads: get('tidepool_threads'),
    busy: get('tidepool_threads_busy'),
    queued: get('tidepool_queue_length'),
    age: get('tidepool_queue_oldest_age_seconds'),
    completed: get('tidepool_tasks_total', '{outcome="completed"}'),
    waitCount: get('tidepool_task_wait_seconds_count'),
    waitSum: get('tidepool_task_wait_seconds_sum'),
  };
}

async function main() {
  const body = crypto.randomBytes(size);
  const start = performance.now();
  const first = await read();
  const rows = [];
  let running = true;
  const step = Promise.all(
    Array.from({ length: count }, async () => {
      const res = await fetch(`${base}/sha256`, { method: 'POST', body });
      await res.arrayBuffer();
      return res.status;
    }),
  ).finally(() => (running = false));
  for (;;) {
    const m = await read();
    rows.push({ ms: Math.round(performance.now() - start), ...m });
    if (!running && m.queued === 0 && m.busy === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const statuses = await step;
  const last = rows.at(-1);
  console.log(
    '| ms | threads | busy | queued | oldest age (s) | completed | mean wait so far (ms) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const tasks = r.waitCount - first.waitCount;
    const meanWait = tasks > 0 ? ((r.waitSum - first.waitSum) / tasks) * 1000 : 0;
    console.log(
      `| ${r.ms} | ${r.threads} | ${r.busy} | ${r.queued} | ${r.age.toFixed(3)} | ${r.completed - first.completed} | ${meanWait.toFixed(0)} |`,
    );
  }
  const ok = statuses.filter((s) => s === 200).length;
  console.log(
    `\n${ok} of ${count} requests answered 200; ${last.completed - first.completed} tasks completed`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
