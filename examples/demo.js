'use strict';
// The reference workload of the queue-age article (../shared/seeds/000_…),
// ported to tidepool: 4096 messages of 64 KiB random bytes, SHA-256 each,
// every result checked against its own message, with the timeline of
// threads coming and going.
//
//   npm run demo                 # defaults
//   node examples/demo.js --rounds 3 --idle-timeout 1000
//
// The article's Coordinator took `dataField: message => message.data`; here the
// default `select` does the same, and 'spawn' / 'retire' play the part of its
// 'port.open' / 'port.close'.

const crypto = require('node:crypto');
const { parseArgs } = require('node:util');
const { Pool } = require('..');

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '4096' },
    size: { type: 'string', default: String(64 * 1024) },
    rounds: { type: 'string', default: '1' },
    'idle-timeout': { type: 'string' },
  },
});
const COUNT = Number(args.messages);
const SIZE = Number(args.size);
const ROUNDS = Number(args.rounds);
const { defaults } = require('..');
const IDLE_TIMEOUT_MS =
  args['idle-timeout'] === undefined ? defaults.idleTimeoutMs : Number(args['idle-timeout']);

const t0 = performance.now();
const stamp = () => `+${(performance.now() - t0).toFixed(1).padStart(8)} ms`;
const log = (...parts) => console.log(stamp(), ...parts);

log(`Main : generating ${COUNT} messages of ${SIZE / 1024} KiB`);
const messages = Array.from({ length: COUNT }, (_, id) => ({ id, data: crypto.randomBytes(SIZE) }));
const expected = messages.map((m) => crypto.createHash('sha256').update(m.data).digest('hex'));
log('Main : generated (and computed the expected digests with node:crypto)');

const pool = new Pool({ kernel: 'sha256', encoding: 'hex', idleTimeoutMs: IDLE_TIMEOUT_MS });

pool
  .on('spawn', (e) =>
    log(`Pool : thread open   = +1 worker [${e.threadId}] -> ${e.threads} threads (${e.reason})`),
  )
  .on('retire', (e) =>
    log(`Pool : thread close  = -1 worker [${e.threadId}] -> ${e.threads} threads (${e.reason})`),
  )
  .on('spawnError', (e) =>
    log(`Pool : could not start a thread (${e.error}); going on with ${e.threads}`),
  )
  .on('error', (err, message) => {
    console.error(`task ${message && message.id} failed:`, err);
    process.exitCode = 1;
  });

function round(n) {
  return new Promise((resolve) => {
    let remain = COUNT;
    let wrong = 0;
    const start = performance.now();
    const onMessage = (result, message) => {
      if (result !== expected[message.id]) wrong++;
      if (--remain === 0) {
        const ms = performance.now() - start;
        pool.off('message', onMessage);
        const mb = (COUNT * SIZE) / 1e6;
        log(
          `Main : round ${n}: all ${COUNT} results received, ${wrong === 0 ? 'all correct' : `${wrong} WRONG`}: ` +
            `${mb.toFixed(0)} MB in ${ms.toFixed(1)} ms = ${(mb / (ms / 1000)).toFixed(0)} MB/s`,
        );
        if (wrong !== 0) process.exitCode = 1;
        resolve();
      }
    };
    pool.on('message', onMessage);
    for (const message of messages) pool.postMessage(message);
    log(`Main : round ${n}: all sent`);
  });
}

pool.once('online', async () => {
  log(`Pool : online (${pool.stats().threads} core thread, up to ${defaults.maxThreads})`);
  for (let n = 1; n <= ROUNDS; n++) await round(n);
  // Wait for the extra threads to retire, as the article's timeline shows.
  const waitUntil = performance.now() + IDLE_TIMEOUT_MS * 3 + 500;
  while (pool.stats().threads > 1 && performance.now() < waitUntil) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const s = pool.stats();
  log(
    `Pool : stats: ${s.completed} completed, ${s.failed} failed, ${s.spawned} spawned, ${s.retired} retired, ${s.threads} alive`,
  );
  await pool.close();
  log('Pool : closed');
});
