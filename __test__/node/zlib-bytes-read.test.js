'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-bytes-read.js: a
// stream's bytesWritten counts the input bytes it has taken, written one
// byte at a time with a flush() between them: at each 'data' it is what
// was written so far, and at 'end' the whole input; a decoder given its
// stream followed by extra bytes (where the format allows them) has taken
// only the stream's. The legacy name bytesRead gives the same number, and
// reading it is deprecated (DEP0108).
//
// Deviation: upstream checks that the DeprecationWarning is emitted once in
// the process. Node emits a deprecation code once per process, whoever
// emits it: here it is counted over both runs (node:zlib's emits it
// first; a second one would be a second warning of the same code).

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const ours = require('@tidepool-rs/pool/zlib');
const { both } = require('./harness');

const expectStr = 'abcdefghijklmnopqrstuvwxyz'.repeat(2);
const expectBuf = Buffer.from(expectStr);

/** Writes `buffer` to `target` a byte at a time, a flush() after each; ends it after the last. */
function createWriter(target, buffer) {
  const writer = { size: 0 };
  const write = () => {
    target.write(Buffer.from([buffer[writer.size++]]), () => {
      if (writer.size < buffer.length) target.flush(write);
      else target.end();
    });
  };
  write();
  return writer;
}

/**
 * Writes `input` to `stream` through createWriter(); resolves at 'end'
 * with the output, the [bytesWritten, bytes written] of each 'data', and
 * bytesWritten and bytesRead at 'end'.
 */
function run(common, stream, input) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const atData = [];
    stream.on('error', reject);
    stream.on('data', function (d) {
      chunks.push(d);
      atData.push([this.bytesWritten, writer.size]);
    });
    stream.on(
      'end',
      common.mustCall(function () {
        resolve({
          output: Buffer.concat(chunks),
          atData,
          bytesWritten: this.bytesWritten,
          bytesRead: this.bytesRead,
          written: writer.size,
        });
      }),
    );
    const writer = createWriter(stream, input);
  });
}

const METHODS = [
  ['createGzip', 'createGunzip', false],
  ['createGzip', 'createUnzip', false],
  ['createDeflate', 'createInflate', true],
  ['createDeflateRaw', 'createInflateRaw', true],
  ['createBrotliCompress', 'createBrotliDecompress', true],
];

test('bytesWritten counts the bytes taken, at each data and at the end', async () => {
  await both(async (zlib, common, who) => {
    for (const [compressor, decompressor, allowsExtra] of METHODS) {
      const what = `${who} ${compressor}/${decompressor}`;
      const comp = await run(common, zlib[compressor](), expectBuf);
      for (const [bytesWritten, size] of comp.atData)
        assert.equal(bytesWritten, size, `${what}: write size on ${compressor} data`);
      assert.equal(comp.bytesWritten, comp.written, `${what}: write size on end`);
      assert.equal(comp.bytesWritten, expectStr.length, `${what}: data size on end`);
      const compData = comp.output;

      const decomp = await run(common, zlib[decompressor](), compData);
      for (const [bytesWritten, size] of decomp.atData)
        assert.equal(bytesWritten, size, `${what}: write size on data`);
      assert.equal(decomp.bytesWritten, compData.length, `${what}: compressed size on end`);
      assert.equal(decomp.output.toString(), expectStr, `${what}: original string on end`);

      // Some formats allow extra data after the compressed data.
      if (allowsExtra) {
        const withExtra = Buffer.concat([compData, Buffer.from('extra')]);
        const extra = await run(common, zlib[decompressor](), withExtra);
        for (const [bytesWritten, size] of extra.atData)
          assert.equal(bytesWritten, size, `${what} + extra: write size on data`);
        assert.equal(extra.bytesWritten, compData.length, `${what} + extra: compressed size`);
        assert.equal(extra.output.toString(), expectStr, `${what} + extra: original string`);
      }
    }
  });
});

// Upstream's check of the legacy name, on its own. Node warns of a
// deprecation code once per process (whoever uses it): the warnings are
// listened to from the start of the file, and there is one in all. Where
// node:zlib's streams have no bytesRead (it was removed in Node 23, and
// upstream's check with it), neither have the drop-in's.
const legacyName = 'bytesRead' in nodeZlib.Gzip.prototype;
const warnings = [];
const onWarning = (w) => {
  if (w.code === 'DEP0108') warnings.push(w);
};
process.on('warning', onWarning);

test(
  'without it on this Node, neither stream has the legacy name bytesRead',
  { skip: legacyName },
  () => {
    for (const zlib of [nodeZlib, ours]) {
      assert.equal('bytesRead' in zlib.createGzip(), false);
      assert.equal(zlib.createGunzip().bytesRead, undefined);
    }
  },
);

test(
  'bytesRead, the legacy name, is bytesWritten and deprecated',
  { skip: !legacyName },
  async () => {
    try {
      await both(async (zlib, common, who) => {
        for (const [compressor, decompressor, allowsExtra] of METHODS) {
          if (!allowsExtra) continue;
          const what = `${who} ${compressor}/${decompressor}`;
          const { output: compData } = await run(common, zlib[compressor](), expectBuf);
          const withExtra = Buffer.concat([compData, Buffer.from('extra')]);
          const extra = await run(common, zlib[decompressor](), withExtra);
          assert.equal(extra.bytesWritten, compData.length, `${what} + extra: compressed size`);
          assert.equal(extra.bytesRead, extra.bytesWritten, `${what} + extra: bytesRead`);
        }
      });
      // Let a warning emitted in the last run reach its listeners.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    assert.equal(warnings.length, 1, 'one DEP0108 DeprecationWarning');
    assert.equal(warnings[0].name, 'DeprecationWarning');
    assert.equal(
      warnings[0].message,
      'zlib.bytesRead is deprecated and will change its meaning in the future. ' +
        'Use zlib.bytesWritten instead.',
    );
  },
);
