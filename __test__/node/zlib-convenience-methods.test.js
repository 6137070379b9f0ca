'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-convenience-methods.js:
// the one-shots, async and sync, with options, without, and with `info`
// (the result is { buffer, engine }, the engine an instance of the
// method's class), round-trip a string, a Buffer and the same bytes as
// every kind of ArrayBufferView and an ArrayBuffer; an async one-shot
// without a callback throws ERR_INVALID_ARG_TYPE.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

// A multiple of 8 bytes: every kind of view can hold it.
const expectStr = 'blah'.repeat(8);
const expectBuf = Buffer.from(expectStr);

const opts = { level: 9, chunkSize: 1024 };
const optsInfo = { info: true };

const METHODS = [
  ['gzip', 'gunzip', 'Gzip', 'Gunzip'],
  ['gzip', 'unzip', 'Gzip', 'Unzip'],
  ['deflate', 'inflate', 'Deflate', 'Inflate'],
  ['deflateRaw', 'inflateRaw', 'DeflateRaw', 'InflateRaw'],
  ['brotliCompress', 'brotliDecompress', 'BrotliCompress', 'BrotliDecompress'],
];

/** The inputs: [name, the same bytes as that type]. */
function inputs(common) {
  return [
    ['string', expectStr],
    ['Buffer', expectBuf],
    ...common.getBufferSources(expectBuf).map((obj) => [obj[Symbol.toStringTag], obj]),
  ];
}

/** `fn(...args, callback)` as a promise; the callback must come once, without an error. */
function call(common, fn, ...args) {
  return new Promise((resolve) => fn(...args, common.mustSucceed(resolve)));
}

test('async one-shots with options, without, and with info', async () => {
  await both(async (zlib, common, who) => {
    const runs = [];
    for (const [type, expect] of inputs(common)) {
      for (const [compress, decompress, Compressor, Decompressor] of METHODS) {
        const what = `${who}: ${compress}/${decompress} ${type}`;
        runs.push(
          call(common, zlib[compress], expect, opts)
            .then((result) => call(common, zlib[decompress], result, opts))
            .then((result) => assert.equal(result.toString(), expectStr, `${what} with options`)),
          call(common, zlib[compress], expect)
            .then((result) => call(common, zlib[decompress], result))
            .then((result) =>
              assert.equal(result.toString(), expectStr, `${what} without options`),
            ),
          call(common, zlib[compress], expect, optsInfo)
            .then((result) => {
              assert.ok(result.engine instanceof zlib[Compressor], `${what}: ${Compressor} engine`);
              return call(common, zlib[decompress], result.buffer, optsInfo);
            })
            .then((result) => {
              assert.equal(result.buffer.toString(), expectStr, `${what} with info`);
              assert.ok(
                result.engine instanceof zlib[Decompressor],
                `${what}: ${Decompressor} engine`,
              );
            }),
        );
      }
    }
    await Promise.all(runs);
  });
});

test('sync one-shots with options and without', async () => {
  await both(
    (zlib, common, who) => {
      for (const [type, expect] of inputs(common)) {
        for (const [compress, decompress] of METHODS) {
          const what = `${who}: ${compress}Sync/${decompress}Sync ${type}`;
          let compressed = zlib[`${compress}Sync`](expect, opts);
          let decompressed = zlib[`${decompress}Sync`](compressed, opts);
          assert.equal(decompressed.toString(), expectStr, `${what} with options`);

          compressed = zlib[`${compress}Sync`](expect);
          decompressed = zlib[`${decompress}Sync`](compressed);
          assert.equal(decompressed.toString(), expectStr, `${what} without options`);
        }
      }
    },
    { work: false },
  );
});

// Fails on tidepool (see the report of this adaptation): its *Sync
// functions are node:zlib's, whose engines are node:zlib's classes.
test("sync one-shots with info give an engine of the module's class", async () => {
  await both(
    (zlib, common, who) => {
      for (const [type, expect] of inputs(common)) {
        for (const [compress, decompress, Compressor, Decompressor] of METHODS) {
          const what = `${who}: ${compress}Sync/${decompress}Sync ${type}`;
          const compressed = zlib[`${compress}Sync`](expect, optsInfo);
          assert.ok(compressed.engine instanceof zlib[Compressor], `${what}: ${Compressor} engine`);
          const decompressed = zlib[`${decompress}Sync`](compressed.buffer, optsInfo);
          assert.equal(decompressed.buffer.toString(), expectStr, `${what} with info`);
          assert.ok(
            decompressed.engine instanceof zlib[Decompressor],
            `${what}: ${Decompressor} engine`,
          );
        }
      }
    },
    { work: false },
  );
});

// Fails on tidepool (see the report of this adaptation).
test('an async one-shot without a callback throws', async () => {
  await both(
    (zlib) => {
      assert.throws(() => zlib.gzip('abc'), {
        code: 'ERR_INVALID_ARG_TYPE',
        name: 'TypeError',
        message: 'The "callback" argument must be of type function. Received undefined',
      });
    },
    { work: false },
  );
});
