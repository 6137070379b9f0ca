'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-flush.js: a Deflate at
// level 0, after a 16-byte write, gives only its header on a flush of
// Z_NO_FLUSH, and on flush() (Z_FULL_FLUSH) the write as a stored block
// followed by the empty stored block of the flush, byte for byte.
// Upstream writes the first 16 bytes of its fixture person.jpg (not here):
// they are a JPEG's JFIF header, spelled out below. Upstream checks at
// process exit; here, once the second flush is called back.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** person.jpg's first 16 bytes: SOI, APP0, "JFIF\0", version 1.1, units 1, density 0x48.. */
const chunk = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x01, 0x00, 0x48,
]);
const expectedNone = Buffer.from([0x78, 0x01]);
const blkhdr = Buffer.from([0x00, 0x10, 0x00, 0xef, 0xff]);
const adler32 = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);
const expectedFull = Buffer.concat([blkhdr, chunk, adler32]);

test('Deflate at level 0: Z_NO_FLUSH, then a full flush', async () => {
  await both(async (zlib, common, who) => {
    const deflater = zlib.createDeflate({ level: 0 });
    const [actualNone, actualFull] = await new Promise((resolve) => {
      deflater.write(
        chunk,
        common.mustCall(() => {
          deflater.flush(
            zlib.constants.Z_NO_FLUSH,
            common.mustCall(() => {
              const none = deflater.read();
              deflater.flush(
                common.mustCall(() => {
                  const bufs = [];
                  let buf;
                  while ((buf = deflater.read()) !== null) bufs.push(buf);
                  resolve([none, Buffer.concat(bufs)]);
                }),
              );
            }),
          );
        }),
      );
    });
    deflater.destroy();
    assert.deepEqual(actualNone, expectedNone, `${who}: Z_NO_FLUSH`);
    assert.deepEqual(actualFull, expectedFull, `${who}: Z_FULL_FLUSH`);
  });
});
