'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-params.js: a Deflate
// at level 9 takes a first chunk, then params(0, Z_DEFAULT_STRATEGY)
// (level 0: stored) before the rest; what comes out after params() is
// exactly the rest as one stored block, the final empty stored block and
// the Adler-32 of the whole input.
//
// Upstream's input is the fixture person.jpg (45658 bytes), not here: the
// input is made in the test, 45658 deterministic bytes, cut at the same
// 12 KiB, so the stored block has upstream's header (00 5a 82 a5 7d); its
// footer's checksum is computed here for these bytes (upstream writes the
// one of person.jpg).

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** `size` deterministic bytes: xorshift32 noise, with runs that compress. */
function sample(size, seed = 0x2545f491) {
  const out = Buffer.alloc(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = (i >> 10) % 4 === 0 ? 0x20 + (i % 7) : x & 0xff;
  }
  return out;
}

/** zlib's Adler-32 of `buf`. */
function adler32(buf) {
  let a = 1;
  let b = 0;
  for (const byte of buf) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

// Fails on tidepool while params() cannot change the level: it throws
// ERR_TIDEPOOL_ZLIB_UNSUPPORTED (lib/zlib/streams.js Zlib#params). See the
// report of this adaptation.
test('params() to level 0 mid-stream: the rest comes out stored', async () => {
  const file = sample(45658);
  const chunkSize = 12 * 1024;
  const chunk1 = file.subarray(0, chunkSize);
  const chunk2 = file.subarray(chunkSize);
  const blkhdr = Buffer.from([0x00, 0x5a, 0x82, 0xa5, 0x7d]);
  const blkftr = Buffer.alloc(9);
  Buffer.from('010000ffff', 'hex').copy(blkftr);
  blkftr.writeUInt32BE(adler32(file), 5);
  const expected = Buffer.concat([blkhdr, chunk2, blkftr]);

  await both(async (zlib, common, who) => {
    const opts = { level: 9, strategy: zlib.constants.Z_DEFAULT_STRATEGY };
    const deflater = zlib.createDeflate(opts);
    const bufs = [];
    const read = () => {
      let buf;
      while ((buf = deflater.read()) !== null) bufs.push(buf);
    };
    try {
      await new Promise((resolve, reject) => {
        deflater.on('error', reject);
        deflater.on('end', resolve);
        deflater.write(
          chunk1,
          common.mustCall(() => {
            try {
              deflater.params(
                0,
                zlib.constants.Z_DEFAULT_STRATEGY,
                common.mustCall(() => {
                  while (deflater.read());
                  deflater.on('readable', read);
                  deflater.end(chunk2);
                }),
              );
            } catch (err) {
              reject(err);
            }
            while (deflater.read());
          }),
        );
      });
      assert.deepEqual(Buffer.concat(bufs), expected, who);
    } finally {
      deflater.destroy();
    }
  });
});
