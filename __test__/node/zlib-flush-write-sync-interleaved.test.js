'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-flush-write-sync-interleaved.js
// (nodejs/node#28478): a flush() between writes affects only what was
// written before it, and the callbacks come in the order of the calls.
// What the flushes' callbacks read is the whole gzip stream: the last
// flush, queued just before end(), comes with the end (node:zlib makes it
// a Z_FINISH), so its output carries the gzip trailer, and the Gunzip fed
// those chunks alone then ends with no error (upstream ends it, and an
// 'error' there would be uncaught).
//
// Upstream reads the output with one read(), which gave all that was
// buffered until Node 26 (whose read() without a size gives the first
// chunk buffered): here read() is called until it gives null, on every
// line.

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
    /** All that `stream` has buffered, joined (a string with an encoding), or null. */
    const readAll = (stream) => {
      const parts = [];
      let part;
      while ((part = stream.read()) !== null) parts.push(part);
      if (parts.length === 0) return null;
      return typeof parts[0] === 'string' ? parts.join('') : Buffer.concat(parts);
    };
    for (const chunk of ['abc', 'def', 'ghi']) {
      compress.write(chunk, () => events.push({ written: chunk }));
      compress.flush(zlib.constants.Z_PARTIAL_FLUSH, () => {
        events.push('flushed');
        const out = readAll(compress);
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
      events.push({ read: readAll(decompress) });
    }
    // The chunks read held the whole stream: the decompressor ends cleanly.
    const endError = await new Promise((resolve) => {
      decompress.on('error', resolve);
      decompress.on('end', () => resolve(null));
      decompress.resume();
      decompress.end();
    });
    assert.equal(endError, null, `${who}: the Gunzip's end: ${endError?.stack}`);
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
