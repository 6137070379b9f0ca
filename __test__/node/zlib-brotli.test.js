'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-brotli.js: brotli's own
// options. A higher BROTLI_PARAM_QUALITY roughly means smaller output (5 %
// margin), quality 0 more than quality 11; a params key out of range, or
// the same key twice ('0' and '00'), is ERR_BROTLI_INVALID_PARAM; a value
// the encoder refuses (42 for a boolean flag) is
// ERR_ZLIB_INITIALIZATION_FAILED; options.flush and options.finishFlush
// must be brotli operations (0 to 3).
//
// Upstream compresses its fixture pss-vectors.json (not here): the sample
// is made in the test, JSON of the same shape (RSA-PSS test vectors, hex
// strings from a seeded generator, a modulus shared by several vectors).
// Upstream uses the *Sync functions, which `@tidepool-rs/pool/zlib` takes
// from node:zlib: the same checks also go through the async
// brotliCompress() and createBrotliCompress(), which are its own.

const test = require('node:test');
const assert = require('node:assert/strict');
const { promisify } = require('node:util');
const { both } = require('./harness');

/** JSON like pss-vectors.json, from xorshift32. */
function sample() {
  let x = 0x2545f491;
  const byte = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) & 0xff;
  };
  const hex = (n) => Array.from({ length: n }, () => byte().toString(16).padStart(2, '0')).join('');
  const moduli = Array.from({ length: 5 }, () => hex(128));
  const vectors = [];
  for (let i = 0; i < 40; i++) {
    vectors.push({
      name: `Example ${i}`,
      modulus: moduli[i % 5],
      e: '010001',
      salt: hex(20),
      message: hex(64 + (i % 7) * 16),
      signature: hex(128),
    });
  }
  return Buffer.from(JSON.stringify(vectors, null, 2));
}

/** Upstream's check of the sizes by quality, from the lowest to the highest. */
function checkSizes(sizes, who) {
  for (let i = 0; i < sizes.length - 1; i++)
    assert.ok(sizes[i + 1] <= sizes[i] * 1.05, `${who}: ${sizes}`); // 5 % margin of error.
  assert.ok(sizes[0] > sizes[sizes.length - 1], `${who}: ${sizes}`);
}

test('a higher quality makes smaller output', async () => {
  const sampleBuffer = sample();
  await both(async (zlib, common, who) => {
    const { BROTLI_MIN_QUALITY, BROTLI_MAX_QUALITY, BROTLI_PARAM_QUALITY } = zlib.constants;
    const syncSizes = [];
    const asyncSizes = [];
    for (let quality = BROTLI_MIN_QUALITY; quality <= BROTLI_MAX_QUALITY; quality++) {
      const options = { params: { [BROTLI_PARAM_QUALITY]: quality } };
      syncSizes.push(zlib.brotliCompressSync(sampleBuffer, options).length);
      asyncSizes.push((await promisify(zlib.brotliCompress)(sampleBuffer, options)).length);
    }
    checkSizes(syncSizes, `${who} brotliCompressSync`);
    checkSizes(asyncSizes, `${who} brotliCompress`);
  });
});

test('a params key out of range is ERR_BROTLI_INVALID_PARAM', async () => {
  await both(
    (zlib) => {
      assert.throws(() => zlib.createBrotliCompress({ params: { 10000: 0 } }), {
        code: 'ERR_BROTLI_INVALID_PARAM',
        name: 'RangeError',
        message: '10000 is not a valid Brotli parameter',
      });
    },
    { work: false },
  );
});

// Fails on tidepool: see the report of this adaptation.
test('the same params key twice is ERR_BROTLI_INVALID_PARAM', async () => {
  await both(
    (zlib) => {
      // Upstream: "accidentally using duplicate keys fails".
      assert.throws(() => zlib.createBrotliCompress({ params: { 0: 0, '00': 0 } }), {
        code: 'ERR_BROTLI_INVALID_PARAM',
        name: 'RangeError',
        message: '00 is not a valid Brotli parameter',
      });
    },
    { work: false },
  );
});

test('a params value the encoder refuses is ERR_ZLIB_INITIALIZATION_FAILED', async () => {
  await both(
    (zlib) => {
      const { BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING } = zlib.constants;
      assert.throws(
        // This is a boolean flag.
        () =>
          zlib.createBrotliCompress({
            params: { [BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING]: 42 },
          }),
        {
          code: 'ERR_ZLIB_INITIALIZATION_FAILED',
          name: 'Error',
          message: 'Initialization failed',
        },
      );
    },
    { work: false },
  );
});

test('options.flush and options.finishFlush must be brotli operations', async () => {
  await both(
    (zlib) => {
      const { Z_FINISH } = zlib.constants;
      for (const name of ['flush', 'finishFlush']) {
        const expected = {
          code: 'ERR_OUT_OF_RANGE',
          name: 'RangeError',
          message: `The value of "options.${name}" is out of range. It must be >= 0 and <= 3. Received 4`,
        };
        const options = { [name]: Z_FINISH };
        assert.throws(() => zlib.brotliCompressSync('', options), expected);
        assert.throws(() => zlib.brotliCompress('', options, () => {}), expected);
        assert.throws(() => zlib.createBrotliCompress(options), expected);
      }
    },
    { work: false },
  );
});
