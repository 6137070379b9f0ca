'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-flush-drain.js: a write
// past highWaterMark needs a drain; a flush() after it is called back once
// the write drained, and 'drain' comes once.

const test = require('node:test');
const assert = require('node:assert/strict');
const { once } = require('node:events');
const { both } = require('./harness');

test('flush() after a write that needs a drain', async () => {
  await both(async (zlib, _common, who) => {
    const deflater = zlib.createDeflate({ level: 0, highWaterMark: 16 });
    let flushCount = 0;
    let drainCount = 0;
    const flush = deflater.flush;
    deflater.flush = function (kind, callback) {
      flushCount++;
      flush.call(this, kind, callback);
    };
    deflater.write(Buffer.alloc(10240, 'x'));
    const beforeFlush = deflater.writableNeedDrain;
    deflater.on('data', () => {});
    deflater.on('drain', () => drainCount++);
    const afterFlush = await new Promise((resolve) =>
      deflater.flush(() => resolve(deflater.writableNeedDrain)),
    );
    deflater.end();
    await once(deflater, 'end');
    assert.equal(beforeFlush, true, `${who}: before calling flush, the stream needs to drain`);
    assert.equal(afterFlush, false, `${who}: after the flush, it does not`);
    assert.equal(drainCount, 1, `${who}: one 'drain'`);
    assert.equal(flushCount, 1, `${who}: flush() called once`);
  });
});
