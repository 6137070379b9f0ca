'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-reset-before-write.js:
// reset() and params() before the first write, on a Deflate piped into an
// Inflate, then 'abc' written: 'abc' comes out. (Upstream checks that
// node:zlib's lazily made native state takes them; here each is a test of
// its own, as tidepool fails the second.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** Deflate piped into Inflate; `fn(stream, cb)` on each before 'abc' is written; what comes out. */
function roundTrip(zlib, common, fn) {
  const deflate = zlib.createDeflate();
  const inflate = zlib.createInflate();
  deflate.pipe(inflate);
  const output = [];
  return new Promise((resolve, reject) => {
    deflate.on('error', reject);
    inflate
      .on('error', reject)
      .on('data', (chunk) => output.push(chunk))
      .on(
        'end',
        common.mustCall(() => resolve(Buffer.concat(output).toString())),
      );
    try {
      fn(deflate, () => {
        try {
          fn(inflate, () => {
            deflate.write('abc');
            deflate.end();
          });
        } catch (err) {
          reject(err);
        }
      });
    } catch (err) {
      reject(err);
    }
  }).finally(() => {
    deflate.destroy();
    inflate.destroy();
  });
}

test('reset() before the first write', async () => {
  await both(async (zlib, common, who) => {
    const out = await roundTrip(zlib, common, (z, cb) => {
      z.reset();
      cb();
    });
    assert.equal(out, 'abc', who);
  });
});

// Fails on tidepool while params() cannot change the level: a Deflate made
// with the default level (-1) and an Inflate (which has none) both throw
// ERR_TIDEPOOL_ZLIB_UNSUPPORTED (lib/zlib/streams.js Zlib#params). See the
// report of this adaptation.
test('params(0, Z_DEFAULT_STRATEGY) before the first write', async () => {
  await both(async (zlib, common, who) => {
    const out = await roundTrip(zlib, common, (z, cb) =>
      z.params(0, zlib.constants.Z_DEFAULT_STRATEGY, cb),
    );
    assert.equal(out, 'abc', who);
  });
});
