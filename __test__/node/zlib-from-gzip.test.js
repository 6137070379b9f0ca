'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-from-gzip.js: a
// gzip file piped from disk through Gunzip to disk, as fast as the streams
// go, comes out byte for byte. Upstream's fixture person.jpg.gz (made by
// another gzip library) is not here: the file is made in the test, 64 KiB
// of deterministic bytes (random, with repeated runs) compressed by
// node:zlib's gzipSync, the same input for both runs.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

/** `size` deterministic bytes: xorshift32 noise, with runs that compress. */
function sample(size, seed = 0x9e3779b9) {
  const out = Buffer.alloc(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = (i >> 9) % 3 === 0 ? i & 0x0f : x & 0xff;
  }
  return out;
}

test('a gzip file piped through Gunzip comes out whole', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-zlib-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const expect = sample(64 * 1024);
  const fixture = path.join(dir, 'sample.gz');
  fs.writeFileSync(fixture, nodeZlib.gzipSync(expect));

  await both(async (zlib, common, who) => {
    const outputFile = path.join(dir, `sample-${who.replace(':', '-')}`);
    const decompress = zlib.createGunzip();
    const inp = fs.createReadStream(fixture);
    const out = fs.createWriteStream(outputFile);
    await new Promise((resolve, reject) => {
      decompress.on('error', reject);
      out.on('close', common.mustCall(resolve));
      inp.pipe(decompress).pipe(out);
    });
    const actual = fs.readFileSync(outputFile);
    assert.equal(actual.length, expect.length, who);
    for (let i = 0; i < actual.length; i++) {
      if (actual[i] !== expect[i]) assert.equal(actual[i], expect[i], `${who}: byte[${i}]`);
    }
  });
});
