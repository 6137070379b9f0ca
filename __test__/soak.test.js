'use strict';
// Soak: 1,000,000 tasks in 10 rounds with mixed kernels and sizes, random
// aborts (queued and running), run-time deadlines and queue-full rejections.
// Every task must settle exactly once with an outcome that matches what was
// done to it, and memory must not grow from round to round.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { Pool, micros } = require('..');

const ROUNDS = 10;
const PER_ROUND = 100_000;

/** Deterministic pseudo-random numbers (xorshift), so failures reproduce. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

/** A full GC, with or without --expose-gc. */
const gc =
  global.gc ??
  (require('node:v8').setFlagsFromString('--expose-gc'), require('node:vm').runInNewContext('gc'));

test(
  'soak: 1,000,000 mixed tasks settle exactly once, memory stays flat',
  { timeout: 600_000 },
  async (t) => {
    const pool = new Pool({ maxQueue: 4000, encoding: 'hex' });
    const random = rng(12345);
    const payloads = Array.from({ length: 64 }, (_, i) => crypto.randomBytes(1 + ((i * 37) % 300)));
    const crcHex = payloads.map((p) => zlib.crc32(p).toString(16).padStart(8, '0'));
    const shaHex = payloads.map((p) => crypto.createHash('sha256').update(p).digest('hex'));
    const memory = [];
    const totals = { ok: 0, aborted: 0, timeout: 0, full: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const settled = new Uint8Array(PER_ROUND);
      const outcomes = [];
      const controllers = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const r = random();
        const which = i % payloads.length;
        let promise;
        let kind;
        if (r < 0.01) {
          // Long spin with a short deadline: must time out (or be refused when the queue is full).
          kind = 'deadline';
          promise = pool.post(micros(50_000), { kernel: 'spin', timeoutMs: 1 });
        } else if (r < 0.03) {
          // Cancellable: aborted later in this round, maybe queued, maybe running, maybe done.
          kind = 'abortable';
          const ac = new AbortController();
          controllers.push(ac);
          promise = pool.post(payloads[which], { kernel: 'sha256', signal: ac.signal });
        } else {
          kind = r < 0.5 ? 'crc32' : 'sha256';
          promise = pool.post(payloads[which], { kernel: kind });
        }
        outcomes.push(
          promise.then(
            ({ result, message }) => {
              settled[i]++;
              if (kind === 'deadline')
                assert.fail('a 50 ms spin finished within its 1 ms deadline');
              assert.equal(message, payloads[which]);
              assert.equal(result, kind === 'crc32' ? crcHex[which] : shaHex[which]);
              totals.ok++;
            },
            (err) => {
              settled[i]++;
              if (err.code === 'ERR_TIDEPOOL_QUEUE_FULL') totals.full++;
              else if (err.code === 'ABORT_ERR' && kind === 'abortable') totals.aborted++;
              else if (err.code === 'ERR_TIDEPOOL_TIMEOUT' && kind === 'deadline') totals.timeout++;
              else
                assert.fail(`task ${i} (${kind}) failed unexpectedly: ${err.code} ${err.message}`);
            },
          ),
        );
        if (i % 5000 === 4999) {
          // Abort some of the cancellable tasks posted so far.
          for (const ac of controllers.splice(0, controllers.length >> 1)) ac.abort();
          await new Promise((r) => setImmediate(r));
        }
      }
      for (const ac of controllers) ac.abort();
      await Promise.all(outcomes);
      for (let i = 0; i < PER_ROUND; i++)
        if (settled[i] !== 1) assert.fail(`task ${i} settled ${settled[i]} times`);
      assert.equal(pool.stats().pending, 0);
      gc();
      memory.push(process.memoryUsage());
    }
    assert.equal(totals.ok + totals.aborted + totals.timeout + totals.full, ROUNDS * PER_ROUND);
    assert.ok(totals.aborted > 0 && totals.timeout > 0 && totals.full > 0, JSON.stringify(totals));
    // Memory: after the first rounds have sized the heaps, no growth trend.
    const rss = memory.map((m) => m.rss);
    const heap = memory.map((m) => m.heapUsed);
    const settledRss = Math.max(...rss.slice(2, 5));
    assert.ok(
      Math.max(...rss.slice(5)) < settledRss * 1.25 + 32 * 1024 * 1024,
      `RSS grew: ${rss.map((x) => (x / 2 ** 20).toFixed(0)).join(' ')} MiB`,
    );
    assert.ok(
      Math.max(...heap.slice(5)) < Math.max(...heap.slice(2, 5)) * 1.5 + 16 * 1024 * 1024,
      `heap grew: ${heap.map((x) => (x / 2 ** 20).toFixed(0)).join(' ')} MiB`,
    );
    t.diagnostic(
      `totals ${JSON.stringify(totals)}; RSS per round (MiB): ${rss.map((x) => (x / 2 ** 20).toFixed(0)).join(' ')}`,
    );
    await pool.close();
  },
);
