'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-close-after-write.js:
// close(callback) right after a write to a decoder calls the callback,
// with the write still in flight.

const test = require('node:test');
const { both } = require('./harness');

test('close(callback) right after a write', async () => {
  await both(async (zlib, common) => {
    await new Promise((resolve) => {
      zlib.gzip(
        'hello',
        common.mustSucceed((out) => {
          const unzip = zlib.createGunzip();
          unzip.write(out);
          unzip.close(common.mustCall(resolve));
        }),
      );
    });
  });
});
