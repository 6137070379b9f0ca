'use strict';
// The teardown section of `npm run bench`: 16,000 compression streams,
// each with a 64 KiB write queued (the pool's two threads, or libuv's four,
// run a few of them; the rest wait), torn down at once, by destroy() in a
// loop or by one AbortSignal they share; node:zlib's streams against
// @tidepool-rs/pool/zlib's. The time is how long the event loop is held:
// from the first destroy() (or the abort()) until a setImmediate() set just
// before it runs, which is after every microtask the teardown queued.

const STREAMS = 16_000;
const WRITE = Buffer.alloc(64 * 1024, 'tidepool teardown ');

/** Makes the streams of `zlib`, writes to each, tears them down `how`; ms the loop was held. */
async function teardown(which, how) {
  const zlib = which === 'node' ? require('node:zlib') : require('@tidepool-rs/pool/zlib');
  const controller = new AbortController();
  const options = how === 'signal' ? { signal: controller.signal } : {};
  const streams = [];
  for (let i = 0; i < STREAMS; i++) {
    const stream = zlib.createGzip(options);
    stream.on('error', () => {});
    stream.write(WRITE);
    streams.push(stream);
  }
  // Let the writes reach the threads' queues.
  await new Promise((resolve) => setImmediate(resolve));
  const started = process.hrtime.bigint();
  const held = new Promise((resolve) => setImmediate(() => resolve(process.hrtime.bigint())));
  if (how === 'signal') controller.abort();
  else for (const stream of streams) stream.destroy();
  const ms = Number((await held) - started) / 1e6;
  // Every stream closed (its 'close'), and the work let go.
  await Promise.all(
    streams.map((s) => (s.closed ? undefined : new Promise((r) => s.once('close', r)))),
  );
  if (which === 'tidepool') await zlib.pool.close();
  return { value: ms };
}

const MS = 'ms (loop held)';
const CASES = {
  'teardown: destroy() 16,000 tidepool streams, writes queued': {
    unit: MS,
    run: () => teardown('tidepool', 'destroy'),
  },
  'teardown: destroy() 16,000 zlib streams, writes queued': {
    unit: MS,
    run: () => teardown('node', 'destroy'),
  },
  'teardown: one signal aborts 16,000 tidepool streams, writes queued': {
    unit: MS,
    run: () => teardown('tidepool', 'signal'),
  },
  'teardown: one signal aborts 16,000 zlib streams, writes queued': {
    unit: MS,
    run: () => teardown('node', 'signal'),
  },
};

// Time: below 1 is faster than node:zlib.
const RATIOS = [
  [
    'teardown: destroy() 16,000 tidepool streams, writes queued',
    'teardown: destroy() 16,000 zlib streams, writes queued',
  ],
  [
    'teardown: one signal aborts 16,000 tidepool streams, writes queued',
    'teardown: one signal aborts 16,000 zlib streams, writes queued',
  ],
];

module.exports = { CASES, RATIOS };
