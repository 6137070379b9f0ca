'use strict';
// brotli, zstd and LZ4 one-shots: brotli against node:zlib both ways, its
// corrupt and truncated inputs failing as node:zlib fails them; zstd and
// LZ4 against their command-line tools' frames, bad frames rejected with
// typed errors (the deflate family is compression.test.js's).

const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const { Pool } = require('..');
const { jsonLike, SHAPES } = require('./shapes');

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
