'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-brotli-flush.js: a
// BrotliCompress's flush() (BROTLI_OPERATION_FLUSH by default) after a
// 16-byte write makes exactly brotli's bytes for those 16 bytes as an
// uncompressed meta-block. Upstream writes the first 16 bytes of its
// fixture person.jpg (not here): they are a JPEG's JFIF header, spelled out
// below (the same bytes, as upstream's expected output holds them).
// Upstream checks at process exit; here, once the flush is called back.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** person.jpg's first 16 bytes: SOI, APP0, "JFIF\0", version 1.1, units 1, density 0x48.. */
const chunk = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x01, 0x00, 0x48,
]);
const expectedFull = Buffer.from('iweA/9j/4AAQSkZJRgABAQEASA==', 'base64');

test('BrotliCompress flush() after a write gives the bytes so far', async () => {
  await both(async (zlib, common, who) => {
    const deflater = new zlib.BrotliCompress();
    const actualFull = await new Promise((resolve) => {
      deflater.write(
        chunk,
        common.mustCall(() => {
          deflater.flush(
            common.mustCall(() => {
              const bufs = [];
              let buf;
              while ((buf = deflater.read()) !== null) bufs.push(buf);
              resolve(Buffer.concat(bufs));
            }),
          );
        }),
      );
    });
    assert.deepEqual(actualFull, expectedFull, who);
    deflater.destroy();
  });
});
