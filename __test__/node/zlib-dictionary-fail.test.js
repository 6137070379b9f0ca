'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-dictionary-fail.js: an
// Inflate given a stream made with a dictionary fails with "Missing
// dictionary" when it has none, "Bad dictionary" when it has another; an
// InflateRaw with a wrong dictionary fails on the data (the raw format
// cannot tell a wrong dictionary from bad data).

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** "test" deflated with the dictionary "dict". */
const input = Buffer.from([0x78, 0xbb, 0x04, 0x09, 0x01, 0xa5]);

/** The error `stream` emits once `input` is written to it. */
function errorOf(common, stream) {
  return new Promise((resolve) => {
    stream.on('error', common.mustCall(resolve));
    stream.write(input);
  });
}

test('a missing or wrong dictionary fails the inflate', async () => {
  await both(
    async (zlib, common, who) => {
      const [missing, bad, raw] = await Promise.all([
        errorOf(common, zlib.createInflate()),
        errorOf(common, zlib.createInflate({ dictionary: Buffer.from('fail') })),
        errorOf(common, zlib.createInflateRaw({ dictionary: Buffer.from('fail') })),
      ]);
      assert.match(missing.message, /Missing dictionary/, who);
      assert.match(bad.message, /Bad dictionary/, who);
      assert.match(raw.message, /(invalid|Operation-Ending-Supplemental Code is 0x12)/, who);
    },
    { work: 'any' },
  );
});
