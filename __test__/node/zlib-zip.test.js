'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zip.js: Node 26's ZIP
// archives (experimental). Entries made by ZipEntry.create() (deflate by
// default, 'store' on request, 'zstd'), written by createZipArchive() and
// read back by ZipEntry.read() and ZipBuffer, keep their content, method,
// kind (file, directory, symlink) and mode; content that does not shrink,
// and empty content, is stored; an entry's crc32 is crc32() of its
// content; an archive comment over 65535 bytes is ERR_ZIP_ARCHIVE_TOO_LARGE,
// a directory with content ERR_INVALID_ARG_VALUE, a name not in a
// ZipBuffer ERR_ZIP_ENTRY_NOT_FOUND; deflate and zstd entries stream back
// through contentIterator().
//
// `@tidepool-rs/pool/zlib` has no ZIP code of its own: it hands on
// node:zlib's (lib/zlib/index.js gives what it does not implement as
// node:zlib has it). So both runs check the module's names, which are
// node:zlib's objects, and where node:zlib has no ZIP archives (before
// Node 26.8) the test is skipped: there is nothing for the drop-in to run
// alone. No pool work (`work: false`). Upstream's `using` is a
// Symbol.dispose call in a `finally` here (the file must load on Node 20).

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const skip = typeof nodeZlib.ZipEntry === 'function' ? false : 'node:zlib has no ZIP archives here';

/** The archive of `entries` (and `comment`), from createZipArchive()'s chunks. */
async function buildArchive(zlib, entries, comment) {
  const chunks = [];
  for await (const chunk of zlib.createZipArchive(entries, comment)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** `length` bytes of xorshift32 noise, which neither deflate nor zstd can shrink. */
function noise(length) {
  const out = Buffer.alloc(length);
  let x = 0x85ebca6b;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** both() without pool work, for a check of the ZIP API. */
const zipCheck = (check) => both(check, { work: false });

test('an archive of a few entries reads back through ZipEntry.read()', { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    const text = 'Hello, world!'.repeat(20);
    const archive = await buildArchive(
      zlib,
      [
        await zlib.ZipEntry.create('hello.txt', Buffer.from(text)),
        await zlib.ZipEntry.create('raw.bin', Buffer.from([1, 2, 3, 4, 5]), { method: 'store' }),
        await zlib.ZipEntry.create('empty.txt', Buffer.alloc(0)),
        await zlib.ZipEntry.create('dir/', Buffer.alloc(0)),
      ],
      'test comment',
    );
    const read = new Map([...zlib.ZipEntry.read(archive)].map((entry) => [entry.name, entry]));
    assert.equal(read.size, 4, who);
    const hello = read.get('hello.txt');
    assert.equal((await hello.content()).toString(), text, who);
    assert.equal(hello.method, 8, `${who}: deflate`);
    assert.equal(hello.isFile, true, who);
    assert.deepEqual(await read.get('raw.bin').content(), Buffer.from([1, 2, 3, 4, 5]), who);
    assert.equal(read.get('raw.bin').method, 0, `${who}: stored`);
    assert.equal((await read.get('empty.txt').content()).length, 0, who);
    assert.equal(read.get('dir/').isDirectory, true, who);
  });
});

test('a ZipBuffer finds its entries by name', { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    const archive = await buildArchive(zlib, [
      await zlib.ZipEntry.create('a.txt', Buffer.from('a')),
      await zlib.ZipEntry.create('b.txt', Buffer.from('b')),
    ]);
    const zip = new zlib.ZipBuffer(archive);
    try {
      assert.equal(zip.size, 2, who);
      assert.equal(zip.has('a.txt'), true, who);
      assert.equal(zip.has('missing.txt'), false, who);
      assert.equal((await zip.get('a.txt').content()).toString(), 'a', who);
      assert.deepEqual([...zip.keys()].sort(), ['a.txt', 'b.txt'], who);
      assert.throws(() => zip.get('missing.txt'), { code: 'ERR_ZIP_ENTRY_NOT_FOUND' }, who);
    } finally {
      zip[Symbol.dispose]?.();
    }
  });
});

test('content that does not shrink, or none, is stored', { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    const random = noise(4096);
    for (const method of [undefined, 'zstd']) {
      const entry = await zlib.ZipEntry.create('random.bin', random, method && { method });
      assert.equal(entry.method, 0, `${who}: ${method ?? 'default'}`);
      assert.deepEqual(await entry.content(), random, who);
    }
    assert.equal((await zlib.ZipEntry.create('empty.bin', Buffer.alloc(0))).method, 0, who);
    // Stored on request, however well it would compress.
    const data = Buffer.from('a'.repeat(60));
    const stored = await zlib.ZipEntry.create('stored.txt', data, { method: 'store' });
    assert.equal(stored.method, 0, who);
    assert.deepEqual(stored.rawContent, data, who);
  });
});

test('a zstd entry compresses and reads back from an archive', { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    const data = Buffer.from('zstd content '.repeat(200));
    const entry = await zlib.ZipEntry.create('z.txt', data, { method: 'zstd' });
    assert.equal(entry.method, 93, who);
    assert.ok(entry.compressedSize < data.length, `${who}: ${entry.compressedSize} bytes`);
    assert.deepEqual(await entry.content(), data, who);
    const [read] = zlib.ZipEntry.read(await buildArchive(zlib, [entry]));
    assert.equal(read.method, 93, who);
    assert.deepEqual(await read.content(), data, who);
  });
});

test("an entry's crc32 is crc32() of its content", { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    const data = Buffer.from('the quick brown fox jumps over the lazy dog');
    assert.equal((await zlib.ZipEntry.create('f.txt', data)).crc32, zlib.crc32(data), who);
  });
});

test('an overlong comment, and a directory with content, are refused', { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    await assert.rejects(
      buildArchive(zlib, [], 'x'.repeat(70000)),
      { code: 'ERR_ZIP_ARCHIVE_TOO_LARGE' },
      who,
    );
    await assert.rejects(
      zlib.ZipEntry.create('dir/', Buffer.from('x')),
      { code: 'ERR_INVALID_ARG_VALUE' },
      who,
    );
  });
});

test('a symlink entry reads back as a symlink', { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    const entry = zlib.ZipEntry.createSymlink('link', '../target', { mode: 0o777 });
    const [read] = zlib.ZipEntry.read(await buildArchive(zlib, [entry]));
    assert.equal(read.isSymlink, true, who);
    assert.equal(read.isFile, false, who);
    assert.equal(read.mode, 0o777, who);
    assert.equal(read.contentSync().toString(), '../target', who);
  });
});

test('deflate and zstd entries stream back through contentIterator()', { skip }, async () => {
  await zipCheck(async (zlib, _common, who) => {
    for (const method of ['deflate', 'zstd']) {
      const data = Buffer.from(`${method} payload `.repeat(500));
      const entry = await zlib.ZipEntry.create('m.txt', data, { method });
      const [read] = zlib.ZipEntry.read(await buildArchive(zlib, [entry]));
      const chunks = [];
      for await (const chunk of read.contentIterator()) chunks.push(chunk);
      assert.deepEqual(Buffer.concat(chunks), data, `${who}: ${method}`);
    }
  });
});
