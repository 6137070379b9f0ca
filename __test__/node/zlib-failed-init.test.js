'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-failed-init.js: Gzip's
// chunkSize, windowBits (at least 9 for gzip) and memLevel out of range
// are ERR_OUT_OF_RANGE, with node:zlib's messages; a level or strategy of
// NaN means the default (Z_DEFAULT_COMPRESSION, Z_DEFAULT_STRATEGY).
//
// Upstream reads the defaults from node:zlib's `_level` and `_strategy`
// (its own bookkeeping, undocumented, which code written for node:zlib may
// read): they are checked in both runs. Here also, in both, through
// params(): called with the defaults, it changes nothing and calls back.
// Each stream is then ended, and its output must gunzip to its input.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('Gzip: options out of range, and NaN for the defaults', async () => {
  await both(async (zlib, common, who) => {
    assert.throws(() => zlib.createGzip({ chunkSize: 0 }), {
      code: 'ERR_OUT_OF_RANGE',
      name: 'RangeError',
      message: 'The value of "options.chunkSize" is out of range. It must be >= 64. Received 0',
    });
    assert.throws(() => zlib.createGzip({ windowBits: 0 }), {
      code: 'ERR_OUT_OF_RANGE',
      name: 'RangeError',
      message:
        'The value of "options.windowBits" is out of range. It must be >= 9 and <= 15. Received 0',
    });
    assert.throws(() => zlib.createGzip({ memLevel: 0 }), {
      code: 'ERR_OUT_OF_RANGE',
      name: 'RangeError',
      message:
        'The value of "options.memLevel" is out of range. It must be >= 1 and <= 9. Received 0',
    });

    const { Z_DEFAULT_COMPRESSION, Z_DEFAULT_STRATEGY } = zlib.constants;
    for (const options of [{ level: NaN }, { strategy: NaN }]) {
      const what = `${who}: ${JSON.stringify(options)}`;
      const stream = zlib.createGzip(options);
      assert.equal(stream._level, Z_DEFAULT_COMPRESSION, `${what}: _level`);
      assert.equal(stream._strategy, Z_DEFAULT_STRATEGY, `${what}: _strategy`);
      await new Promise((resolve) =>
        stream.params(Z_DEFAULT_COMPRESSION, Z_DEFAULT_STRATEGY, common.mustCall(resolve)),
      );
      const chunks = [];
      stream.on('data', (chunk) => chunks.push(chunk));
      await new Promise((resolve, reject) => {
        stream.on('error', reject);
        stream.on('end', common.mustCall(resolve));
        stream.end('some input');
      });
      assert.equal(zlib.gunzipSync(Buffer.concat(chunks)).toString(), 'some input', what);
    }
  });
});
