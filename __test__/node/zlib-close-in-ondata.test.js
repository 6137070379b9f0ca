'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-close-in-ondata.js:
// close() from the first 'data' of a Gzip given 20 MiB at once stops it:
// 'data' comes once, and the stream closes.

const test = require('node:test');
const { both } = require('./harness');

test("close() in the first 'data'", async () => {
  await both(async (zlib, common) => {
    const ts = zlib.createGzip();
    const buf = Buffer.alloc(1024 * 1024 * 20);
    const closed = new Promise((resolve) => ts.on('close', resolve));
    ts.on(
      'data',
      common.mustCall(() => ts.close()),
    );
    ts.end(buf);
    await closed;
  });
});
