'use strict';
// pool.createGzip() and the other codec streams: Transforms whose chunks run
// on the pool's threads, byte-compatible with node:zlib both ways (at
// their edges: codec-stream-ends.test.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const zlib = require('node:zlib');
const { once } = require('node:events');
const { pipeline } = require('node:stream/promises');
const { Readable, Writable } = require('node:stream');
const { Pool, micros } = require('..');
const { waitFor, poolState } = require('./wait');
const { text, pieces, through } = require('./chunks');

const PAIRS = [
  ['createGzip', 'createGunzip', zlib.gzipSync, zlib.gunzipSync],
  ['createDeflate', 'createInflate', zlib.deflateSync, zlib.inflateSync],
  ['createDeflateRaw', 'createInflateRaw', zlib.deflateRawSync, zlib.inflateRawSync],
  [
    'createBrotliCompress',
    'createBrotliDecompress',
    (data) =>
      zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }),
    zlib.brotliDecompressSync,
    { params: { quality: 5 } }, // quality 11, the default, takes seconds per MiB
  ],
];

test('every codec stream both ways against node:zlib, whatever the chunking', async () => {
  const pool = new Pool();
  try {
    const data = text(800_000);
    for (const [compress, decompress, nodeCompress, nodeDecompress, options] of PAIRS) {
      for (const seed of [1, 2]) {
        const ours = await through(pool[compress](options), data, seed);
        assert.ok(
          nodeDecompress(ours).equals(data),
          `${compress} decoded by node:zlib (seed ${seed})`,
        );
        assert.ok(
          (await through(pool[decompress](), nodeCompress(data), seed)).equals(data),
          `${decompress} of node:zlib's output`,
        );
      }
    }
    // zstd and LZ4 (not in this Node's zlib): round trips, and the one-shot decoder agrees.
    for (const [compress, decompress, oneShot] of [
      ['createZstdCompress', 'createZstdDecompress', 'zstdDecompress'],
      ['createLz4Compress', 'createLz4Decompress', 'lz4Decompress'],
    ]) {
      const ours = await through(pool[compress](), data, 3);
      assert.ok(
        (await pool.post(ours, { kernel: oneShot })).result.equals(data),
        `${compress} decoded in one shot`,
      );
      assert.ok((await through(pool[decompress](), ours, 4)).equals(data), `${decompress}`);
    }
  } finally {
    await pool.close();
  }
});

test('params as for the one-shot kernels; bad options throw', async () => {
  const pool = new Pool();
  try {
    const data = text(300_000);
    const fast = await through(pool.createGzip({ params: { level: 1 } }), data);
    const best = await through(pool.createGzip({ params: { level: 9 } }), data);
    assert.ok(best.length < fast.length);
    assert.ok(zlib.gunzipSync(best).equals(data));
    assert.throws(() => pool.createGzip({ params: { level: 12 } }), { code: 'ERR_OUT_OF_RANGE' });
    // node:zlib's habit: its names beside the options are params, checked as node:zlib does.
    const beside = await through(pool.createGzip({ level: 1 }), data);
    assert.ok(beside.equals(fast));
    assert.throws(() => pool.createGzip({ level: 12 }), {
      code: 'ERR_OUT_OF_RANGE',
      message:
        'The value of "options.level" is out of range. It must be >= -1 and <= 9. Received 12',
    });
    assert.throws(() => pool.createGzip({ level: 1, params: { level: 2 } }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /options.level' is given twice/,
    });
    // brotli's parameters keyed by node:zlib's constants.
    const keyed = await through(
      pool.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }),
      data,
    );
    const named = await through(pool.createBrotliCompress({ params: { quality: 1 } }), data);
    assert.ok(keyed.equals(named));
    assert.throws(() => pool.createGunzip({ maxOutputBytes: 0 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => pool.createGunzip({ highWaterMark: -1 }), { code: 'ERR_OUT_OF_RANGE' });
    // An aborted signal: as node:zlib, the stream is made and destroyed at once.
    for (const make of [zlib.createGzip, (o) => pool.createGzip(o)]) {
      const stream = make({ signal: AbortSignal.abort('why') });
      assert.equal(stream.destroyed, true);
      const [err] = await once(stream, 'error');
      assert.equal(err.name, 'AbortError');
      assert.equal(err.code, 'ABORT_ERR');
      assert.equal(err.cause, 'why');
    }
  } finally {
    await pool.close();
  }
});

test('corrupt input and a decompression bomb fail the stream with zlib-style errors', async () => {
  const pool = new Pool();
  try {
    await assert.rejects(through(pool.createGunzip(), Buffer.from('definitely not gzip')), {
      code: 'Z_DATA_ERROR',
    });
    // 64 MiB of zeros in ~64 KiB; at most 1 MiB may come out, over all chunks.
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 2 ** 20));
    let out = 0;
    await assert.rejects(
      pipeline(
        Readable.from(pieces(bomb, 5)),
        pool.createGunzip({ maxOutputBytes: 2 ** 20 }),
        new Writable({
          write(chunk, _enc, cb) {
            out += chunk.length;
            cb();
          },
        }),
      ),
      { code: 'ERR_BUFFER_TOO_LARGE' },
    );
    assert.ok(out <= 2 ** 20, `${out} bytes came out`);
    assert.equal(pool.stats().pending, 0);
  } finally {
    await pool.close();
  }
});

test('many streams at once each stay in order', async () => {
  const pool = new Pool();
  try {
    const inputs = Array.from({ length: 24 }, (_, i) => text(200_000 + i * 1000));
    const outputs = await Promise.all(
      inputs.map((data, i) => through(pool.createGzip(), data, i + 1)),
    );
    for (let i = 0; i < inputs.length; i++)
      assert.ok(zlib.gunzipSync(outputs[i]).equals(inputs[i]), `stream ${i}`);
  } finally {
    await pool.close();
  }
});

test('an HTTP server compresses each response with a pool stream, per Accept-Encoding', async () => {
  const pool = new Pool();
  const bodies = Array.from({ length: 64 }, (_, i) => text(100_000 + i * 500));
  const server = http.createServer((req, res) => {
    const body = bodies[Number(req.url.slice(1))];
    const accept = req.headers['accept-encoding'] ?? '';
    const [encoding, stream] = accept.includes('br')
      ? ['br', pool.createBrotliCompress({ params: { quality: 4 } })]
      : ['gzip', pool.createGzip()];
    res.writeHead(200, { 'content-encoding': encoding });
    pipeline(Readable.from(pieces(body, 3)), stream, res).catch(() => {});
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address();
    const got = await Promise.all(
      bodies.map(async (_, i) => {
        const response = await fetch(`http://127.0.0.1:${port}/${i}`, {
          headers: { 'accept-encoding': i % 2 ? 'br' : 'gzip' },
        });
        return Buffer.from(await response.arrayBuffer()); // fetch decodes it
      }),
    );
    for (let i = 0; i < bodies.length; i++) assert.ok(got[i].equals(bodies[i]), `response ${i}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await pool.close();
  }
});

test('a slow reader holds the stream back; destroy() and a closed pool end it', async () => {
  const pool = new Pool({ maxThreads: 1 });
  try {
    const gzip = pool.createGzip({ params: { level: 0 } }); // output as large as the input
    const data = crypto.randomBytes(8 * 2 ** 20);
    for (let at = 0; at < data.length; at += 65536) gzip.write(data.subarray(at, at + 65536));
    gzip.end();
    // Nobody reads: the stream stops once its output buffer is full, far
    // short of 8 MiB.
    await waitFor(
      () => gzip.readableLength >= gzip.readableHighWaterMark && pool.stats().pending === 0,
      {
        what: 'the stream to stop for its reader',
        state: poolState(pool),
      },
    );
    assert.ok(gzip.readableLength < 256 * 1024, `${gzip.readableLength} bytes buffered`);
    const out = [];
    for await (const chunk of gzip) out.push(chunk);
    assert.ok(zlib.gunzipSync(Buffer.concat(out)).equals(data));

    const stopped = pool.createGzip();
    stopped.write(crypto.randomBytes(2 ** 20));
    stopped.destroy();
    await new Promise((r) => stopped.on('close', r));
    await waitFor(() => pool.stats().pending === 0, {
      what: 'the destroyed stream’s task to stop',
      state: poolState(pool),
    });

    const blocker = pool.post(micros(100_000), { kernel: 'sleep' });
    const late = pool.createGzip();
    const failed = assert.rejects(through(late, text(100_000)), { code: 'ERR_TIDEPOOL_CLOSED' });
    await pool.close();
    await failed;
    await blocker;
  } finally {
    await pool.close();
  }
});
