'use strict';
// The deflate family against node:zlib, both ways: what one produces the
// other decodes, for every format, level and input shape; corrupt and
// truncated inputs fail as node:zlib fails them (same code, errno and
// message); a bomb stops at maxOutputBytes; long runs are cancellable.

const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const crypto = require('node:crypto');
const { Pool, defaults } = require('..');
const { waitFor, poolState } = require('./wait');
const { jsonLike, SHAPES } = require('./shapes');

const FORMATS = [
  { enc: 'gzip', dec: 'gunzip', nodeEnc: zlib.gzipSync, nodeDec: zlib.gunzipSync },
  { enc: 'deflate', dec: 'inflate', nodeEnc: zlib.deflateSync, nodeDec: zlib.inflateSync },
  {
    enc: 'deflateRaw',
    dec: 'inflateRaw',
    nodeEnc: zlib.deflateRawSync,
    nodeDec: zlib.inflateRawSync,
  },
];

test('every format round-trips with node:zlib both ways, at every level and input shape', async () => {
  const pool = new Pool();
  try {
    for (const { enc, dec, nodeEnc, nodeDec } of FORMATS) {
      for (const [shape, data] of Object.entries(SHAPES)) {
        for (const level of shape === 'JSON 16 MiB' ? [1, 6] : [-1, 0, 1, 4, 6, 9]) {
          const ours = (await pool.post(data, { kernel: enc, params: { level } })).result;
          assert.ok(
            nodeDec(ours).equals(data),
            `node decodes our ${enc} level ${level} of ${shape}`,
          );
          const theirs = nodeEnc(data, { level });
          assert.ok(
            (await pool.post(theirs, { kernel: dec })).result.equals(data),
            `we decode node's ${enc} level ${level} of ${shape}`,
          );
        }
      }
    }
  } finally {
    await pool.close();
  }
});

test('an array of slices is compressed as their concatenation', async () => {
  const pool = new Pool({ kernel: 'gzip' });
  try {
    const parts = [jsonLike(1000), Buffer.alloc(0), crypto.randomBytes(5000), jsonLike(300 * 1024)];
    const { result } = await pool.post(parts);
    assert.ok(zlib.gunzipSync(result).equals(Buffer.concat(parts)));
  } finally {
    await pool.close();
  }
});

test('every zlib parameter is accepted in its node:zlib range and changes the output', async () => {
  const pool = new Pool({ kernel: 'deflate' });
  const data = jsonLike(200 * 1024);
  try {
    const plain = (await pool.post(data)).result;
    for (const params of [
      { level: 1 },
      { windowBits: 9 },
      { memLevel: 1 },
      { strategy: zlib.constants.Z_HUFFMAN_ONLY },
    ]) {
      const { result } = await pool.post(data, { params });
      assert.ok(!result.equals(plain), `${JSON.stringify(params)} changed the stream`);
      assert.ok(zlib.inflateSync(result).equals(data));
    }
    // deflateRaw with windowBits 8 is zlib's 9, as node:zlib makes it.
    const raw8 = (await pool.post(data, { kernel: 'deflateRaw', params: { windowBits: 8 } }))
      .result;
    assert.ok(zlib.inflateRawSync(raw8).equals(data));
    // windowBits 0 on a decoder: the header's.
    assert.ok(
      (await pool.post(plain, { kernel: 'inflate', params: { windowBits: 0 } })).result.equals(
        data,
      ),
    );
  } finally {
    await pool.close();
  }
});

test('pool params apply to the pool kernel; a post names its own kernel and params', async () => {
  const data = jsonLike(100 * 1024);
  const pool = new Pool({ kernel: 'gzip', params: { level: 1 } });
  try {
    const fast = (await pool.post(data)).result;
    assert.ok(zlib.gunzipSync(fast).equals(data));
    const best = (await pool.post(data, { params: { level: 9 } })).result;
    assert.ok(
      best.length < fast.length,
      `level 9 (${best.length} B) beats level 1 (${fast.length} B)`,
    );
    assert.ok(zlib.gunzipSync(best).equals(data));
    // Another kernel does not inherit the pool's params (gunzip has no level).
    assert.ok((await pool.post(best, { kernel: 'gunzip' })).result.equals(data));
  } finally {
    await pool.close();
  }
});

test('gunzip joins gzip members and ignores zero padding, as node:zlib does', async () => {
  const pool = new Pool({ kernel: 'gunzip' });
  try {
    const a = zlib.gzipSync('hello ');
    const b = zlib.gzipSync('world');
    const cases = [
      Buffer.concat([a, b]),
      [a, b],
      Buffer.concat([a, Buffer.alloc(10)]),
      Buffer.concat([a, b, Buffer.alloc(3), Buffer.from('x')]),
    ];
    for (const input of cases) {
      const joined = Array.isArray(input) ? Buffer.concat(input) : input;
      assert.equal((await pool.post(input)).result.toString(), zlib.gunzipSync(joined).toString());
    }
  } finally {
    await pool.close();
  }
});

test('corrupt, truncated and empty inputs reject as node:zlib throws: same code, errno and message', async () => {
  const pool = new Pool();
  try {
    const gz = zlib.gzipSync(jsonLike(10_000));
    const flipped = Buffer.from(gz);
    flipped[Math.floor(gz.length / 2)] ^= 0x40;
    const cases = [
      ['gunzip', Buffer.from('not gzip at all'), zlib.gunzipSync],
      ['gunzip', gz.subarray(0, gz.length - 4), zlib.gunzipSync],
      ['gunzip', Buffer.concat([zlib.gzipSync('x'), Buffer.from('garbage')]), zlib.gunzipSync],
      ['gunzip', Buffer.alloc(0), zlib.gunzipSync],
      ['inflate', Buffer.from('not zlib'), zlib.inflateSync],
      ['inflate', zlib.deflateSync('abc').subarray(0, 5), zlib.inflateSync],
      ['inflateRaw', Buffer.alloc(0), zlib.inflateRawSync],
      ['gunzip', flipped, zlib.gunzipSync],
    ];
    for (const [kernel, input, nodeDec] of cases) {
      let expected;
      try {
        nodeDec(input);
      } catch (err) {
        expected = err;
      }
      assert.ok(expected, 'node:zlib refuses it too');
      await assert.rejects(pool.post(input, { kernel }), (err) => {
        assert.equal(err.code, expected.code, `${kernel}: ${expected.message}`);
        assert.equal(err.errno, expected.errno);
        if (expected.code === 'Z_BUF_ERROR') assert.equal(err.message, expected.message);
        assert.ok(err instanceof Error);
        return true;
      });
    }
  } finally {
    await pool.close();
  }
});

test('a gzip bomb stops at maxOutputBytes (per pool and per task) with ERR_BUFFER_TOO_LARGE', async () => {
  const bomb = zlib.gzipSync(Buffer.alloc(64 << 20), { level: 9 }); // ~64 KiB: 1000:1
  const pool = new Pool({ kernel: 'gunzip', maxOutputBytes: 1 << 20 });
  try {
    await assert.rejects(pool.post(bomb), { name: 'RangeError', code: 'ERR_BUFFER_TOO_LARGE' });
    await assert.rejects(pool.post(bomb, { maxOutputBytes: 1000 }), /1000 bytes/);
    const { result } = await pool.post(bomb, { maxOutputBytes: 64 << 20 });
    assert.equal(result.length, 64 << 20, 'exactly at the limit is allowed');
  } finally {
    await pool.close();
  }
});

test('decoders stop at defaults.maxExpandedBytes (256 MiB) unless maxOutputBytes is given', async () => {
  assert.equal(defaults.maxExpandedBytes, 256 << 20);
  const bomb = zlib.gzipSync(Buffer.alloc((256 << 20) + 1), { level: 1 });
  const pool = new Pool({ kernel: 'gunzip' });
  try {
    await assert.rejects(pool.post(bomb), {
      code: 'ERR_BUFFER_TOO_LARGE',
      message: new RegExp(`${256 << 20} bytes`),
    });
    // Compressors keep the pool's limit (the largest Buffer).
    const small = await pool.post(Buffer.alloc(10), { kernel: 'gzip' });
    assert.ok(small.result.length > 10);
  } finally {
    await pool.close();
  }
  const roomy = new Pool({ kernel: 'gunzip', maxOutputBytes: (256 << 20) + 1 });
  try {
    assert.equal((await roomy.post(bomb)).result.length, (256 << 20) + 1);
  } finally {
    await roomy.close();
  }
});

test("'hex' and 'base64' encodings apply to compressed output", async () => {
  const data = jsonLike(5000);
  for (const encoding of ['hex', 'base64']) {
    const pool = new Pool({ kernel: 'gzip', encoding });
    try {
      const { result } = await pool.post(data);
      assert.equal(typeof result, 'string');
      assert.ok(zlib.gunzipSync(Buffer.from(result, encoding)).equals(data));
    } finally {
      await pool.close();
    }
  }
});

test('a long compression honours its timeout and its signal while it runs', async () => {
  const big = crypto.randomBytes(64 << 20);
  const pool = new Pool({ kernel: 'gzip', params: { level: 9 } });
  try {
    // Seconds of work: each rejects (instead of resolving with the output)
    // only if its kernel looked at the deadline or the flag. How soon it
    // stops (within an input chunk) is a benchmark's measure: bench/run.js,
    // "abort: running 64 MiB gzip level 9".
    await assert.rejects(pool.post(big, { timeoutMs: 20 }), { code: 'ERR_TIDEPOOL_TIMEOUT' });
    const ac = new AbortController();
    const p = pool.post(big, { signal: ac.signal });
    await waitFor(() => pool.stats().busyThreads >= 1 && pool.stats().queued === 0, {
      what: 'the compression to run',
      state: poolState(pool),
    });
    ac.abort();
    await assert.rejects(p, { code: 'ABORT_ERR' });
    // The thread goes on.
    const { result } = await pool.post(big.subarray(0, 1 << 20));
    assert.ok(zlib.gunzipSync(result).equals(big.subarray(0, 1 << 20)));
  } finally {
    await pool.close();
  }
});

test('zlib parameters out of range, unknown or of the wrong type throw synchronously, naming the parameter', () => {
  const pool = new Pool({ kernel: 'gzip' });
  try {
    const data = Buffer.alloc(1);
    assert.throws(() => pool.post(data, { params: { level: 10 } }), {
      name: 'RangeError',
      code: 'ERR_OUT_OF_RANGE',
      message: /options\.params\.level.*>= -1 and <= 9. Received 10/,
    });
    assert.throws(() => pool.post(data, { params: { windowBits: 8 } }), {
      code: 'ERR_OUT_OF_RANGE',
      message: /windowBits/,
    });
    assert.throws(() => pool.post(data, { params: { memLevel: 0 } }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.post(data, { params: { strategy: 5 } }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.post(data, { params: { level: 1.5 } }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.post(data, { params: { level: '9' } }), {
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: /options\.params\.level/,
    });
    assert.throws(() => pool.post(data, { params: { levle: 9 } }), {
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_VALUE',
      message: /levle.*level, windowBits, memLevel, strategy/,
    });
    assert.throws(() => pool.post(data, { kernel: 'gunzip', params: { level: 1 } }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    assert.throws(() => pool.post(data, { kernel: 'inflateRaw', params: { windowBits: 0 } }), {
      code: 'ERR_OUT_OF_RANGE',
    });
    assert.throws(() => pool.post(data, { params: null }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => pool.post(data, { params: 'level=9' }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => pool.post(data, { maxOutputBytes: 0 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => new Pool({ kernel: 'gzip', params: { level: 99 } }), {
      code: 'ERR_OUT_OF_RANGE',
    });
    // undefined means "not given", as for every option.
    pool.post(data, { params: { level: undefined } }).catch(() => {}); // settled by destroy() below
  } finally {
    pool.destroy();
  }
});
