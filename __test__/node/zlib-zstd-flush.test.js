'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd-flush.js: a
// ZstdCompress's flush() (ZSTD_e_flush by default) after a 16-byte write
// makes exactly zstd's bytes for those 16 bytes: a frame header and one
// raw block. Upstream writes the first 16 bytes of its fixture person.jpg
// (not here): they are a JPEG's JFIF header, spelled out below (the same
// bytes, as upstream's expected output holds them). Upstream checks at
// process exit; here, once the flush is called back. zstd is node:zlib's
// from Node 22.15 and 23.8: before, the drop-in's run goes alone.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

/** person.jpg's first 16 bytes: SOI, APP0, "JFIF\0", version 1.1, units 1, density 0x48.. */
const chunk = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x01, 0x00, 0x48,
]);
const expectedFull = Buffer.from('KLUv/QBYgAAA/9j/4AAQSkZJRgABAQEASA==', 'base64');

test('ZstdCompress flush() after a write gives the bytes so far', async (t) => {
  if (!NODE_HAS_ZSTD) t.diagnostic('node:zlib has no zstd here: the drop-in runs alone');
  await both(async (zlib, common, who) => {
    if (zlib === nodeZlib && !NODE_HAS_ZSTD) return;
    const compress = new zlib.ZstdCompress();
    const actualFull = await new Promise((resolve) => {
      compress.write(
        chunk,
        common.mustCall(() => {
          compress.flush(
            common.mustCall(() => {
              const bufs = [];
              let buf;
              while ((buf = compress.read()) !== null) bufs.push(buf);
              resolve(Buffer.concat(bufs));
            }),
          );
        }),
      );
    });
    assert.deepEqual(actualFull, expectedFull, who);
    compress.destroy();
  });
});
