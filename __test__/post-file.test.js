'use strict';
// pool.postFile(): a kernel run over a file a pool thread reads, with
// fs-style errors.

const test = require('node:test');
const assert = require('node:assert/strict');
const { PERMISSION_FLAG } = require('./project');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { spawnSync } = require('node:child_process');
const { pathToFileURL } = require('node:url');
const { Pool } = require('..');

const ROOT = path.join(__dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-file-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A file of `data` in the test's directory; its path. */
function fileOf(name, data) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, data);
  return file;
}

/** What fs.promises.readFile rejects with for `file`: the fields postFile's errors must match. */
async function fsFailure(file) {
  const err = await fs.promises.readFile(file).then(
    () => assert.fail(`${file} was read`),
    (e) => e,
  );
  return {
    message: err.message,
    code: err.code,
    errno: err.errno,
    syscall: err.syscall,
    path: err.path,
  };
}

test('a file gives what the kernel gives for its bytes, whatever its size', async () => {
  const pool = new Pool();
  try {
    // Around the 256 KiB reads: empty, one byte, exact multiples, one past.
    for (const size of [0, 1, 256 * 1024, 3 * 256 * 1024 + 17]) {
      const data = crypto.randomBytes(size);
      const file = fileOf(`random-${size}`, data);
      for (const kernel of ['sha256', 'sha512', 'md5', 'blake3']) {
        const { result, path: given } = await pool.postFile(file, { kernel });
        const expected =
          kernel === 'blake3'
            ? (await pool.post(data, { kernel })).result
            : crypto.createHash(kernel).update(data).digest();
        assert.deepEqual(result, expected, `${kernel} of ${size} bytes`);
        assert.equal(given, file);
      }
      const packed = await pool.postFile(file, { kernel: 'gzip', params: { level: 1 } });
      assert.deepEqual(zlib.gunzipSync(packed.result), data);
    }
    // The path as a URL, as bytes, relative: the result carries the very value given.
    const file = fileOf('named', 'tidepool');
    const url = pathToFileURL(file);
    assert.equal((await pool.postFile(url, { kernel: 'sha256' })).path, url);
    const bytes = Buffer.from(file);
    const byBytes = await pool.postFile(bytes, { kernel: 'sha256' });
    assert.equal(byBytes.path, bytes);
    assert.deepEqual(byBytes.result, crypto.createHash('sha256').update('tidepool').digest());
    // A relative path is resolved when posted: a chdir right after changes nothing.
    const cwd = process.cwd();
    process.chdir(dir);
    const relative = pool.postFile('named', { kernel: 'sha256' });
    process.chdir(cwd);
    assert.deepEqual((await relative).result, byBytes.result);
  } finally {
    await pool.close();
  }
});

test('a 2 GiB sparse file is read in chunks, never as one Buffer', async () => {
  const pool = new Pool();
  try {
    const size = 2 * 2 ** 30;
    const file = path.join(dir, 'sparse');
    const tail = Buffer.from('the end of a sparse file');
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, tail, 0, tail.length, size - tail.length);
    fs.closeSync(fd);
    assert.equal(fs.statSync(file).size, size);
    const before = process.memoryUsage().rss;
    const { result } = await pool.postFile(file, { kernel: 'crc32' });
    const grew = process.memoryUsage().rss - before;
    // The same bytes through a stream of one zero Buffer written again and again.
    const hash = pool.createHash('crc32');
    const zeros = Buffer.alloc(64 * 2 ** 20);
    for (let at = 0; at < size - tail.length; at += zeros.length) {
      hash.update(zeros.subarray(0, Math.min(zeros.length, size - tail.length - at)));
    }
    hash.update(tail);
    assert.deepEqual(result, await hash.digest());
    assert.ok(grew < 256 * 2 ** 20, `RSS grew by ${grew} bytes while reading 2 GiB`);
  } finally {
    await pool.close();
  }
});

test('a missing file, a directory and an unreadable file fail as fs fails', async () => {
  const pool = new Pool();
  try {
    for (const file of [path.join(dir, 'not-there'), dir, path.join(dir, 'not-there', 'below')]) {
      const err = await pool.postFile(file, { kernel: 'sha256' }).then(
        () => assert.fail('read'),
        (e) => e,
      );
      assert.ok(err instanceof Error);
      // fs's read errors (EISDIR) carry no path; ours always name the file.
      const theirs = await fsFailure(file);
      const expected =
        theirs.path === undefined
          ? { ...theirs, message: `${theirs.message} '${file}'`, path: file }
          : theirs;
      assert.deepEqual(
        {
          message: err.message,
          code: err.code,
          errno: err.errno,
          syscall: err.syscall,
          path: err.path,
        },
        expected,
      );
    }
  } finally {
    await pool.close();
  }
  // Without read permission: as a user the mode shuts out (root reads anything,
  // so a child process runs as nobody when this one is root).
  const secret = fileOf('secret', 'no one may read this');
  fs.chmodSync(secret, 0o000);
  const script = `
    const { Pool } = require(${JSON.stringify(ROOT)});
    const fs = require('node:fs');
    const pool = new Pool();
    const fields = (e) => ({ message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path });
    Promise.all([
      pool.postFile(${JSON.stringify(secret)}, { kernel: 'sha256' }).then(() => 'read', fields),
      fs.promises.readFile(${JSON.stringify(secret)}).then(() => 'read', fields),
    ]).then((both) => { console.log(JSON.stringify(both)); return pool.close(); });
  `;
  const asRoot = process.getuid?.() === 0;
  if (asRoot) fs.chmodSync(dir, 0o755); // nobody must reach the file to be refused by its mode
  const child = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  assert.equal(child.status, 0, child.stderr);
  const [ours, theirs] = JSON.parse(child.stdout);
  assert.equal(ours.code, 'EACCES');
  assert.deepEqual(ours, theirs);
});

test('a path names the file fs would open: symlinks before `..`, a trailing slash, a working directory gone', async () => {
  const pool = new Pool();
  const cwd = process.cwd();
  try {
    // here/link -> ../there: here/link/../x.txt is there's parent's x.txt for fs, not here/x.txt.
    for (const d of ['here', 'there/inner']) fs.mkdirSync(path.join(dir, d), { recursive: true });
    fs.writeFileSync(path.join(dir, 'here', 'x.txt'), 'here');
    fs.writeFileSync(path.join(dir, 'there', 'x.txt'), 'there');
    fs.symlinkSync(path.join(dir, 'there', 'inner'), path.join(dir, 'here', 'link'));
    const sha = (data) => crypto.createHash('sha256').update(data).digest();
    // (Joined by hand: path.join would drop the `..` lexically, the mistake this test is about.)
    const through = `${dir}/here/link/../x.txt`;
    for (const given of [through, Buffer.from(through)]) {
      const { result } = await pool.postFile(given, { kernel: 'sha256' });
      assert.deepEqual(result, sha(fs.readFileSync(given)), String(given));
      assert.deepEqual(result, sha('there'));
    }
    const slash = `${path.join(dir, 'here', 'x.txt')}/`;
    await assert.rejects(pool.postFile(slash, { kernel: 'sha256' }), {
      code: 'ENOTDIR',
      path: slash,
    });
    // A working directory removed: a relative path rejects, as fs.promises does (no throw).
    const gone = fs.mkdtempSync(path.join(dir, 'gone-'));
    process.chdir(gone);
    fs.rmdirSync(gone);
    const posted = pool.postFile('x.txt', { kernel: 'sha256' });
    process.chdir(cwd);
    await assert.rejects(posted, { code: 'ENOENT' });
  } finally {
    process.chdir(cwd);
    await pool.close();
  }
});

test('a FIFO, a socket or a device is refused at once, never blocking a thread', async () => {
  const fifo = path.join(dir, 'fifo');
  const made = spawnSync('mkfifo', [fifo], { timeout: 60_000 });
  const pool = new Pool();
  try {
    if (made.status === 0) {
      // No writer: an open() that waited for one would hang the pool's close().
      await assert.rejects(pool.postFile(fifo, { kernel: 'sha256' }), {
        code: 'ERR_TIDEPOOL_NOT_A_FILE',
        syscall: 'fstat',
        path: fifo,
        message: `ERR_TIDEPOOL_NOT_A_FILE: not a regular file (postFile() reads no FIFO, socket or device), fstat '${fifo}'`,
      });
    }
    const devNull = Buffer.from('/dev/null');
    await assert.rejects(pool.postFile(devNull, { kernel: 'sha256' }), {
      code: 'ERR_TIDEPOOL_NOT_A_FILE',
      path: '/dev/null',
    });
  } finally {
    await pool.close();
  }
});

test('under the permission model, a file outside --allow-fs-read is refused', () => {
  const outside = fileOf('outside', 'x');
  const script = `
    const { Pool } = require(${JSON.stringify(ROOT)});
    const pool = new Pool();
    Promise.all([
      pool.postFile(${JSON.stringify(outside)}, { kernel: 'sha256' }).then(() => 'read', (e) => e.code),
      pool.postFile(${JSON.stringify(path.join(ROOT, 'package.json'))}, { kernel: 'sha256' }).then(({ result }) => result.length),
    ]).then((both) => { console.log(JSON.stringify(both)); return pool.close(); });
  `;
  const child = spawnSync(
    process.execPath,
    [
      PERMISSION_FLAG,
      '--allow-addons',
      '--allow-worker',
      `--allow-fs-read=${ROOT}/*`,
      '--no-warnings',
      '-e',
      script,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), ['ERR_ACCESS_DENIED', 32]);
});

test('bad paths and options throw; signal, timeoutMs, maxOutputBytes and close() apply', async () => {
  const pool = new Pool();
  const file = fileOf('some', crypto.randomBytes(4 * 2 ** 20));
  try {
    for (const bad of [42, null, undefined, {}, ['a']]) {
      assert.throws(() => pool.postFile(bad), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    }
    assert.throws(() => pool.postFile(''), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => pool.postFile('a\0b'), {
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_VALUE',
    });
    assert.throws(() => pool.postFile(Buffer.from('a\0b')), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => pool.postFile(new URL('https://example.com/')), {
      code: 'ERR_INVALID_URL_SCHEME',
    });
    assert.throws(() => pool.postFile(file, { kernal: 'sha256' }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /kernel/,
    });
    assert.throws(() => pool.postFile(file, { kernel: 'nope' }), {
      name: 'TypeError',
      message: /Unknown kernel "nope"/,
    });
    await assert.rejects(
      pool.postFile(file, { kernel: 'gzip', params: { level: 0 }, maxOutputBytes: 2 ** 20 }),
      {
        code: 'ERR_BUFFER_TOO_LARGE',
      },
    );
    // An aborted signal throws at once, as for post().
    assert.throws(() => pool.postFile(file, { kernel: 'sha256', signal: AbortSignal.abort() }), {
      name: 'AbortError',
    });
    // 1 GiB through SHA-256 takes most of a second: stopped between two
    // reads. (4 MiB took a few ms, and a JS thread preempted that long
    // between the post and the abort saw the task finish first.)
    const sparse = path.join(dir, 'long');
    fs.closeSync(fs.openSync(sparse, 'w'));
    fs.truncateSync(sparse, 2 ** 30);
    const controller = new AbortController();
    const aborted = pool.postFile(sparse, { kernel: 'sha256', signal: controller.signal });
    controller.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    await assert.rejects(pool.postFile(sparse, { kernel: 'sha256', timeoutMs: 20 }), {
      code: 'ERR_TIDEPOOL_TIMEOUT',
    });
    const { completed, failed, pending } = pool.stats();
    assert.equal(pending, 0);
    assert.ok(completed >= 0 && failed >= 3, `failed ${failed}`);
  } finally {
    await pool.close();
  }
  await assert.rejects(pool.postFile(file, { kernel: 'sha256' }), { code: 'ERR_TIDEPOOL_CLOSED' });
});
