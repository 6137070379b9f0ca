'use strict';
// pool.createHash(): an incremental hash on the pool's threads, equal to
// node:crypto whatever the chunking, usable as a Writable (around
// digest(): hash-digest.test.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const { Readable } = require('node:stream');
const { Pool } = require('..');
const { waitFor, poolState, holdThread } = require('./wait');
const { notOnDeno } = require('./runtime');
const { cuts } = require('./chunks');

test('createHash gives node:crypto’s digest for every hash, whatever the chunking', async () => {
  const pool = new Pool();
  try {
    const data = crypto.randomBytes(300_000);
    for (const name of ['sha256', 'sha384', 'sha512', 'sha1', 'md5']) {
      for (const seed of [1, 2, 3]) {
        const hash = pool.createHash(name);
        for (const piece of cuts(data, seed)) assert.equal(hash.update(piece), hash);
        assert.deepEqual(
          await hash.digest(),
          crypto.createHash(name).update(data).digest(),
          `${name}, seed ${seed}`,
        );
      }
    }
    const hmac = pool.createHash('hmac', { params: { hash: 'sha512', key: 'secret' } });
    for (const piece of cuts(data, 9)) hmac.update(piece);
    assert.equal(
      await hmac.digest('hex'),
      crypto.createHmac('sha512', 'secret').update(data).digest('hex'),
    );
    // The other hashes against their one-shot kernels.
    for (const name of ['blake3', 'xxh3', 'xxh64', 'crc32', 'crc32c']) {
      const hash = pool.createHash(name);
      for (const piece of cuts(data, 4)) hash.update(piece);
      assert.deepEqual(await hash.digest(), (await pool.post(data, { kernel: name })).result, name);
    }
    assert.equal(
      await pool.createHash('sha256').digest('hex'),
      crypto.createHash('sha256').digest('hex'),
      'no input',
    );
  } finally {
    await pool.close();
  }
});

test(
  'update() takes strings in an encoding and any binary, and returns at once',
  { skip: notOnDeno('its node:crypto refuses an unknown encoding') },
  async () => {
    const pool = new Pool({ maxThreads: 1 });
    try {
      const hash = pool.createHash('sha256');
      hash
        .update('héllo ')
        .update('776f726c64', 'hex')
        .update(new Uint16Array([0x2020]))
        .update(new DataView(Buffer.from('!').buffer, 0, 0));
      const expected = crypto
        .createHash('sha256')
        .update('héllo ')
        .update('776f726c64', 'hex')
        .update(new Uint16Array([0x2020]))
        .digest('base64url');
      assert.equal(await hash.digest('base64url'), expected);
      assert.throws(() => hash.update('more'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
      assert.throws(() => hash.digest(), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
      // Encodings as node:crypto takes them: an unknown one is utf8 for
      // update() and a Buffer for digest(); hex of odd length is refused.
      for (const [who, make] of [
        ['node:crypto', () => crypto.createHash('md5')],
        ['tidepool', () => pool.createHash('md5')],
      ]) {
        const other = make();
        assert.throws(() => other.update(42), { code: 'ERR_INVALID_ARG_TYPE' }, who);
        assert.throws(
          () => other.update([Buffer.from('a')]),
          { code: 'ERR_INVALID_ARG_TYPE' },
          who,
        );
        for (const hex of ['hex', 'HEX', 'Hex', 'hEx']) {
          assert.throws(
            () => other.update('abc', hex),
            { code: 'ERR_INVALID_ARG_VALUE', message: /length 3/ },
            `${who}, ${hex}`,
          );
        }
        other.update('x', 'klingon').update('y', null);
        const digest = await other.digest('klingon');
        assert.ok(Buffer.isBuffer(digest), who);
        assert.deepEqual(digest, crypto.createHash('md5').update('xy').digest(), who);
      }
    } finally {
      await pool.close();
    }
  },
);

test('createHash refuses what is not a hash, unknown options and bad parameters', async () => {
  const pool = new Pool();
  try {
    assert.throws(() => pool.createHash('gzip'), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /not a hash kernel/,
    });
    assert.throws(() => pool.createHash('nope'), { code: 'ERR_TIDEPOOL_UNKNOWN_KERNEL' });
    assert.throws(() => pool.createHash(7), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => pool.createHash('sha256', { encoding: 'hex' }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /encoding/,
    });
    assert.throws(() => pool.createHash('hmac'), { code: 'ERR_INVALID_ARG_TYPE', message: /hash/ });
    // An aborted signal: the hash is made destroyed (as a node:zlib stream), and digest() rejects.
    const aborted = pool.createHash('sha256', { signal: AbortSignal.abort() });
    assert.equal(aborted.destroyed, true);
    await assert.rejects(aborted.digest(), { name: 'AbortError' });
  } finally {
    await pool.close();
  }
});

test('a hash is a Writable: pipeline a file into it, then digest()', async () => {
  const pool = new Pool();
  const file = path.join(os.tmpdir(), `tidepool-hash-${process.pid}.bin`);
  fs.writeFileSync(file, crypto.randomBytes(5 * 2 ** 20 + 123));
  try {
    const hash = pool.createHash('sha256');
    await pipeline(fs.createReadStream(file), hash);
    assert.equal(
      await hash.digest('hex'),
      crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex'),
    );
    // Strings written in an encoding, and many small writes buffered together.
    const text = pool.createHash('sha1');
    await pipeline(Readable.from(['a', 'b', 'c'].map((c) => c.repeat(1000))), text);
    assert.equal(
      await text.digest('hex'),
      crypto
        .createHash('sha1')
        .update('a'.repeat(1000) + 'b'.repeat(1000) + 'c'.repeat(1000))
        .digest('hex'),
    );
  } finally {
    fs.rmSync(file, { force: true });
    await pool.close();
  }
});

test('many hashes at once each stay in order; their chunks count as tasks', async () => {
  const pool = new Pool();
  try {
    const inputs = Array.from({ length: 16 }, (_, i) => crypto.randomBytes(200_000 + i * 1000));
    const hashes = inputs.map(() => pool.createHash('sha256'));
    // Interleaved: one chunk of each in turn, each too large to be hashed
    // on the calling thread (streams/tasks.js INLINE_BYTES).
    for (let at = 0; at < 220_000; at += 65_536) {
      for (let i = 0; i < inputs.length; i++) hashes[i].update(inputs[i].subarray(at, at + 65_536));
    }
    const digests = await Promise.all(hashes.map((h) => h.digest()));
    for (let i = 0; i < inputs.length; i++)
      assert.deepEqual(digests[i], crypto.createHash('sha256').update(inputs[i]).digest());
    const s = pool.stats();
    assert.ok(s.completed >= 32, 'at least two tasks per hash');
    assert.equal(s.pending, 0);
  } finally {
    await pool.close();
  }
});

test('an aborted signal, a closed pool or a destroyed stream fails the hash', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 1 });
  const blocker = await holdThread(pool);
  try {
    // Large enough to be staged (not hashed at once): its task waits behind the blocker.
    const ac = new AbortController();
    const aborted = pool.createHash('sha256', { signal: ac.signal });
    aborted.update(Buffer.alloc(100_000));
    assert.equal(pool.stats().queued, 1);
    ac.abort();
    await assert.rejects(aborted.digest(), { name: 'AbortError' });
    assert.equal(pool.stats().queued, 0, 'the queued task was taken out');

    const destroyed = pool.createHash('md5');
    destroyed.update('x');
    destroyed.destroy();
    await assert.rejects(destroyed.digest(), { code: 'ERR_STREAM_DESTROYED' });

    const late = pool.createHash('sha256');
    late.update(Buffer.alloc(100_000));
    const closing = pool.close();
    blocker.release();
    await closing;
    // Its update was queued before close(): it ran; its digest, asked for after, is refused.
    await assert.rejects(late.digest(), { code: 'ERR_TIDEPOOL_CLOSED' });
    assert.equal(pool.stats().pending, 0);
  } finally {
    blocker.release();
    await pool.close();
  }
});

test('destroy() stops the chunk running; the caller’s signal listener goes when the hash ends', async () => {
  const { getEventListeners } = require('node:events');
  const pool = new Pool({ maxThreads: 1 });
  try {
    const big = Buffer.alloc(2 ** 30); // zero pages, mapped lazily: about 2 s of MD5
    const hash = pool.createHash('md5');
    hash.on('error', () => {});
    hash.write(big); // a write goes to the pool as it is
    await waitFor(() => pool.stats().busyThreads === 1, {
      what: 'a thread to take the hash’s task',
      state: poolState(pool),
    });
    hash.destroy();
    await assert.rejects(hash.digest(), { code: 'ERR_STREAM_DESTROYED' });
    await waitFor(() => pool.stats().pending === 0, {
      what: 'the running chunk to stop',
      state: poolState(pool),
    });
    // It stopped: it was cancelled, not run to its end.
    assert.equal(pool.stats().completed, 0);
    assert.equal(pool.stats().failed, 1);
    const ac = new AbortController();
    const kept = pool.createHash('md5', { signal: ac.signal });
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
    kept.update('x');
    await kept.digest();
    kept.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  } finally {
    await pool.close();
  }
});

test('a stream’s output is bytes whatever the pool’s encoding; maxInputBytes bounds messages, not streams', async () => {
  const pool = new Pool({ encoding: 'hex', maxInputBytes: 1000 });
  try {
    const hash = pool.createHash('sha256');
    for (let i = 0; i < 20; i++) hash.update(Buffer.alloc(900, i)); // 18,000 bytes, in tasks of several chunks
    const expected = crypto.createHash('sha256');
    for (let i = 0; i < 20; i++) expected.update(Buffer.alloc(900, i));
    assert.equal(await hash.digest('base64'), expected.digest('base64'));
    const buffer = await pool.createHash('md5').update('x').digest();
    assert.ok(Buffer.isBuffer(buffer));
  } finally {
    await pool.close();
  }
});

test('a signal that fires between chunks, or a chunk detached while it waits, fails the hash without a crash', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    const ac = new AbortController();
    const hash = pool.createHash('sha256', { signal: ac.signal });
    let n = 0;
    const source = new Readable({
      read() {
        if (++n === 5) ac.abort();
        this.push(n < 50 ? Buffer.alloc(65536, n) : null);
      },
    });
    await assert.rejects(pipeline(source, hash), { name: 'AbortError' });
    await assert.rejects(hash.digest(), { name: 'AbortError' });

    // A write is read in place: detached while it waits, it fails the hash.
    const detached = pool.createHash('sha256');
    const failed = new Promise((resolve) => detached.on('error', resolve));
    detached.write(Buffer.alloc(32 * 2 ** 20, 1)); // a task that runs a while
    const ab = new ArrayBuffer(1024);
    detached.write(new Uint8Array(ab)); // waits for that task
    structuredClone(ab, { transfer: [ab] });
    assert.equal((await failed).code, 'ERR_INVALID_STATE');
    await assert.rejects(detached.digest(), { code: 'ERR_INVALID_STATE' });
    // update() copies (or hashes) at once: detaching afterwards changes nothing.
    const copied = pool.createHash('sha256');
    const bytes = new ArrayBuffer(100_000);
    new Uint8Array(bytes).fill(7);
    copied.update(new Uint8Array(bytes));
    structuredClone(bytes, { transfer: [bytes] });
    assert.equal(
      await copied.digest('hex'),
      crypto.createHash('sha256').update(Buffer.alloc(100_000, 7)).digest('hex'),
    );
    await waitFor(() => pool.stats().pending === 0, {
      what: 'nothing pending',
      state: poolState(pool),
    });
  } finally {
    await pool.close();
  }
});
