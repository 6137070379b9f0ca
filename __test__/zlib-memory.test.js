'use strict';
// A stream's codec memory, as V8 is told of it: node:zlib gives a stream's
// zlib state back when the stream closes (its handle's close() frees it),
// not when the collector finds the stream; so must the drop-in, or a
// server that makes a short stream per request tells V8 of state that is
// long gone, and V8 collects far more often than the live streams call
// for. Each check runs on node:zlib (the control) and on
// @tidepool-rs/pool/zlib, each read where its memory is counted (see
// ./node/zlib-unused-weak.test.js): the streams are held alive all along,
// so no finalizer can be what gave the memory back.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both, event } = require('./node/harness');
const { binding } = require('../lib/addon/binding');

const STREAMS = 20;
/** zlib's own sum for a deflate stream at the defaults (zlib.h). */
const DEFLATE_STATE = (1 << 17) + (1 << 17) + 6 * 1024;

for (const how of ['ended', 'destroyed']) {
  test(`a stream that is ${how} gives its codec memory back when it closes, held or not`, async () => {
    await both(
      async (zlib, _common, who) => {
        const external =
          who === 'node:zlib'
            ? () => process.memoryUsage().external
            : () => binding.externalMemory();
        // The inputs are made first: Buffers count as external memory too.
        const inputs = Array.from({ length: STREAMS }, (_, i) => Buffer.alloc(64 << 10, i));
        const before = external();
        const held = [];
        for (let i = 0; i < STREAMS; i++) held.push(zlib.createGzip());
        if (who !== 'node:zlib') {
          // The pool's streams report their state when made: this is what
          // closing must give back.
          assert.ok(
            external() - before >= STREAMS * DEFLATE_STATE,
            `${who}: ${STREAMS} new streams reported ${external() - before} bytes`,
          );
        }
        await Promise.all(
          held.map(async (stream, i) => {
            const closed = event(stream, 'close');
            stream.resume();
            if (how === 'ended') {
              stream.end(inputs[i]);
            } else {
              stream.write(inputs[i]);
              stream.destroy();
            }
            await closed;
          }),
        );
        const left = external() - before;
        assert.ok(
          left < (STREAMS * DEFLATE_STATE) / 4,
          `${who}: ${STREAMS} closed streams, still held, keep ${left} bytes of external memory`,
        );
        assert.equal(held.length + inputs.length, 2 * STREAMS); // held until here
      },
      { work: how === 'ended' },
    );
  });
}

// brotli sizes its window and hashers to the input it is first given: a
// stream made holds little, a body ended whole holds little and lets it go within the call; a stream
// fed in pieces holds a long stream's window while it lives. What V8 is
// told follows what is held, on node:zlib (which reports its encoder's
// allocations after each write) and on the pool (which reports after each
// step), both read in V8's own count.
test('a brotli stream tells V8 of its window only while it holds one', async () => {
  await both(
    async (zlib, _common, who) => {
      const body = Buffer.from(
        JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item ${i}` }))),
      );
      const before = binding.externalMemory();
      const whole = Array.from({ length: STREAMS }, () => zlib.createBrotliCompress());
      const made = binding.externalMemory() - before;
      assert.ok(
        made < STREAMS * (256 << 10),
        `${who}: ${STREAMS} new brotli streams report ${made} bytes, as if they held windows`,
      );
      await Promise.all(
        whole.map((stream) => {
          const closed = event(stream, 'close');
          stream.resume();
          stream.end(body);
          return closed;
        }),
      );
      const afterWhole = binding.externalMemory() - before;
      assert.ok(
        afterWhole < STREAMS * (256 << 10),
        `${who}: ${STREAMS} brotli bodies ended whole keep ${afterWhole} bytes reported`,
      );
      const open = Array.from({ length: 4 }, () => zlib.createBrotliCompress());
      await Promise.all(
        open.map((stream) => {
          stream.resume();
          stream.write(body);
          return new Promise((resolve) => stream.flush(resolve));
        }),
      );
      const held = binding.externalMemory() - before;
      assert.ok(
        held >= 4 * (4 << 20),
        `${who}: 4 brotli streams fed and flushed report ${held} bytes, less than their windows`,
      );
      await Promise.all(
        open.map((stream) => {
          const closed = event(stream, 'close');
          stream.end();
          return closed;
        }),
      );
      const left = binding.externalMemory() - before;
      assert.ok(left < held / 4, `${who}: closed brotli streams keep ${left} of ${held} bytes`);
      assert.equal(whole.length + open.length, STREAMS + 4); // held until here
    },
    { work: true },
  );
});
