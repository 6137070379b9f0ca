'use strict';
// hash.copy(): node:crypto's Hash copy, on the pool's hashes. Each
// behaviour is asserted on node:crypto's Hash too, as the control; where
// the pool's differs on purpose, the test says so and asserts both.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const path = require('node:path');
const { Pool } = require('..');
const { waitFor, holdThread } = require('./wait');

/** The digest, whether `hash.digest()` returns it (node:crypto) or a Promise of it (the pool). */
async function digestOf(hash, encoding) {
  return await hash.digest(encoding);
}

/** node:crypto's digest of `parts` hashed in order. */
function reference(name, parts) {
  const hash = crypto.createHash(name);
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}

/** The hashes to compare: node:crypto's (the control) and the pool's. */
function makers(pool) {
  return [
    ['node:crypto', (name) => crypto.createHash(name)],
    ['tidepool', (name) => pool.createHash(name)],
  ];
}

test('copy() forks the state: the copy and the source go on apart, copies of copies too', async () => {
  const pool = new Pool();
  try {
    const head = crypto.randomBytes(100_001);
    for (const [who, make] of makers(pool)) {
      for (const name of ['sha256', 'sha512', 'sha1', 'md5']) {
        const hash = make(name);
        const blank = hash.copy();
        hash.update(head);
        const copy = hash.copy();
        hash.update('source');
        copy.update('copy');
        const copyOfCopy = copy.copy();
        copyOfCopy.update('again');
        blank.update('blank');
        const at = `${who} ${name}`;
        assert.equal(await digestOf(hash, 'hex'), reference(name, [head, 'source']), at);
        assert.equal(await digestOf(copy, 'hex'), reference(name, [head, 'copy']), at);
        assert.equal(
          await digestOf(copyOfCopy, 'hex'),
          reference(name, [head, 'copy', 'again']),
          at,
        );
        assert.equal(await digestOf(blank, 'hex'), reference(name, ['blank']), at);
        // After digest(): refused, as the update() that would follow.
        assert.throws(() => hash.copy(), { code: 'ERR_CRYPTO_HASH_FINALIZED' }, at);
      }
    }
  } finally {
    await pool.close();
  }
});

test('copy() takes every write and update so far, the chunk on a thread included', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    const big = crypto.randomBytes(8 << 20);
    for (const [who, make] of makers(pool)) {
      const hash = make('sha256');
      let called = false;
      // The pool's write is in flight from here until its callback (queued
      // or on the thread): copy() takes it over.
      hash.write(big, () => (called = true));
      // Made while the write runs: it goes behind it (see lib/streams/hash.js).
      hash.update('behind the write');
      const copy = hash.copy();
      hash.update('source');
      copy.update('copy');
      assert.equal(
        await digestOf(copy, 'hex'),
        reference('sha256', [big, 'behind the write', 'copy']),
        who,
      );
      assert.equal(
        await digestOf(hash, 'hex'),
        reference('sha256', [big, 'behind the write', 'source']),
        who,
      );
      await waitFor(() => called, { what: `${who}: the write's callback` });
    }
  } finally {
    await pool.close();
  }
});

test('copy() while writes wait in the stream’s buffer: a typed refusal (node:crypto hashed them already)', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    const a = Buffer.alloc(4 << 20, 1);
    const b = Buffer.alloc(4 << 20, 2);
    for (const [who, make] of makers(pool)) {
      const hash = make('sha256');
      const done = [];
      hash.write(a, () => done.push('a'));
      hash.write(b, () => done.push('b'));
      if (who === 'node:crypto') {
        // Its writes run at once: the copy has both.
        assert.equal(await digestOf(hash.copy(), 'hex'), reference('sha256', [a, b]), who);
      } else {
        // The second write waits for the first one's task, in the
        // Writable's buffer, where copy() cannot take it from.
        assert.throws(() => hash.copy(), {
          code: 'ERR_TIDEPOOL_HASH_COPY',
          message: /wait in the stream's buffer/,
        });
      }
      await waitFor(() => done.length === 2, { what: `${who}: both write callbacks` });
      // Once they ran, copy() takes both; the source is unharmed either way.
      assert.equal(await digestOf(hash.copy(), 'hex'), reference('sha256', [a, b]), who);
      assert.equal(await digestOf(hash, 'hex'), reference('sha256', [a, b]), who);
    }
    // Empty writes waiting hold no bytes: the copy is made, and the digest
    // comes, with no error for the writes that reach the tasks after it.
    for (const [who, make] of makers(pool)) {
      const hash = make('sha256');
      const errors = [];
      hash.on('error', (err) => errors.push(err.code));
      hash.write(Buffer.alloc(0));
      hash.write(Buffer.alloc(0));
      const copy = hash.copy();
      assert.equal(await digestOf(copy, 'hex'), reference('sha256', []), who);
      assert.equal(await digestOf(hash, 'hex'), reference('sha256', []), who);
      // An error would come from a write's task: once none is pending (and
      // a turn later, for what its settling queued).
      await waitFor(() => pool.stats().pending === 0, { what: 'the writes to settle' });
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(errors, [], who);
    }
  } finally {
    await pool.close();
  }
});

test('copy() of an HMAC, of a failed hash, of a loaded kernel’s, and its options', async () => {
  const pool = new Pool();
  try {
    // node:crypto's Hmac has no copy(); the pool's does, with the same bytes.
    const hmac = pool.createHmac('sha256', 'key');
    hmac.update('a');
    const copy = hmac.copy();
    copy.update('b');
    hmac.update('c');
    assert.equal(
      await copy.digest('hex'),
      crypto.createHmac('sha256', 'key').update('ab').digest('hex'),
    );
    assert.equal(
      await hmac.digest('hex'),
      crypto.createHmac('sha256', 'key').update('ac').digest('hex'),
    );

    // Destroyed: the error that ended it.
    const destroyed = pool.createHash('sha256');
    destroyed.destroy();
    assert.throws(() => destroyed.copy(), { code: 'ERR_STREAM_DESTROYED' });

    // The pool destroyed while a write waits for its thread: the copy, the
    // write, the digest and 'error' all fail with the pool's error. (The
    // thread is held, so the write cannot have been consumed before the
    // destroy, however the machine schedules this test.)
    const doomed = new Pool({ maxThreads: 1 });
    await holdThread(doomed);
    const cut = doomed.createHash('sha256');
    const heard = [];
    cut.on('error', (err) => heard.push(`error ${err.code}`));
    cut.write(Buffer.alloc(8 << 20, 3), (err) => heard.push(`write ${err?.code}`));
    const destroying = doomed.destroy();
    assert.throws(() => cut.copy(), { code: 'ERR_TIDEPOOL_DESTROYED' });
    await assert.rejects(cut.digest(), { code: 'ERR_TIDEPOOL_DESTROYED' });
    await destroying;
    // A closed pool's hash: a copy could never be digested (nor can the
    // source, whose digest is asked for after close()).
    const closing = new Pool();
    const open = closing.createHash('sha256');
    open.update('x');
    const closed = closing.close();
    assert.throws(() => open.copy(), { code: 'ERR_TIDEPOOL_CLOSED' });
    await assert.rejects(open.digest(), { code: 'ERR_TIDEPOOL_CLOSED' });
    await closed;
    await waitFor(() => heard.length === 2, { what: "the write's callback and 'error'" });
    assert.deepEqual(heard.sort(), [
      'error ERR_TIDEPOOL_DESTROYED',
      'write ERR_TIDEPOOL_DESTROYED',
    ]);

    // A loaded kernel's state is its own.
    Pool.loadKernels(
      path.join(__dirname, '..', 'examples', 'kernels', 'build', 'tidepool_example_kernels.node'),
    );
    const loaded = pool.createHash('example/sha256');
    loaded.update('x');
    assert.throws(() => loaded.copy(), {
      code: 'ERR_TIDEPOOL_HASH_COPY',
      message: /loaded kernel/,
    });
    assert.equal(await loaded.digest('hex'), reference('sha256', ['x']), 'the source goes on');

    // Options: the copy's own highWaterMark and signal; unknown names refused
    // before anything is copied.
    const source = pool.createHash('sha256');
    source.update('s');
    assert.throws(() => source.copy({ outputLength: 4 }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => source.copy(7), { code: 'ERR_INVALID_ARG_TYPE' });
    const ac = new AbortController();
    const watched = source.copy({ signal: ac.signal, highWaterMark: 1 });
    assert.equal(watched.writableHighWaterMark, 1);
    ac.abort();
    await assert.rejects(watched.digest(), { name: 'AbortError' });
    assert.equal(
      await source.digest('hex'),
      reference('sha256', ['s']),
      'the source is not aborted',
    );
  } finally {
    await pool.close();
  }
});
