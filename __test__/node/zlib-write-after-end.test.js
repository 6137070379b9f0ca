'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-write-after-end.js
// (nodejs/node#30976): writes to a decoder whose format has ended (its
// readable side ended) are still called back, and so is a flush() after
// them.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

test('writes after the end of the format are called back, and a flush after them', async () => {
  const data = nodeZlib.deflateRawSync('Welcome');
  await both(async (zlib, common, who) => {
    const inflate = zlib.createInflateRaw();
    inflate.resume();
    const calls = [];
    inflate.write(
      data,
      common.mustCall(() => calls.push('data')),
    );
    inflate.write(
      Buffer.from([0x00]),
      common.mustCall(() => calls.push('0x00')),
    );
    inflate.write(
      Buffer.from([0x00]),
      common.mustCall(() => calls.push('0x00 again')),
    );
    await new Promise((resolve) => inflate.flush(common.mustCall(resolve)));
    // (Upstream leaves the order to the mustCall()s; the flush comes last in both.)
    assert.deepEqual(calls, ['data', '0x00', '0x00 again'], who);
  });
});
