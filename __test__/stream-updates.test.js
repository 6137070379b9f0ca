'use strict';
// update() and write() of the pool's hashes, as node:crypto's Hash keeps
// them: a Buffer may be reused as soon as update() returns, what is held
// stays bounded, and updates and writes hash in call order. Each test runs
// the same assertions against node:crypto (the control) and the pool's
// hash in the same run.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { Pool } = require('..');
const { holdThread } = require('./wait');
const { fill, written } = require('./stream-io');

/**
 * gc(), to measure what is held rather than what the collector has not
 * taken yet (set at run time: node --test gives a file no flags).
 */
function exposeGc() {
  require('node:v8').setFlagsFromString('--expose-gc');
  return require('node:vm').runInNewContext('gc');
}

test('a hash written through a reused Buffer gives node:crypto’s digest', async () => {
  const pool = new Pool();
  try {
    for (const [who, make, digest] of [
      ['node:crypto', () => crypto.createHash('sha256'), (h) => h.digest('hex')],
      ['tidepool', () => pool.createHash('sha256'), (h) => h.digest('hex')],
    ]) {
      const hash = make();
      const reference = crypto.createHash('sha256');
      const buffer = Buffer.alloc(64 * 1024);
      for (let i = 0; i < 64; i++) {
        fill(buffer, i);
        reference.update(buffer);
        await written(hash, buffer);
      }
      assert.equal(await digest(hash), reference.digest('hex'), who);
    }
  } finally {
    await pool.close();
  }
});

test('update() may reuse its Buffer as soon as it returns, whatever the sizes', async () => {
  const pool = new Pool();
  try {
    // Sizes around the staging cap and the inline size (streams/tasks.js), each buffer refilled after update().
    const sizes = [
      1,
      100,
      16 << 10,
      (16 << 10) + 1,
      64 << 10,
      1 << 20,
      3 << 20,
      5 << 20,
      7,
      1 << 20,
      1 << 20,
      1 << 20,
      1 << 20,
      1 << 20,
    ];
    for (const name of ['sha256', 'md5', 'blake3', 'xxh3']) {
      const hash = pool.createHash(name);
      const reference = name === 'blake3' || name === 'xxh3' ? undefined : crypto.createHash(name);
      const whole = [];
      const buffer = Buffer.alloc(8 << 20);
      for (let i = 0; i < sizes.length; i++) {
        const view = fill(buffer.subarray(0, sizes[i]), i);
        reference?.update(view);
        if (reference === undefined) whole.push(Buffer.from(view));
        hash.update(view);
        buffer.fill(0xee); // the caller reuses its buffer at once
      }
      const digest = await hash.digest('hex');
      if (reference !== undefined) assert.equal(digest, reference.digest('hex'), name);
      else
        assert.equal(
          digest,
          (await pool.post(Buffer.concat(whole), { kernel: name })).result.toString('hex'),
          name,
        );
    }
  } finally {
    await pool.close();
  }
});

test('update() holds a bounded amount of memory, however much is fed at once', async () => {
  const pool = new Pool();
  try {
    const hash = pool.createHash('sha256');
    const reference = crypto.createHash('sha256');
    const buffer = Buffer.alloc(1 << 20);
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    // 256 MiB in 1 MiB updates, without giving the event loop a turn.
    for (let i = 0; i < 256; i++) {
      fill(buffer.subarray(0, 4096), i);
      hash.update(buffer);
      reference.update(buffer);
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
    }
    assert.equal(await hash.digest('hex'), reference.digest('hex'));
    // The staging cap (4 MiB) and a little: not the 256 MiB that was fed.
    assert.ok(peak < 32 << 20, `update() held ${peak} bytes`);
  } finally {
    await pool.close();
  }
});

test('write() and update() mixed: hashed in call order, as node:crypto does', async () => {
  const pool = new Pool();
  try {
    const x = crypto.randomBytes(1 << 20);
    const a = crypto.randomBytes(1000);
    const b = crypto.randomBytes(1000);
    for (const [who, make] of [
      ['node:crypto', () => crypto.createHash('sha256')],
      ['tidepool', () => pool.createHash('sha256')],
    ]) {
      const hash = make();
      hash.write(x);
      hash.write(a); // waits in the Writable while x runs
      hash.update(b); // after a
      await new Promise((resolve) => hash.end(resolve));
      assert.equal(
        await hash.digest('hex'),
        crypto.createHash('sha256').update(x).update(a).update(b).digest('hex'),
        who,
      );
    }
    // An update() while a huge write is in flight goes behind it: it does
    // not take the write over onto the calling thread.
    const hash = pool.createHash('md5');
    const huge = Buffer.alloc(1 << 30);
    hash.write(huge);
    hash.update(Buffer.alloc(5 << 20, 1));
    assert.ok(
      hash.writableLength >= (1 << 30) + (5 << 20),
      `${hash.writableLength} bytes in the Writable`,
    );
    hash.end();
    assert.equal(
      await hash.digest('hex'),
      crypto
        .createHash('md5')
        .update(huge)
        .update(Buffer.alloc(5 << 20, 1))
        .digest('hex'),
    );
  } finally {
    await pool.close();
  }
});

test('writes and updates mixed on a busy pool hold a bounded number of tasks and bytes', async () => {
  const pool = new Pool({ maxThreads: 1 });
  const blocker = await holdThread(pool);
  try {
    const hash = pool.createHash('sha256');
    const reference = crypto.createHash('sha256');
    // Held, not yet collected: what V8 leaves uncollected differs by line.
    const gc = exposeGc();
    gc();
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    // Each write waits for the busy thread; an update past the staging cap,
    // then small ones, come meanwhile (they go behind the write).
    const calls = [];
    for (let i = 0; i < 100; i++) {
      const chunk = Buffer.alloc(1 << 20, i);
      calls.push(written(hash, chunk));
      reference.update(chunk);
      const extra = i === 0 ? Buffer.alloc(5 << 20) : Buffer.from('x');
      hash.update(extra);
      reference.update(extra);
      gc();
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
    }
    assert.ok(pool.stats().queued <= 2, `${pool.stats().queued} tasks queued`);
    blocker.release();
    await Promise.all(calls);
    hash.end();
    assert.equal(await hash.digest('hex'), reference.digest('hex'));
    // The writes are the caller's (100 MiB); what the hash adds is its copies.
    assert.ok(peak < (100 << 20) + (16 << 20), `${peak} bytes held`);
  } finally {
    blocker.release();
    await pool.close();
  }
});

test('many tiny updates share staging blocks: memory near the staging cap, one task per block', async () => {
  const pool = new Pool();
  try {
    const hash = pool.createHash('sha256');
    const reference = crypto.createHash('sha256');
    const tiny = Buffer.alloc(64);
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 65_536; i++) {
      tiny.writeUInt32LE(i, 0);
      hash.update(tiny);
      reference.update(tiny);
    }
    const held = process.memoryUsage().arrayBuffers - before;
    assert.equal(await hash.digest('hex'), reference.digest('hex'));
    assert.ok(held <= (4 << 20) + (1 << 20), `${held} bytes held for 4 MiB of updates`);
    assert.ok(
      pool.stats().completed <= 70,
      `${pool.stats().completed} tasks for 4 MiB of 64-byte updates`,
    );
  } finally {
    await pool.close();
  }
});

test('update() of memory that may change size or be shared: copied as it is, as node:crypto takes it', async () => {
  const pool = new Pool();
  try {
    const resizable = new ArrayBuffer(1000, { maxByteLength: 4000 });
    new Uint8Array(resizable).fill(3);
    const shared = new SharedArrayBuffer(50_000);
    new Uint8Array(shared).fill(9);
    for (const [who, make] of [
      ['node:crypto', () => crypto.createHash('sha1')],
      ['tidepool', () => pool.createHash('sha1')],
    ]) {
      const hash = make();
      hash.update(new Uint8Array(resizable));
      hash.update(new Uint16Array(shared));
      const digest = await hash.digest('hex');
      assert.equal(
        digest,
        crypto
          .createHash('sha1')
          .update(Buffer.alloc(1000, 3))
          .update(Buffer.alloc(50_000, 9))
          .digest('hex'),
        who,
      );
    }
  } finally {
    await pool.close();
  }
});
