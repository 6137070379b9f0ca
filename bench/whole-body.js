'use strict';
// The whole-body section of `npm run bench`: what a response's compression
// stream costs the event loop, apart from HTTP. A server behind
// `compression` makes a gzip stream per response and ends it with the
// whole body (`end(body)`); here 20,000 such streams of the HTTP section's
// 64 KiB JSON body, 32 in flight, run through node:zlib and through
// @tidepool-rs/pool/zlib. The figure is the CPU of the event loop's thread
// per stream (the compression itself runs elsewhere in both): the part of
// the HTTP row's event loop that the pool's JavaScript is.

const { body } = require('./http');
const { jsThreadMicros } = require('./thread-cpu');

const STREAMS = 20_000;
const WARMUP = 2_000;
const IN_FLIGHT = 32;

/** Runs `count` gzip streams of `zlib`, each ended with `data`, IN_FLIGHT at a time. */
function run(zlib, data, count) {
  let started = 0;
  let done = 0;
  return new Promise((resolve, reject) => {
    const next = () => {
      if (started === count) {
        if (done === count) resolve();
        return;
      }
      started++;
      const stream = zlib.createGzip({ level: 6 });
      let bytes = 0;
      stream.on('data', (chunk) => (bytes += chunk.length));
      stream.on('error', reject);
      stream.on('end', () => {
        if (bytes === 0) reject(new Error('a stream ended without output'));
        done++;
        next();
      });
      stream.end(data);
    };
    for (let i = 0; i < IN_FLIGHT; i++) next();
  });
}

async function wholeBodies(which) {
  const zlib = which === 'node' ? require('node:zlib') : require('@tidepool-rs/pool/zlib');
  const data = Buffer.from(body());
  await run(zlib, data, WARMUP);
  const before = jsThreadMicros();
  await run(zlib, data, STREAMS);
  const value = (jsThreadMicros() - before) / STREAMS;
  if (which === 'tidepool') await zlib.pool.close();
  return { value };
}

const UNIT = 'µs of the event loop a stream';
const OURS = 'body: a whole-body gzip stream, event loop CPU, tidepool';
const NODE = 'body: a whole-body gzip stream, event loop CPU, node:zlib';
const CASES = {
  [OURS]: { unit: UNIT, run: () => wholeBodies('tidepool') },
  [NODE]: { unit: UNIT, run: () => wholeBodies('node') },
};

// CPU: below 1 is less than node:zlib's.
const RATIOS = [[OURS, NODE]];

module.exports = { CASES, RATIOS };
