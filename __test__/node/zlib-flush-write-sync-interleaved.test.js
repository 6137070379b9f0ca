'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-flush-write-sync-interleaved.js
// (nodejs/node#28478): a flush() between writes affects only what was
// written before it, and the callbacks come in the order of the calls.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('write() + flush() + write() + flush(): each flush covers the writes before it', async () => {
  await both(async (zlib, _common, who) => {
    const compress = zlib.createGzip();
    const decompress = zlib.createGunzip();
    decompress.setEncoding('utf8');
    const events = [];
    const compressedChunks = [];
    for (const chunk of ['abc', 'def', 'ghi']) {
      compress.write(chunk, () => events.push({ written: chunk }));
      compress.flush(zlib.constants.Z_PARTIAL_FLUSH, () => {
        events.push('flushed');
        const out = compress.read();
        if (out !== null) compressedChunks.push(out);
      });
    }
    await new Promise((resolve) =>
      compress.end(() => {
        events.push('compress end');
        resolve();
      }),
    );
    // Each compressed chunk to the decompressor in turn: each flush made its own decodable part.
    for (const chunk of compressedChunks) {
      await new Promise((resolve) => decompress.write(chunk, resolve));
      events.push({ read: decompress.read() });
    }
    // (Upstream then ends the decompressor; the compressor's end was never
    // read, so its stream is cut short: nothing to check there.)
    decompress.destroy();
    assert.deepEqual(
      events,
      [
        { written: 'abc' },
        'flushed',
        { written: 'def' },
        'flushed',
        { written: 'ghi' },
        'flushed',
        'compress end',
        { read: 'abc' },
        { read: 'def' },
        { read: 'ghi' },
      ],
      who,
    );
  });
});
