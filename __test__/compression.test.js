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

/** JSON-like text: compresses well, like the payloads services compress. */
function jsonLike(n) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < n; i++) {
    const s = JSON.stringify({
      id: i,
      name: `user-${i % 97}`,
      tags: ['a', 'b', String(i % 13)],
      score: (i * 7919) % 1000,
    });
    parts.push(s);
    size += s.length + 1;
  }
  return Buffer.from(parts.join('\n')).subarray(0, n);
}

const SHAPES = {
  empty: Buffer.alloc(0),
  'one byte': Buffer.from([42]),
  'random 100 KiB': crypto.randomBytes(100 * 1024),
  'JSON 64 KiB': jsonLike(64 * 1024),
  'JSON 16 MiB': jsonLike(16 << 20),
};

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

const BROTLI_QUALITY = zlib.constants.BROTLI_PARAM_QUALITY;

test('brotli round-trips with node:zlib both ways, at several qualities and shapes', async () => {
  const pool = new Pool({ kernel: 'brotliCompress' });
  try {
    for (const [shape, data] of Object.entries(SHAPES)) {
      const qualities = shape === 'JSON 16 MiB' ? [1, 4] : [0, 4, 5, 11];
      for (const quality of qualities) {
        const ours = (await pool.post(data, { params: { quality } })).result;
        assert.ok(
          zlib.brotliDecompressSync(ours).equals(data),
          `node decodes our quality ${quality} of ${shape}`,
        );
        const theirs = zlib.brotliCompressSync(data, { params: { [BROTLI_QUALITY]: quality } });
        assert.ok(
          (await pool.post(theirs, { kernel: 'brotliDecompress' })).result.equals(data),
          `we decode node's quality ${quality} of ${shape}`,
        );
      }
    }
    const data = jsonLike(100_000);
    for (const params of [{ lgwin: 10 }, { mode: 1 }, { sizeHint: data.length }]) {
      const { result } = await pool.post(data, { params: { quality: 5, ...params } });
      assert.ok(zlib.brotliDecompressSync(result).equals(data), JSON.stringify(params));
    }
    assert.throws(() => pool.post(data, { params: { quality: 12 } }), {
      code: 'ERR_OUT_OF_RANGE',
      message: /quality/,
    });
    assert.throws(() => pool.post(data, { params: { lgwin: 25 } }), {
      code: 'ERR_OUT_OF_RANGE',
      message: /lgwin/,
    });
    assert.throws(() => pool.post(data, { params: { level: 5 } }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /quality, lgwin, mode, sizeHint/,
    });
  } finally {
    await pool.close();
  }
});

test('corrupt and truncated brotli inputs reject as node:zlib throws: same code, errno and message', async () => {
  const pool = new Pool({ kernel: 'brotliDecompress' });
  try {
    const packed = zlib.brotliCompressSync(jsonLike(50_000));
    for (const input of [
      Buffer.from('garbage!!'),
      packed.subarray(0, packed.length >> 1),
      Buffer.alloc(0),
    ]) {
      let expected;
      try {
        zlib.brotliDecompressSync(input);
      } catch (err) {
        expected = err;
      }
      assert.ok(expected);
      await assert.rejects(pool.post(input), (err) => {
        assert.equal(err.code, expected.code);
        assert.equal(err.errno, expected.errno);
        assert.equal(err.message, expected.message);
        return true;
      });
    }
    // Data after the end of the stream is ignored, as node:zlib ignores it.
    const tail = Buffer.concat([zlib.brotliCompressSync('hello'), Buffer.from('xyz')]);
    assert.equal(
      (await pool.post(tail)).result.toString(),
      zlib.brotliDecompressSync(tail).toString(),
    );
  } finally {
    await pool.close();
  }
});

test("zstd: levels and checksums round-trip, the zstd CLI's frames decode, bad input rejects with typed errors", async () => {
  const pool = new Pool({ kernel: 'zstdCompress' });
  try {
    for (const [shape, data] of Object.entries(SHAPES)) {
      for (const level of shape === 'JSON 16 MiB' ? [1, 3] : [-5, 1, 3, 19]) {
        const { result } = await pool.post(data, { params: { level, checksum: level === 3 } });
        assert.equal(result.readUInt32LE(0), 0xfd2fb528, 'the zstd magic number');
        assert.ok(
          (await pool.post(result, { kernel: 'zstdDecompress' })).result.equals(data),
          `level ${level} of ${shape}`,
        );
      }
    }
    // `printf 'hello, tidepool\n' | zstd -19 --check` (zstd CLI 1.5.4).
    const cli = Buffer.from('28b52ffd241081000068656c6c6f2c2074696465706f6f6c0ab5003666', 'hex');
    assert.equal(
      (await pool.post(cli, { kernel: 'zstdDecompress' })).result.toString(),
      'hello, tidepool\n',
    );
    const frames = [cli, (await pool.post(Buffer.from('again\n'))).result];
    assert.equal(
      (await pool.post(frames, { kernel: 'zstdDecompress' })).result.toString(),
      'hello, tidepool\nagain\n',
      'concatenated frames',
    );
    // node:zlib's code and number for zstd's error, and zstd's words.
    await assert.rejects(pool.post(Buffer.from('not zstd'), { kernel: 'zstdDecompress' }), {
      code: 'ZSTD_error_prefix_unknown',
      errno: 10,
      message: 'Unknown frame descriptor',
    });
    await assert.rejects(pool.post(cli.subarray(0, 20), { kernel: 'zstdDecompress' }), {
      code: 'Z_BUF_ERROR',
      errno: -5,
    });
    const bomb = (await pool.post(Buffer.alloc(64 << 20), { params: { level: 1 } })).result;
    await assert.rejects(pool.post(bomb, { kernel: 'zstdDecompress', maxOutputBytes: 1 << 20 }), {
      code: 'ERR_BUFFER_TOO_LARGE',
    });
    assert.throws(() => pool.post(Buffer.alloc(1), { params: { level: 23 } }), {
      code: 'ERR_OUT_OF_RANGE',
    });
    assert.throws(() => pool.post(Buffer.alloc(1), { params: { checksum: 1 } }), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /checksum/,
    });
  } finally {
    await pool.close();
  }
});

test('lz4: frames round-trip, the lz4 CLI frame decodes, bad frames reject with typed errors', async () => {
  const pool = new Pool({ kernel: 'lz4Compress' });
  try {
    for (const [shape, data] of Object.entries(SHAPES)) {
      for (const params of [
        {},
        { blockSize: 65536, blockChecksum: true, contentChecksum: false },
      ]) {
        const { result } = await pool.post(data, { params });
        assert.equal(result.readUInt32LE(0), 0x184d2204, 'the LZ4 frame magic number');
        assert.ok(
          (await pool.post(result, { kernel: 'lz4Decompress' })).result.equals(data),
          `${shape} ${JSON.stringify(params)}`,
        );
      }
    }
    // `printf 'hello, tidepool\n' | lz4` (lz4 CLI 1.9.4).
    const cli = Buffer.from(
      '04224d186440a71000008068656c6c6f2c2074696465706f6f6c0a000000002a9e39b0',
      'hex',
    );
    assert.equal(
      (await pool.post(cli, { kernel: 'lz4Decompress' })).result.toString(),
      'hello, tidepool\n',
    );
    await assert.rejects(pool.post(Buffer.from('not lz4 at all'), { kernel: 'lz4Decompress' }), {
      code: 'ERR_TIDEPOOL_CORRUPT_INPUT',
    });
    await assert.rejects(pool.post(cli.subarray(0, 12), { kernel: 'lz4Decompress' }), {
      code: 'Z_BUF_ERROR',
    });
    const bomb = (await pool.post(Buffer.alloc(64 << 20))).result;
    await assert.rejects(pool.post(bomb, { kernel: 'lz4Decompress', maxOutputBytes: 1 << 20 }), {
      code: 'ERR_BUFFER_TOO_LARGE',
    });
    assert.throws(() => pool.post(Buffer.alloc(1), { params: { blockSize: 1000 } }), {
      name: 'RangeError',
      code: 'ERR_OUT_OF_RANGE',
      message: /blockSize.*one of 65536, 262144, 1048576, 4194304/,
    });
  } finally {
    await pool.close();
  }
});

test('the zstd and lz4 command-line tools read what we write and we read what they write', async (t) => {
  const { spawnSync } = require('node:child_process');
  const tools = ['zstd', 'lz4'].filter(
    (tool) => spawnSync(tool, ['--version'], { timeout: 60_000 }).status === 0,
  );
  if (tools.length === 0) {
    t.skip('neither the zstd nor the lz4 tool is installed');
    return;
  }
  const pool = new Pool();
  try {
    const data = jsonLike(3 << 20);
    for (const tool of tools) {
      const [enc, dec] =
        tool === 'zstd' ? ['zstdCompress', 'zstdDecompress'] : ['lz4Compress', 'lz4Decompress'];
      const ours = (await pool.post(data, { kernel: enc })).result;
      const decoded = spawnSync(tool, ['-d', '-c', '-q'], {
        input: ours,
        maxBuffer: 64 << 20,
        timeout: 60_000,
      });
      assert.equal(decoded.status, 0, `${tool} -d: ${decoded.stderr}`);
      assert.ok(decoded.stdout.equals(data), `${tool} decodes our ${enc}`);
      const theirs = spawnSync(tool, ['-c', '-q'], {
        input: data,
        maxBuffer: 64 << 20,
        timeout: 60_000,
      }).stdout;
      assert.ok(
        (await pool.post(theirs, { kernel: dec })).result.equals(data),
        `we decode ${tool}'s output`,
      );
    }
  } finally {
    await pool.close();
  }
});
