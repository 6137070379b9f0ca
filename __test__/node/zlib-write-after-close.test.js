'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-write-after-close.js:
// close() calls back once closed, and a write after it fails with
// ERR_STREAM_DESTROYED. (No compression runs: `work: false`.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('a write after close() fails with ERR_STREAM_DESTROYED', async () => {
  await both(
    async (zlib, _common, who) => {
      const unzip = zlib.createGunzip();
      const closed = new Promise((resolve) => unzip.close(resolve));
      const err = await new Promise((resolve) => unzip.write('asd', resolve));
      await closed;
      assert.equal(err?.code, 'ERR_STREAM_DESTROYED', who);
      assert.equal(err.message, 'Cannot call write after a stream was destroyed', who);
    },
    { work: false },
  );
});
