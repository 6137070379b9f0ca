'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zero-windowBits.js:
// `windowBits: 0` means "the window of the stream's header" to the
// decoders that read a header (Inflate, Gunzip, Unzip), and is out of
// range for an encoder (Gzip). (No compression runs: `work: false`.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('windowBits 0: taken by the decoders with a header, refused by Gzip', async () => {
  await both(
    (zlib, _common, who) => {
      for (const [factory, Class] of [
        ['createInflate', 'Inflate'],
        ['createGunzip', 'Gunzip'],
        ['createUnzip', 'Unzip'],
      ]) {
        const decoder = zlib[factory]({ windowBits: 0 });
        assert.ok(decoder instanceof zlib[Class], `${who}: ${factory}`);
        decoder.destroy();
      }
      assert.throws(() => zlib.createGzip({ windowBits: 0 }), {
        code: 'ERR_OUT_OF_RANGE',
        name: 'RangeError',
        message:
          'The value of "options.windowBits" is out of range. It must be >= 9 and <= 15. Received 0',
      });
    },
    { work: false },
  );
});
