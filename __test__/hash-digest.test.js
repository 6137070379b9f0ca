'use strict';
// pool.createHash() around digest(): what digest() covers when writes and
// updates are under way, what comes after it, digest(encoding) as
// node:crypto takes it; and loaded kernels as hashes.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const path = require('node:path');
const { Pool } = require('..');
const { waitFor } = require('./wait');
const { notOnDeno } = require('./runtime');
const { cuts } = require('./chunks');

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
