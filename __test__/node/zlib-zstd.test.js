'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd.js: zstd's own
// options. A higher ZSTD_c_compressionLevel roughly means smaller output
// (5 % margin), level 1 more than level 22; a params key zstd does not
// know, or the same key twice ('0' and '00'), is ERR_ZSTD_INVALID_PARAM,
// for the encoder and the decoder; a value zstd refuses (a strategy of
// 130, a decoder's window limit of 1) is ERR_ZLIB_INITIALIZATION_FAILED
// "Setting parameter failed"; options.flush and options.finishFlush must
// be zstd's end directives (0 to 2).
//
// Upstream compresses its fixture pss-vectors.json (not here): the sample
// is made in the test, JSON of the same shape (RSA-PSS test vectors: PEM
// keys, hex strings, from a seeded generator). Upstream uses
// zstdCompressSync, which `@tidepool-rs/pool/zlib` takes from node:zlib
// where node:zlib has one (it is checked where the module has it): its
// checks also go through the async zstdCompress() (and the options'
// through createZstdCompress()), which are the drop-in's own. zstd is node:zlib's from Node 22.15 and
// 23.8: before, the drop-in's run goes alone.

const test = require('node:test');
const assert = require('node:assert/strict');
const { promisify } = require('node:util');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

/** `check` for both(), without node:zlib's run where it has no zstd. */
function zstdCheck(check) {
  return (zlib, common, who) => {
    if (zlib === nodeZlib && !NODE_HAS_ZSTD) return undefined;
    return check(zlib, common, who);
  };
}

/**
 * JSON like pss-vectors.json (about 8 KB; upstream's is 10 KB): examples,
 * each a PEM public key and tests of hex message, salt and signature, the
 * bytes from xorshift32.
 */
function sample() {
  let x = 0x6a09e667;
  const bytes = (n) =>
    Buffer.from(
      Array.from({ length: n }, () => {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        return x & 0xff;
      }),
    );
  const hex = (n) => bytes(n).toString('hex');
  const vectors = {};
  for (let e = 1; e <= 4; e++) {
    const key = bytes(162)
      .toString('base64')
      .match(/.{1,64}/g);
    const tests = [];
    for (let t = 0; t < 3; t++)
      tests.push({ message: hex(32 + ((e + t) % 5) * 24), salt: hex(20), signature: hex(128) });
    vectors[`example0${e}`] = {
      publicKey: ['-----BEGIN PUBLIC KEY-----', ...key, '-----END PUBLIC KEY-----'],
      tests,
    };
  }
  return Buffer.from(JSON.stringify(vectors, null, 2));
}

/** Upstream's check of the sizes by level, from the lowest to the highest. */
function checkSizes(sizes, who) {
  for (let i = 0; i < sizes.length - 1; i++)
    assert.ok(sizes[i + 1] <= sizes[i] * 1.05, `${who}: ${sizes}`); // 5 % margin of error.
  assert.ok(sizes[0] > sizes[sizes.length - 1], `${who}: ${sizes}`);
}

test('a higher compression level makes smaller output', async (t) => {
  if (!NODE_HAS_ZSTD) t.diagnostic('node:zlib has no zstd here: the drop-in runs alone');
  const sampleBuffer = sample();
  await both(
    zstdCheck(async (zlib, _common, who) => {
      const { ZSTD_c_compressionLevel } = zlib.constants;
      const syncSizes = [];
      const asyncSizes = [];
      for (let level = 1; level <= 22; level++) {
        const options = { params: { [ZSTD_c_compressionLevel]: level } };
        if (typeof zlib.zstdCompressSync === 'function')
          syncSizes.push(zlib.zstdCompressSync(sampleBuffer, options).length);
        asyncSizes.push((await promisify(zlib.zstdCompress)(sampleBuffer, options)).length);
      }
      if (syncSizes.length !== 0) checkSizes(syncSizes, `${who} zstdCompressSync`);
      checkSizes(asyncSizes, `${who} zstdCompress`);
    }),
  );
});

test('a params key zstd does not know is ERR_ZSTD_INVALID_PARAM', async () => {
  await both(
    zstdCheck((zlib, _common, who) => {
      for (const create of ['createZstdCompress', 'createZstdDecompress']) {
        assert.throws(
          () => zlib[create]({ params: { 10000: 0 } }),
          {
            code: 'ERR_ZSTD_INVALID_PARAM',
            name: 'RangeError',
            message: '10000 is not a valid zstd parameter',
          },
          `${who} ${create}`,
        );
      }
    }),
    { work: false },
  );
});

test('the same params key twice is ERR_ZSTD_INVALID_PARAM', async () => {
  await both(
    zstdCheck((zlib, _common, who) => {
      for (const create of ['createZstdCompress', 'createZstdDecompress']) {
        // Upstream: duplicate keys given by accident.
        assert.throws(
          () => zlib[create]({ params: { 0: 0, '00': 0 } }),
          {
            code: 'ERR_ZSTD_INVALID_PARAM',
            name: 'RangeError',
            message: '00 is not a valid zstd parameter',
          },
          `${who} ${create}`,
        );
      }
    }),
    { work: false },
  );
});

test('a params value zstd refuses is ERR_ZLIB_INITIALIZATION_FAILED', async () => {
  await both(
    zstdCheck((zlib, _common, who) => {
      const { ZSTD_c_strategy, ZSTD_d_windowLogMax } = zlib.constants;
      const expected = {
        code: 'ERR_ZLIB_INITIALIZATION_FAILED',
        name: 'Error',
        message: 'Setting parameter failed',
      };
      // Not a ZSTD_strategy.
      assert.throws(
        () => zlib.createZstdCompress({ params: { [ZSTD_c_strategy]: 130 } }),
        expected,
        `${who}: strategy 130`,
      );
      // Below zstd's least window (ZSTD_WINDOWLOG_ABSOLUTEMIN, 10).
      assert.throws(
        () => zlib.createZstdDecompress({ params: { [ZSTD_d_windowLogMax]: 1 } }),
        expected,
        `${who}: windowLogMax 1`,
      );
    }),
    { work: false },
  );
});

test("options.flush and options.finishFlush must be zstd's end directives", async () => {
  await both(
    zstdCheck((zlib, common, who) => {
      const { Z_FINISH } = zlib.constants;
      for (const name of ['flush', 'finishFlush']) {
        const expected = {
          code: 'ERR_OUT_OF_RANGE',
          name: 'RangeError',
          message: `The value of "options.${name}" is out of range. It must be >= 0 and <= 2. Received 4`,
        };
        const options = { [name]: Z_FINISH };
        const what = `${who}: options.${name}`;
        if (typeof zlib.zstdCompressSync === 'function')
          assert.throws(() => zlib.zstdCompressSync('', options), expected, `${what}, sync`);
        assert.throws(
          () => zlib.zstdCompress('', options, common.mustNotCall()),
          expected,
          `${what}, async`,
        );
        assert.throws(() => zlib.createZstdCompress(options), expected, `${what}, stream`);
      }
    }),
    { work: false },
  );
});
