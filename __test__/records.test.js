'use strict';
// postRecords(): records back to back in one binary, each a task's input
// read in place. Every digest is checked against node:crypto's over the
// same bytes.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { Pool, micros } = require('..');
const { waitFor, poolState, settle, holdThread } = require('./wait');

const sha256 = (b) => crypto.createHash('sha256').update(b).digest();

/** The records `lengths` cuts `bytes` into, as copies (the control). */
function cut(bytes, lengths) {
  const out = [];
  let at = 0;
  for (const length of lengths) {
    out.push(Buffer.from(bytes.subarray(at, at + length)));
    at += length;
  }
  return out;
}

/** Asserts `results` are the digests of the records, in order. */
function sameDigests(results, records, what) {
  assert.equal(results.length, records.length, what);
  records.forEach((record, i) =>
    assert.deepEqual(results[i], sha256(record), `${what}: record ${i}`),
  );
}

test("fixed-length records: every digest is node:crypto's, in order, packed or not", async () => {
  const pool = new Pool();
  try {
    const data = crypto.randomBytes(3000 * 64);
    const records = cut(data, new Array(3000).fill(64));
    sameDigests(await pool.postRecords(data, 64), records, 'Array');
    const packed = await pool.postRecords(data, 64, { packed: true });
    assert.deepEqual(packed, Buffer.concat(records.map(sha256)));
    // One record, and a record as long as the binary.
    sameDigests(await pool.postRecords(data.subarray(0, 64), 64), [records[0]], 'one');
    sameDigests(await pool.postRecords(data, data.length), [data], 'whole');
  } finally {
    await pool.close();
  }
});

test('records of their own lengths, at the boundaries: empty ones, around the size that runs alone, the last byte', async () => {
  const pool = new Pool();
  try {
    const lengths = [0, 1, 0, 63, 64, 65, 16383, 16384, 16385, 0, 3, 40000, 7, 0];
    for (let i = 0; i < 2500; i++) lengths.push((i * 37) % 130);
    const total = lengths.reduce((a, b) => a + b, 0);
    const data = crypto.randomBytes(total);
    const records = cut(data, lengths);
    sameDigests(await pool.postRecords(data, lengths), records, 'Array');
    sameDigests(await pool.postRecords(data, Uint32Array.from(lengths)), records, 'Uint32Array');
    const packed = await pool.postRecords(data, lengths, { packed: true });
    assert.deepEqual(packed, Buffer.concat(records.map(sha256)));
    // Lengths may end before the binary does: the rest is not a record.
    const longer = Buffer.concat([data, Buffer.from('tail')]);
    sameDigests(
      await pool.postRecords(longer, lengths),
      records,
      'a binary with bytes past the last record',
    );
    // Only empty records, and none at all.
    sameDigests(
      await pool.postRecords(Buffer.alloc(0), [0, 0, 0]),
      [Buffer.alloc(0), Buffer.alloc(0), Buffer.alloc(0)],
      'empty',
    );
    assert.deepEqual(await pool.postRecords(Buffer.alloc(0), 64), []);
    assert.deepEqual(await pool.postRecords(data, []), []);
    assert.deepEqual(
      await pool.postRecords(Buffer.alloc(0), 32, { packed: true }),
      Buffer.alloc(0),
    );
  } finally {
    await pool.close();
  }
});

test('every kind of binary post() takes, an Array of them included, with records across its parts', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    const bytes = crypto.randomBytes(1024);
    const lengths = [5, 100, 0, 300, 19, 600];
    const want = cut(bytes, lengths).map((r) => sha256(r).toString('hex'));
    const sab = new SharedArrayBuffer(1024);
    new Uint8Array(sab).set(bytes);
    const offset = new Uint8Array(bytes.length + 8);
    offset.set(bytes, 8);
    const kinds = {
      Buffer: bytes,
      'Uint8Array at an offset': offset.subarray(8),
      Float64Array: new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 1024)),
      DataView: new DataView(bytes.buffer, bytes.byteOffset, 1024),
      ArrayBuffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 1024),
      SharedArrayBuffer: sab,
      'Array of binaries': [
        bytes.subarray(0, 3),
        Buffer.alloc(0),
        bytes.subarray(3, 500),
        new Uint8Array(bytes.subarray(500)),
      ],
    };
    for (const [kind, data] of Object.entries(kinds)) {
      assert.deepEqual(await pool.postRecords(data, lengths), want, kind);
    }
  } finally {
    await pool.close();
  }
});

test('records of any kernel: a codec gives an Array, refuses packed, and a failing record names its index', async () => {
  const pool = new Pool();
  try {
    const texts = ['alpha', 'beta'.repeat(1000), '', 'gamma'];
    const data = Buffer.from(texts.join(''));
    const lengths = texts.map((t) => t.length);
    const gz = await pool.postRecords(data, lengths, { kernel: 'gzip', params: { level: 9 } });
    assert.deepEqual(
      gz.map((g) => zlib.gunzipSync(g).toString()),
      texts,
    );
    assert.throws(() => pool.postRecords(data, lengths, { kernel: 'gzip', packed: true }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /options\.packed.*hash kernels.*'gzip'/,
    });
    const members = [zlib.gzipSync('one'), Buffer.from('not gzip'), zlib.gzipSync('three')];
    await assert.rejects(
      pool.postRecords(
        Buffer.concat(members),
        members.map((m) => m.length),
        { kernel: 'gunzip' },
      ),
      (err) => err.code === 'Z_DATA_ERROR' && err.index === 1,
    );
    const hmac = await pool.postRecords(data, lengths, {
      kernel: 'hmac',
      params: { hash: 'sha256', key: 'k' },
    });
    texts.forEach((t, i) =>
      assert.deepEqual(hmac[i], crypto.createHmac('sha256', 'k').update(t).digest()),
    );
  } finally {
    await pool.close();
  }
});

test('bad lengths are typed errors thrown before anything is queued', async () => {
  const pool = new Pool();
  try {
    const data = crypto.randomBytes(130);
    const cases = [
      [
        undefined,
        TypeError,
        'ERR_INVALID_ARG_TYPE',
        /"lengths" argument must be of type number or an instance of Array or Uint32Array/,
      ],
      ['64', TypeError, 'ERR_INVALID_ARG_TYPE', /"lengths"/],
      [new Uint16Array([1]), TypeError, 'ERR_INVALID_ARG_TYPE', /"lengths"/],
      [new Proxy([1], {}), TypeError, 'ERR_INVALID_ARG_TYPE', /"lengths"/],
      [0, RangeError, 'ERR_OUT_OF_RANGE', /"lengths".*integer >= 1/],
      [1.5, RangeError, 'ERR_OUT_OF_RANGE', /"lengths"/],
      [
        64,
        RangeError,
        'ERR_OUT_OF_RANGE',
        /"data".*whole number of 64-byte records.*2 records and 2 bytes/,
      ],
      [[1, '2'], TypeError, 'ERR_INVALID_ARG_TYPE', /"lengths\[1\]"/],
      [[1, -1], RangeError, 'ERR_OUT_OF_RANGE', /"lengths\[1\]"/],
      [[1, 0.5], RangeError, 'ERR_OUT_OF_RANGE', /"lengths\[1\]"/],
      [[1, 2 ** 32], RangeError, 'ERR_OUT_OF_RANGE', /"lengths\[1\]"/],
      [
        [100, 20, 10, 1, 5],
        RangeError,
        'ERR_OUT_OF_RANGE',
        /"lengths\[3\]".*130 bytes.*bytes 130 to 131/,
      ],
    ];
    for (const [lengths, Ctor, code, message] of cases) {
      assert.throws(
        () => pool.postRecords(data, lengths),
        (err) => err instanceof Ctor && err.code === code && message.test(err.message),
        String(lengths),
      );
    }
    assert.throws(() => pool.postRecords('text', 1), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /"data"/,
    });
    assert.throws(() => pool.postRecords(data, 65, { concurrency: 2 }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    // A kernel's least input and maxInputBytes hold for each record.
    assert.throws(() => pool.postRecords(Buffer.alloc(7), [4, 3], { kernel: 'sleep' }), {
      code: 'ERR_OUT_OF_RANGE',
      message: /"lengths\[1\]".*at least 4 bytes for kernel 'sleep'/,
    });
    const small = new Pool({ maxInputBytes: 10 });
    try {
      assert.throws(() => small.postRecords(Buffer.alloc(30), [10, 11, 9]), {
        code: 'ERR_OUT_OF_RANGE',
        message: /"lengths\[1\]".*maxInputBytes \(10\)/,
      });
      assert.throws(() => small.postRecords(Buffer.alloc(30), 15), {
        code: 'ERR_OUT_OF_RANGE',
        message: /"lengths".*maxInputBytes/,
      });
      assert.equal(
        (await small.postRecords(Buffer.alloc(30), 10)).length,
        3,
        'the binary may pass maxInputBytes',
      );
    } finally {
      await small.close();
    }
    // Nothing of any refused call was queued or run.
    assert.equal(pool.stats().pending, 0);
    assert.equal(pool.stats().completed, 0);
    assert.equal(pool.stats().failed, 0);
  } finally {
    await pool.close();
  }
});

test('lengths are read once: an Array changed after the call changes nothing', async () => {
  const pool = new Pool();
  try {
    const data = crypto.randomBytes(300);
    const lengths = [100, 100, 100];
    let reads = 0;
    Object.defineProperty(lengths, 1, {
      get() {
        reads++;
        return 100;
      },
    });
    const done = pool.postRecords(data, lengths);
    lengths.length = 0;
    sameDigests(await done, cut(data, [100, 100, 100]), 'after the change');
    assert.equal(reads, 1);
  } finally {
    await pool.close();
  }
});

test('detached and resizable binaries are refused as post() refuses them, at the call and after it', async () => {
  const pool = new Pool();
  try {
    const gone = new ArrayBuffer(64);
    structuredClone(gone, { transfer: [gone] });
    assert.throws(() => pool.postRecords(gone, 64), {
      code: 'ERR_INVALID_STATE',
      message: /"data"/,
    });
    assert.throws(() => pool.postRecords(new ArrayBuffer(64, { maxByteLength: 128 }), 64), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /'data'.*resizable/,
    });
  } finally {
    await pool.close();
  }
  // Detached while the records wait for room: the batch fails naming the
  // binary, and nothing of it is left behind.
  const busy = new Pool({
    kernel: 'sleep',
    minThreads: 1,
    maxThreads: 1,
    maxQueue: 1,
    queueFull: 'wait',
  });
  const hold = await holdThread(busy);
  try {
    const data = new Uint8Array(new ArrayBuffer(4 * 6));
    for (let i = 0; i < 6; i++) data.set(micros(100), i * 4);
    const outcome = settle(busy.postRecords(data, 4));
    await waitFor(() => busy.stats().queued === 1, {
      what: 'the first record to be queued',
      state: poolState(busy),
    });
    // The queued record reads the memory in place: the transfer's new
    // owner keeps it alive (the caller's duty, docs/api.md) until the end.
    const moved = structuredClone(data.buffer, { transfer: [data.buffer] });
    hold.release();
    const { status, reason } = await outcome;
    assert.equal(status, 'rejected');
    assert.equal(reason.code, 'ERR_INVALID_STATE');
    assert.match(reason.message, /"data"/);
    await waitFor(() => busy.stats().pending === 0, {
      what: 'nothing left',
      state: poolState(busy),
    });
    assert.equal(moved.byteLength, 24);
  } finally {
    hold.release();
    await busy.close();
  }
});

test('a signal cancels the records, before and while they run; a closed pool rejects them', async () => {
  const pool = new Pool({ kernel: 'sleep', maxThreads: 2 });
  try {
    const data = Buffer.concat(Array.from({ length: 100 }, () => micros(50_000)));
    assert.throws(() => pool.postRecords(data, 4, { signal: AbortSignal.abort() }), {
      name: 'AbortError',
    });
    const ac = new AbortController();
    const running = pool.postRecords(data, 4, { signal: ac.signal });
    await waitFor(() => pool.stats().busyThreads > 0, {
      what: 'a record to run',
      state: poolState(pool),
    });
    ac.abort();
    await assert.rejects(running, { name: 'AbortError' });
    await waitFor(() => pool.stats().pending === 0, {
      what: 'every record to settle',
      state: poolState(pool),
    });
  } finally {
    await pool.close();
  }
  await assert.rejects(pool.postRecords(Buffer.alloc(8), 4), { code: 'ERR_TIDEPOOL_CLOSED' });
  assert.throws(
    () => pool.postRecords(Buffer.alloc(8), 3),
    { code: 'ERR_OUT_OF_RANGE' },
    'argument errors first',
  );
});

test('the binary is kept alive by the call: collected by the caller, still read whole', async () => {
  const pool = new Pool();
  try {
    const pending = [];
    const wants = [];
    for (let i = 0; i < 8; i++) {
      const data = crypto.randomBytes(64 * 2000);
      wants.push(Buffer.concat(cut(data, new Array(2000).fill(64)).map(sha256)));
      pending.push(pool.postRecords(new Uint8Array(data), 64, { packed: true }));
    }
    if (typeof globalThis.gc === 'function') globalThis.gc();
    const got = await Promise.all(pending);
    got.forEach((g, i) => assert.deepEqual(g, wants[i]));
  } finally {
    await pool.close();
  }
});

test('what data is at the call is what is read: a part tracking a growable SharedArrayBuffer that grows after it', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    const sab = new SharedArrayBuffer(8 * 1024, { maxByteLength: 4 * 8 * 1024 });
    const head = new Uint8Array(sab); // tracks the buffer's length
    head.set(crypto.randomBytes(head.length));
    const tail = crypto.randomBytes(8 * 1024);
    const whole = Buffer.concat([head, tail]);
    // 2048 records: more than one chunk, the later ones queued after the growth.
    const pending = pool.postRecords([head, tail], 8);
    sab.grow(2 * 8 * 1024);
    sameDigests(await pending, cut(whole, new Array(2048).fill(8)), 'after growing');
  } finally {
    await pool.close();
  }
});

test("a Uint32Array's own or inherited length cannot change how many records there are", async () => {
  const pool = new Pool();
  try {
    const data = crypto.randomBytes(100);
    class Longer extends Uint32Array {
      get length() {
        return 5;
      }
    }
    sameDigests(await pool.postRecords(data, new Longer([10, 20])), cut(data, [10, 20]), 'getter');
    const own = new Uint32Array([30, 40]);
    Object.defineProperty(own, 'length', { value: 1 });
    sameDigests(await pool.postRecords(data, own), cut(data, [30, 40]), 'own property');
  } finally {
    await pool.close();
  }
});

test('an Array of many parts: each chunk reads the parts its records span, records across parts included', async () => {
  const pool = new Pool();
  try {
    const parts = Array.from({ length: 5000 }, (_, i) => crypto.randomBytes(i % 7));
    const whole = Buffer.concat(parts);
    const lengths = [];
    for (let at = 0, i = 0; at < whole.length; i++) {
      const length = Math.min(whole.length - at, i % 3 === 0 ? 0 : 1 + (i % 23));
      lengths.push(length);
      at += length;
    }
    sameDigests(await pool.postRecords(parts, lengths), cut(whole, lengths), 'variable');
    const fixed = Math.max(1, Math.floor(whole.length / 3000));
    const even = whole.length - (whole.length % fixed);
    let taken = 0;
    const trimmed = [];
    for (const part of parts) {
      const keep = Math.min(part.length, even - taken);
      trimmed.push(part.subarray(0, keep));
      taken += keep;
    }
    sameDigests(
      await pool.postRecords(trimmed, fixed),
      cut(whole.subarray(0, even), new Array(even / fixed).fill(fixed)),
      'fixed',
    );
  } finally {
    await pool.close();
  }
});

test('an Array of a few large parts: chunks inside one part, past its start, and across two', async () => {
  const pool = new Pool();
  try {
    // 1,024 records a chunk: with 64 B records, chunks 0, 1 and 3 lie
    // inside one part (chunk 3 from byte 40 of the second), chunk 2
    // across the first two.
    const parts = [
      crypto.randomBytes(2 * 65536 + 40),
      crypto.randomBytes(2 * 65536),
      crypto.randomBytes(2 * 65536 + 24),
    ];
    const whole = Buffer.concat(parts);
    const fixed = new Array(whole.length / 64).fill(64);
    sameDigests(await pool.postRecords(parts, 64), cut(whole, fixed), 'fixed');
    const packed = await pool.postRecords(parts, 64, { packed: true });
    sameDigests(
      fixed.map((_, i) => packed.subarray(i * 32, i * 32 + 32)),
      cut(whole, fixed),
      'fixed, packed',
    );
    const lengths = [];
    for (let at = 0, i = 0; at < whole.length; i++) {
      const length = Math.min(whole.length - at, 40 + ((i * 37) % 81));
      lengths.push(length);
      at += length;
    }
    sameDigests(await pool.postRecords(parts, lengths), cut(whole, lengths), 'variable');
    const variable = await pool.postRecords(parts, lengths, { packed: true });
    sameDigests(
      lengths.map((_, i) => variable.subarray(i * 32, i * 32 + 32)),
      cut(whole, lengths),
      'variable, packed',
    );
  } finally {
    await pool.close();
  }
});

test("a compressor's small records share tasks, each result its own record's", async () => {
  const pool = new Pool({ maxThreads: 2 });
  try {
    const lengths = Array.from({ length: 3000 }, (_, i) => (i * 13) % 97);
    const data = Buffer.from(
      Array.from({ length: lengths.reduce((a, b) => a + b, 0) }, (_, i) => 97 + (i % 11)),
    );
    const records = cut(data, lengths);
    const controls = {
      gzip: zlib.gunzipSync,
      deflateRaw: zlib.inflateRawSync,
      brotliCompress: zlib.brotliDecompressSync,
    };
    for (const [kernel, decompress] of Object.entries(controls)) {
      const before = pool.stats().runTime.count;
      const out = await pool.postRecords(data, lengths, { kernel });
      assert.equal(out.length, records.length, kernel);
      out.forEach((compressed, i) =>
        assert.deepEqual(decompress(compressed), records[i], `${kernel}: record ${i}`),
      );
      const tasks = pool.stats().runTime.count - before;
      assert.ok(tasks < 3000 / 8, `${kernel}: ${tasks} tasks ran 3000 records`);
    }
    // A record whose output passes maxOutputBytes fails the batch, naming it.
    const noise = crypto.randomBytes(10 + 10 + 200 + 10);
    await assert.rejects(
      pool.postRecords(noise, [10, 10, 200, 10], { kernel: 'gzip', maxOutputBytes: 100 }),
      (err) => err.code === 'ERR_BUFFER_TOO_LARGE' && err.index === 2,
    );
  } finally {
    await pool.close();
  }
});
