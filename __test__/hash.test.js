'use strict';
// pool.createHash(): an incremental hash on the pool's threads, equal to
// node:crypto whatever the chunking, usable as a Writable.

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

/** `data` cut at random places (empty chunks included). */
function cuts(data, seed) {
  const out = [];
  let at = 0;
  let x = seed;
  while (at < data.length) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const size = [0, 1, 63, 64, 65, 1000, 4096, 70_000][x % 8];
    out.push(data.subarray(at, at + size));
    at += size;
  }
  return out;
}

/**
 * What node:crypto's Hash of this Node does with a write after digest()
 * and an update() after end(): the error code it fails them with, or null
 * where it drops them (Node 20; 22 for the write). The pool's hash fails
 * them with node:crypto's code where it has one, else with
 * ERR_CRYPTO_HASH_FINALIZED (docs/api.md: no data lost silently).
 */
const NODE_LATE = (() => {
  const ended = crypto.createHash('sha256');
  ended.end();
  let update = null;
  try {
    ended.update('x');
  } catch (err) {
    update = err.code;
  }
  const digested = crypto.createHash('sha256');
  digested.on('error', () => {});
  digested.digest();
  let failed;
  try {
    digested.write('x');
    failed = digested.errored;
  } catch (err) {
    failed = err; // (Deno's Hash throws it out of write())
  }
  return { update, write: failed?.code ?? null };
})();
const OURS_LATE = {
  update: NODE_LATE.update ?? 'ERR_CRYPTO_HASH_FINALIZED',
  write: NODE_LATE.write ?? 'ERR_CRYPTO_HASH_FINALIZED',
};

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

test('a loaded kernel can be a hash too', async () => {
  const pool = new Pool();
  try {
    const [name] = Pool.loadKernels(
      path.join(__dirname, '..', 'examples', 'kernels', 'build', 'tidepool_example_kernels.node'),
    ).filter((n) => n === 'example/sha256');
    const hash = pool.createHash(name);
    const data = crypto.randomBytes(200_000);
    for (const piece of cuts(data, 5)) hash.update(piece);
    assert.deepEqual(await hash.digest(), crypto.createHash('sha256').update(data).digest());
  } finally {
    await pool.close();
  }
});

test('a loaded kernel that writes before its end is no hash, however the input is cut', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    Pool.loadKernels(
      path.join(__dirname, '..', 'examples', 'kernels', 'build', 'tidepool_example_kernels.node'),
    );
    const data = crypto.randomBytes(9 << 20);
    const ways = {
      'end(body)': (h) => h.end(data),
      'one update': (h) => h.update(data),
      'small updates': (h) => {
        for (let i = 0; i < 64 * 1024; i += 7) h.update(data.subarray(i, i + 7));
      },
      'updates past the staging cap': (h) => {
        for (let i = 0; i < data.length; i += 1 << 20) h.update(data.subarray(i, i + (1 << 20)));
      },
      writes: (h) => {
        for (let i = 0; i < data.length; i += 64 * 1024) h.write(data.subarray(i, i + 64 * 1024));
      },
    };
    for (const [way, feed] of Object.entries(ways)) {
      const hash = pool.createHash('example/tee');
      hash.on('error', () => {});
      let fed;
      try {
        feed(hash);
      } catch (err) {
        fed = err; // an update() that hashed here may throw it at once
      }
      const outcome =
        fed ??
        (await hash.digest().then(
          () => undefined,
          (err) => err,
        ));
      assert.equal(outcome?.code, 'ERR_TIDEPOOL_KERNEL_CONTRACT', way);
      assert.match(outcome.message, /not a hash/, way);
    }
  } finally {
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

test(
  'digest() in the middle of writes covers every write and update before it, as node:crypto; later writes fail',
  { skip: notOnDeno("its node:crypto's Hash throws out of write() after digest()") },
  async () => {
    const pool = new Pool({ maxThreads: 1 });
    try {
      for (const [who, make] of [
        ['node:crypto', () => crypto.createHash('sha256')],
        ['tidepool', () => pool.createHash('sha256')],
      ]) {
        const hash = make();
        const errors = [];
        hash.on('error', (e) => errors.push(e.code));
        const results = [];
        const reference = crypto.createHash('sha256');
        for (let i = 0; i < 6; i++) {
          hash.write(Buffer.alloc(1 << 20, i), (err) => results.push(err ? err.code : 'ok'));
          reference.update(Buffer.alloc(1 << 20, i));
          hash.update(`after write ${i}`);
          reference.update(`after write ${i}`);
        }
        const digest = await hash.digest();
        assert.deepEqual(digest, reference.digest(), who);
        await waitFor(() => results.length === 6, { what: `${who}: every write callback` });
        assert.deepEqual(results, ['ok', 'ok', 'ok', 'ok', 'ok', 'ok'], who);
        assert.throws(() => hash.update('late'), { code: 'ERR_CRYPTO_HASH_FINALIZED' }, who);
        // (Before Node 24 node:crypto takes a write after digest() and hashes
        // it into nothing; the pool's hash refuses it: a documented difference.)
        const late = await new Promise((resolve) => hash.write('late', resolve));
        const expected = who === 'tidepool' ? OURS_LATE.write : NODE_LATE.write;
        assert.equal(late?.code ?? null, expected, `${who}: a write after digest()`);
      }
      assert.equal(pool.stats().pending, 0);
    } finally {
      await pool.close();
    }
  },
);

test(
  'a write right after digest(), writes pending or not: the digest still comes; the write fails (node:crypto drops it)',
  { skip: notOnDeno("its node:crypto's Hash throws out of write() after digest()") },
  async () => {
    const pool = new Pool();
    try {
      const big = Buffer.alloc(8 << 20, 7);
      const want = crypto.createHash('sha256').update(big).digest('hex');
      for (const pending of [true, false]) {
        for (const [who, make] of [
          ['node:crypto', () => crypto.createHash('sha256')],
          ['tidepool', () => pool.createHash('sha256')],
        ]) {
          const what = `${who}, ${pending ? 'a write' : 'nothing'} pending`;
          const hash = make();
          const errors = [];
          hash.on('error', (e) => errors.push(e.code));
          if (pending) hash.write(big);
          else hash.update(big);
          const digest = hash.digest('hex');
          const late = new Promise((resolve) => hash.write('late', resolve));
          assert.equal(await digest, want, what);
          const err = await late;
          const expected = who === 'tidepool' ? OURS_LATE.write : NODE_LATE.write;
          assert.equal(err?.code ?? null, expected, what);
          if (expected === null) continue;
          await waitFor(() => errors.length > 0, { what: `${what}: the 'error' event` });
          assert.deepEqual(errors, [expected], what);
        }
      }
    } finally {
      await pool.close();
    }
  },
);

test('update() after end() or digest() with writes under way: the digest is of what came before it', async () => {
  const pool = new Pool();
  try {
    const a = Buffer.alloc(4 << 20, 1);
    const b = Buffer.alloc(1000, 2);
    const want = crypto.createHash('sha256').update(a).update(b).digest('hex');
    for (const [who, make] of [
      ['node:crypto', () => crypto.createHash('sha256')],
      ['tidepool', () => pool.createHash('sha256')],
    ]) {
      // end(): node:crypto digests at once; a later update is dropped (Node
      // 20) or throws (22 on); the pool's throws.
      const ended = make();
      const out = new Promise((resolve, reject) => {
        ended.on('data', (d) => resolve(d.toString('hex')));
        ended.on('error', reject);
      });
      ended.write(a);
      ended.write(b);
      ended.end();
      const expected = who === 'tidepool' ? OURS_LATE.update : NODE_LATE.update;
      if (expected === null) ended.update('c');
      else assert.throws(() => ended.update('c'), { code: expected }, who);
      assert.equal(await out, want, `${who}: end()`);
      // digest(): both throw.
      const digested = make();
      digested.write(a);
      digested.write(b);
      const digest = digested.digest('hex');
      assert.throws(() => digested.update('c'), { code: 'ERR_CRYPTO_HASH_FINALIZED' }, who);
      assert.equal(await digest, want, `${who}: digest()`);
    }
  } finally {
    await pool.close();
  }
});

test('digest(encoding): a truthy encoding is made a string first, as node:crypto; what that throws is thrown', async () => {
  const pool = new Pool();
  try {
    const boom = { toString: () => 'hex', [Symbol.toPrimitive]: undefined };
    const throwing = {
      toString() {
        throw new Error('no string');
      },
    };
    for (const [who, make, digest] of [
      ['node:crypto', () => crypto.createHash('sha256'), (h, e) => h.digest(e)],
      ['tidepool', () => pool.createHash('sha256'), (h, e) => h.digest(e)],
    ]) {
      const h = make();
      h.update('abc');
      assert.throws(() => digest(h, throwing), { message: 'no string' }, who);
      // Not finalized by the throw: the digest still comes, in the encoding the object names.
      const out = await digest(h, boom);
      assert.equal(out, crypto.createHash('sha256').update('abc').digest('hex'), who);
    }
  } finally {
    await pool.close();
  }
});
