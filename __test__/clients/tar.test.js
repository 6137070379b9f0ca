'use strict';
// tar behind install(): tar.c({ gzip: true }) and tar.x() of the .tgz.
//
// tar does not reach the pool, by its design: it compresses and decompresses
// through minizlib, which constructs node:zlib's classes (`new zlib.Gzip()`,
// `new zlib.Unzip()`, which install() leaves alone) and drives them
// synchronously through their internals (`_handle`, `_processChunk()`),
// never through createGzip() or the one-shots. So the test asserts what is
// true: the archive is right behind install(), and the pool ran no task for
// it, exactly as in the control. With zlib.createGzip() / createGunzip()
// piped around an uncompressed tar stream instead, the pool does the work.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { pipeline } = require('node:stream/promises');
const tar = require('tar');
const { body, routed, poolWork, assertPool } = require('./helpers');

/** Files to archive: relative path -> content. */
const FILES = {
  'readme.txt': Buffer.from('tidepool tar round trip\n'),
  'data/text.txt': body(600_000),
  'data/random.bin': crypto.randomBytes(300_000),
  'data/empty': Buffer.alloc(0),
  'data/deeper/nested/file.txt': body(5000),
};

/** A temporary directory with FILES under src/ and an empty out/; removed after `fn`. */
async function withTree(fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-tar-'));
  try {
    const src = path.join(dir, 'src');
    const out = path.join(dir, 'out');
    for (const [name, content] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(src, name)), { recursive: true });
      fs.writeFileSync(path.join(src, name), content);
    }
    fs.mkdirSync(out);
    return await fn({ src, out, tgz: path.join(dir, 'archive.tgz') });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Asserts out/ has FILES, byte for byte. */
function assertExtracted(out) {
  for (const [name, content] of Object.entries(FILES)) {
    const got = fs.readFileSync(path.join(out, name));
    assert.ok(got.equals(content), `${name}: the extracted bytes differ`);
  }
}

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';

  test(`tar: c({ gzip: true }) then x() of the .tgz, ${where}`, () =>
    routed(installed, () =>
      withTree(async ({ src, out, tgz }) => {
        const ran = await poolWork();
        await tar.c({ gzip: true, file: tgz, cwd: src }, Object.keys(FILES));
        // A gzip file, as node:zlib's own decoder reads it.
        assert.ok(zlib.gunzipSync(fs.readFileSync(tgz)).length > 900_000);
        await tar.x({ file: tgz, cwd: out });
        assertExtracted(out);
        // minizlib drives node:zlib's classes synchronously: not the pool's work.
        assert.equal(ran(), 0, 'tar (minizlib) bypasses the pool, installed or not');
      }),
    ));

  test(`tar: an uncompressed tar stream through zlib.createGzip() and createGunzip(), ${where}`, () =>
    routed(installed, () =>
      withTree(async ({ src, out, tgz }) => {
        const ran = await poolWork();
        await pipeline(
          tar.c({ cwd: src }, Object.keys(FILES)),
          zlib.createGzip(),
          fs.createWriteStream(tgz),
        );
        assert.ok(zlib.gunzipSync(fs.readFileSync(tgz)).length > 900_000);
        await pipeline(fs.createReadStream(tgz), zlib.createGunzip(), tar.x({ cwd: out }));
        assertExtracted(out);
        assertPool(installed, ran, 'createGzip() and createGunzip() around tar');
      }),
    ));
}
