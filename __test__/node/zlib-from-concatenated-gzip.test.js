'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-from-concatenated-gzip.js:
// a gzip file of several members gunzips (and unzips) to all of them, sync
// and async; unzip() of two zlib streams gives only the first (members are
// gzip's); a single member whose body holds gzip's magic bytes (a
// "pseudo-multimember" file) piped from disk gunzips to its input; and the
// second member may start anywhere in the writes.
//
// Upstream's fixtures pseudo-multimember-gzip.gz and .z are not here: the
// file is made in the test, 256 KiB of seeded random bytes with gzip
// headers (1f 8b 08 ...) spread through them, gzipped at level 0 so that
// the headers stay as they are in the member's body (the test checks they
// do); the expected output is inflateSync() of the same bytes deflated, as
// upstream's .z gives it.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const abc = 'abc';
const def = 'def';
const abcEncoded = nodeZlib.gzipSync(abc);
const defEncoded = nodeZlib.gzipSync(def);
const data = Buffer.concat([abcEncoded, defEncoded]);

/** Random bytes (xorshift32) with a gzip header every 3000 bytes. */
function pseudoMultimember(size) {
  const header = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]);
  const out = Buffer.alloc(size);
  let x = 0x1234567;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  for (let at = 1000; at + header.length <= size; at += 3000) header.copy(out, at);
  return out;
}

/** `fn(...args, callback)` as a promise; the callback must come once, without an error. */
function call(common, fn, ...args) {
  return new Promise((resolve) => fn(...args, common.mustSucceed(resolve)));
}

test('several gzip members, one-shot', async () => {
  await both(async (zlib, common, who) => {
    assert.equal(zlib.gunzipSync(data).toString(), abc + def, `${who}: gunzipSync`);
    const [gunzipped, unzipped, zlibStreams] = await Promise.all([
      call(common, zlib.gunzip, data),
      call(common, zlib.unzip, data),
      // Multi-member support does not apply to zlib inflate/deflate.
      call(common, zlib.unzip, Buffer.concat([zlib.deflateSync('abc'), zlib.deflateSync('def')])),
    ]);
    assert.equal(gunzipped.toString(), abc + def, `${who}: gunzip`);
    assert.equal(unzipped.toString(), abc + def, `${who}: unzip`);
    assert.equal(zlibStreams.toString(), abc, `${who}: unzip of two zlib streams`);
  });
});

test('a member whose body holds gzip headers, piped from disk', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-zlib-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const garbage = pseudoMultimember(256 * 1024);
  const pmmFileGz = path.join(dir, 'pseudo-multimember-gzip.gz');
  const gz = nodeZlib.gzipSync(garbage, { level: 0 });
  // The fixture's point: gzip's magic bytes in the member's body.
  assert.ok(gz.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), 10) > 0);
  fs.writeFileSync(pmmFileGz, gz);
  const pmmExpected = nodeZlib.inflateSync(nodeZlib.deflateSync(garbage));

  await both(async (zlib, common, who) => {
    const pmmResultBuffers = [];
    await new Promise((resolve, reject) => {
      fs.createReadStream(pmmFileGz)
        .pipe(zlib.createGunzip())
        .on('error', reject)
        .on('data', (chunk) => pmmResultBuffers.push(chunk))
        .on('finish', common.mustCall(resolve));
    });
    // The result should match the original random garbage.
    assert.deepEqual(Buffer.concat(pmmResultBuffers), pmmExpected, who);
  });
});

test('the next member may start anywhere in the writes', async () => {
  await both(async (zlib, common, who) => {
    for (const offset of [0, 1, 2, 3, 4, defEncoded.length]) {
      const resultBuffers = [];
      await new Promise((resolve, reject) => {
        const unzip = zlib
          .createGunzip()
          .on('error', reject)
          .on('data', (chunk) => resultBuffers.push(chunk))
          .on('finish', common.mustCall(resolve));
        // First write: "abc" and the first bytes of "def".
        unzip.write(Buffer.concat([abcEncoded, defEncoded.subarray(0, offset)]));
        // Then the rest of "def".
        unzip.end(defEncoded.subarray(offset));
      });
      assert.equal(
        Buffer.concat(resultBuffers).toString(),
        'abcdef',
        `${who}: the result should match the input (offset = ${offset})`,
      );
    }
  });
});
