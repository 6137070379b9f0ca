'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-brotli-16GB.js: a small
// brotli input that decodes to a huge output, and nobody reads it: the
// decoder stops once its readable buffer is full instead of decoding it
// all. (Upstream's input is a crafted 16 GB stream; here it is made in the
// test: 1 GiB of zeros at quality 1, about 200 KB.)

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { getDefaultHighWaterMark } = require('node:stream');
const { both } = require('./harness');
const ours = require('@tidepool-rs/pool/zlib');
const { waitFor } = require('../wait');

async function brotliOfZeros(total) {
  const compress = nodeZlib.createBrotliCompress({
    params: { [nodeZlib.constants.BROTLI_PARAM_QUALITY]: 1 },
  });
  const out = [];
  compress.on('data', (chunk) => out.push(chunk));
  const mib = Buffer.alloc(1 << 20);
  for (let i = 0; i < total / (1 << 20); i++)
    await new Promise((resolve) => compress.write(mib, resolve));
  await new Promise((resolve) => compress.end(resolve));
  return Buffer.concat(out);
}

test('a brotli bomb nobody reads stops at the readable buffer', async () => {
  const buf = await brotliOfZeros(1 << 30);
  await both(async (zlib, _common, who) => {
    const decoder = zlib.createBrotliDecompress();
    decoder.end(buf);
    // Upstream waits 500 ms for the thread pool to fill the buffer; here,
    // until it holds a highWaterMark's worth, then until the module's pool
    // has nothing running or queued: the step stopped at the full reader
    // (node:zlib's stops as its push() says the buffer is full).
    await waitFor(() => decoder.readableLength >= getDefaultHighWaterMark(false), {
      what: `${who}: the first output`,
    });
    await waitFor(
      () => {
        const { busyThreads, queued } = ours.pool.stats();
        return busyThreads === 0 && queued === 0;
      },
      { what: `${who}: the pool's threads to stop` },
    );
    // The buffer holds a highWaterMark in 16 KiB chunks (node:zlib's
    // default chunkSize): the decoder stopped once it was full.
    assert.equal(
      decoder._readableState.buffer.length,
      getDefaultHighWaterMark(false) / (16 * 1024),
      who,
    );
    assert.ok(
      decoder.readableLength <= getDefaultHighWaterMark(false) + 128 * 1024,
      `${who}: ${decoder.readableLength} bytes`,
    );
    decoder.destroy();
  });
});
