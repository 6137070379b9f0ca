'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-create-raw.js:
// createInflateRaw() and createDeflateRaw() make instances of InflateRaw
// and DeflateRaw.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('createInflateRaw() and createDeflateRaw() make their classes', async () => {
  await both(
    (zlib, _common, who) => {
      const inflateRaw = zlib.createInflateRaw();
      assert.ok(inflateRaw instanceof zlib.InflateRaw, who);
      const deflateRaw = zlib.createDeflateRaw();
      assert.ok(deflateRaw instanceof zlib.DeflateRaw, who);
      inflateRaw.destroy();
      deflateRaw.destroy();
    },
    { work: false },
  );
});
