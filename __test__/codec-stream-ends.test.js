'use strict';
// pool.createGzip() and the other codec streams at their edges: flush(),
// params() and reset() as node:zlib takes them, a 200 MiB file through a
// pipeline, a 1 GiB bomb stopped at maxOutputBytes, destroy() with writes
// waiting, and end(body) on an idle or corked stream.

const test = require('node:test');
const assert = require('node:assert/strict');
const { notOnDeno } = require('./runtime');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { once } = require('node:events');
const { pipeline } = require('node:stream/promises');
const { Readable, Writable } = require('node:stream');
const { Pool } = require('..');
const { resetRefusesIncomplete } = require('../lib/codecs/lines');
const { waitFor } = require('./wait');
const { text, pieces, through } = require('./chunks');

/** Waits for `stream.flush(...args)`'s callback; the output so far, joined. */
function flushed(stream, out, ...args) {
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.flush(...args, (err) => (err ? reject(err) : resolve(Buffer.concat(out))));
  });
}

/** A decoder stream fed `data` and flushed: what it output. */
async function decodeSoFar(decoder, data) {
  const out = [];
  decoder.on('data', (d) => out.push(d));
  decoder.write(data);
  return flushed(decoder, out);
}

test('flush() makes what was written so far decodable, and the stream goes on', async () => {
  const pool = new Pool();
  try {
    const decoders = {
      createGzip: () => zlib.createGunzip(),
      createDeflate: () => zlib.createInflate(),
      createDeflateRaw: () => zlib.createInflateRaw(),
      createBrotliCompress: () => zlib.createBrotliDecompress(),
      createZstdCompress: () => pool.createZstdDecompress(),
      createLz4Compress: () => pool.createLz4Decompress(),
    };
    const one = {
      createGzip: zlib.gunzipSync,
      createDeflate: zlib.inflateSync,
      createDeflateRaw: zlib.inflateRawSync,
    };
    const data = text(300_000);
    const [a, b, c] = [
      data.subarray(0, 100_000),
      data.subarray(100_000, 250_000),
      data.subarray(250_000),
    ];
    for (const [make, decoder] of Object.entries(decoders)) {
      const stream = pool[make](
        make === 'createBrotliCompress' ? { params: { quality: 5 } } : undefined,
      );
      const out = [];
      stream.on('data', (d) => out.push(d));
      for (const piece of pieces(a, 3)) stream.write(piece);
      const first = flushed(stream, out);
      // Written after the flush: not in what the flush's callback sees.
      stream.write(b);
      const afterA = await first;
      assert.deepEqual(await decodeSoFar(decoder(), afterA), a, `${make}: the first flush`);
      const afterB = await flushed(stream, out);
      assert.deepEqual(
        await decodeSoFar(decoder(), afterB),
        Buffer.concat([a, b]),
        `${make}: the second flush`,
      );
      stream.end(c);
      await new Promise((resolve) => stream.on('end', resolve));
      const whole = Buffer.concat(out);
      assert.deepEqual(await through(decoder(), whole), data, `${make}: one valid stream`);
      if (one[make])
        assert.deepEqual(one[make](whole), data, `${make}: node:zlib's one-shot decoder`);
    }
    // Every deflate kind, and Z_NO_FLUSH, which only waits for the writes before it.
    for (const kind of [0, 1, 2, 3, 5]) {
      const gzip = pool.createGzip();
      const out = [];
      gzip.on('data', (d) => out.push(d));
      gzip.write(a);
      const so = await flushed(gzip, out, kind);
      if (kind !== 0)
        assert.deepEqual(await decodeSoFar(zlib.createGunzip(), so), a, `kind ${kind}`);
      gzip.end();
      await new Promise((resolve) => gzip.on('end', resolve));
      assert.deepEqual(zlib.gunzipSync(Buffer.concat(out)), a, `kind ${kind}`);
    }
  } finally {
    await pool.close();
  }
});

test(
  "flush() takes its family's kinds, as node:zlib; params() is the deflate family's, reset() any codec's",
  { skip: notOnDeno("its node:zlib's reset() of a brotli stream is not Node's") },
  async () => {
    const pool = new Pool();
    try {
      const gzip = pool.createGzip();
      assert.throws(() => gzip.flush(zlib.constants.Z_FINISH), {
        name: 'RangeError',
        code: 'ERR_OUT_OF_RANGE',
        message: /Z_FULL_FLUSH \(3\)/,
      });
      assert.throws(() => gzip.flush(2.5), { code: 'ERR_OUT_OF_RANGE' });
      assert.throws(() => gzip.flush('3'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
      assert.throws(() => gzip.flush(3, 'not a function'), {
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
      });
      assert.throws(() => pool.createBrotliCompress().params(1, 0), {
        code: 'ERR_METHOD_NOT_IMPLEMENTED',
      });
      assert.throws(() => gzip.params(10, 0), { code: 'ERR_OUT_OF_RANGE' });
      // params() flushes, then changes the level: as node:zlib's, level 0 stores what follows.
      for (const make of [zlib.createDeflate, () => pool.createDeflate()]) {
        const deflate = make({ level: 9 });
        const out = [];
        deflate.on('data', (chunk) => out.push(chunk));
        const stored = Buffer.from('stored as it is, stored as it is');
        deflate.write('squeezed, squeezed, squeezed');
        await new Promise((resolve) => deflate.params(0, 0, resolve));
        deflate.end(stored);
        await once(deflate, 'end');
        const packed = Buffer.concat(out);
        assert.ok(packed.includes(stored));
        assert.equal(zlib.inflateSync(packed).toString(), `squeezed, squeezed, squeezed${stored}`);
      }
      // After a reset, the output is a new stream's, as node:zlib's (the writes
      // before it went first): the deflate family's, brotli's and zstd's
      // (node:zlib's zstd, the control, from Node 22.15 on).
      const families = [
        [
          'deflateRaw',
          [zlib.createDeflateRaw, () => pool.createDeflateRaw()],
          zlib.inflateRawSync,
          zlib.constants.Z_SYNC_FLUSH,
        ],
        [
          'brotli',
          [zlib.createBrotliCompress, () => pool.createBrotliCompress()],
          zlib.brotliDecompressSync,
          zlib.constants.BROTLI_OPERATION_FLUSH,
        ],
        [
          'zstd',
          [zlib.createZstdCompress, () => pool.createZstdCompress()].filter(Boolean),
          async (packed) => (await pool.post(packed, { kernel: 'zstdDecompress' })).result,
          1, // ZSTD_e_flush
        ],
      ];
      for (const [kernel, makers, decode, kind] of families) {
        for (const make of makers) {
          const encoder = make();
          const out = [];
          encoder.on('data', (chunk) => out.push(chunk));
          encoder.write('before the reset, before the reset');
          await new Promise((resolve) => encoder.flush(kind, resolve));
          out.length = 0;
          if (make === zlib.createZstdCompress && resetRefusesIncomplete()) {
            // Node 26 refuses to reset a zstd frame that made output: the
            // stream fails (the drop-in's, as docs/zlib.md says, too).
            encoder.on('error', () => {});
            encoder.reset();
            assert.equal(encoder.errored?.code, 'ERR_ZLIB_INCOMPLETE_FRAME');
            continue;
          }
          encoder.reset();
          encoder.end('after');
          await once(encoder, 'end');
          // A stream of its own: it decodes without what came before the reset.
          assert.equal((await decode(Buffer.concat(out))).toString(), 'after', kernel);
        }
      }
      // A reset keeps the level params() set, as node:zlib's (zlib's deflateReset).
      const repeated = Buffer.from('reset keeps the level. '.repeat(2000));
      for (const make of [zlib.createDeflate, (o) => pool.createDeflate(o)]) {
        const deflate = make({ level: 0 });
        const out = [];
        deflate.on('data', (chunk) => out.push(chunk));
        await new Promise((resolve) =>
          deflate.params(9, zlib.constants.Z_DEFAULT_STRATEGY, resolve),
        );
        await new Promise((resolve) => setImmediate(resolve));
        out.length = 0;
        deflate.reset();
        deflate.end(repeated);
        await once(deflate, 'end');
        const packed = Buffer.concat(out);
        assert.ok(
          packed.length < repeated.length / 10,
          `level 9 after the reset: ${packed.length}`,
        );
        assert.deepEqual(zlib.inflateSync(packed), repeated);
      }
      // A decoder's reset reads a new stream, cut from the one before.
      const brotliDecoders = [zlib.createBrotliDecompress, () => pool.createBrotliDecompress()];
      for (const make of brotliDecoders) {
        const decoder = make();
        const out = [];
        decoder.on('data', (chunk) => out.push(chunk));
        const whole = zlib.brotliCompressSync(text(5000));
        await new Promise((resolve) => decoder.write(whole.subarray(0, 100), resolve));
        decoder.reset();
        decoder.end(zlib.brotliCompressSync('second'));
        await once(decoder, 'end');
        const got = Buffer.concat(out);
        assert.ok(got.toString().endsWith('second'), got.subarray(-20).toString());
      }
      const brotli = pool.createBrotliCompress();
      assert.throws(() => brotli.flush(zlib.constants.BROTLI_OPERATION_FINISH), {
        code: 'ERR_OUT_OF_RANGE',
        message: /BROTLI_OPERATION_FLUSH/,
      });
      // A decoder's flush has nothing held back, and calls back.
      const gunzip = pool.createGunzip();
      const out = [];
      gunzip.on('data', (d) => out.push(d));
      gunzip.write(zlib.gzipSync(text(1000)).subarray(0, 500));
      const partial = await flushed(gunzip, out, zlib.constants.Z_SYNC_FLUSH);
      assert.ok(partial.length > 0 && text(1000).subarray(0, partial.length).equals(partial));
      // After the end: the callback waits for 'end', or runs at once once finished.
      gzip.end('x');
      const afterEnd = new Promise((resolve) => gzip.flush(resolve));
      gzip.resume();
      await afterEnd;
      assert.ok(gzip.writableFinished);
      await new Promise((resolve) => gzip.flush(resolve));
      for (const s of [brotli, gunzip]) s.destroy();
    } finally {
      await pool.close();
    }
  },
);

test('a 200 MiB file through pipeline(createReadStream, pool.createGzip(), createWriteStream)', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-gzip-'));
  const pool = new Pool();
  try {
    // 200 MiB of text, each 4 MiB block different (no repeat within deflate's window).
    const source = path.join(dir, 'source.txt');
    const block = text(4 * 2 ** 20);
    const fd = fs.openSync(source, 'w');
    for (let i = 0; i < 50; i++) {
      block.write(`block ${i} `.padEnd(16), 0);
      fs.writeSync(fd, block);
    }
    fs.closeSync(fd);
    const packed = path.join(dir, 'source.txt.gz');
    await pipeline(fs.createReadStream(source), pool.createGzip(), fs.createWriteStream(packed));
    assert.ok(zlib.gunzipSync(fs.readFileSync(packed)).equals(fs.readFileSync(source)));
    assert.ok(fs.statSync(packed).size < fs.statSync(source).size / 2);
  } finally {
    await pool.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a bomb of 1 GiB of zeros stops at maxOutputBytes, with RSS near the limit', async () => {
  const pool = new Pool();
  try {
    // 1 GiB of zeros gzipped by a pool stream (about 1 MiB), one Buffer written again and again.
    const zeros = Buffer.alloc(64 * 2 ** 20);
    const gzip = pool.createGzip({ params: { level: 9 } });
    const packed = [];
    gzip.on('data', (d) => packed.push(d));
    for (let i = 0; i < 16; i++) gzip.write(zeros);
    gzip.end();
    await new Promise((resolve, reject) => gzip.on('end', resolve).on('error', reject));
    const bomb = Buffer.concat(packed);
    assert.ok(bomb.length < 2 * 2 ** 20, `${bomb.length} bytes`);

    const limit = 32 * 2 ** 20;
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    let out = 0;
    try {
      await assert.rejects(
        pipeline(
          Readable.from(pieces(bomb, 9)),
          pool.createGunzip({ maxOutputBytes: limit }),
          new Writable({
            write(chunk, _enc, cb) {
              out += chunk.length;
              cb();
            },
          }),
        ),
        { code: 'ERR_BUFFER_TOO_LARGE' },
      );
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    assert.ok(out <= limit, `${out} bytes came out`);
    // The decoder's output is handed on as it comes: RSS grows by a few of
    // its chunks at most, far from the GiB the bomb holds.
    assert.ok(
      peak - baseline < limit + 64 * 2 ** 20,
      `RSS grew by ${((peak - baseline) / 2 ** 20).toFixed(1)} MiB`,
    );
  } finally {
    await pool.close();
  }
});

test('destroy() fails the writes still waiting for a task: every callback is called once', async () => {
  const pool = new Pool();
  try {
    // A first write a thread is still on a turn of the event loop later:
    // 1 MiB of gzip level 9, 32 MiB of SHA-256 (tens of ms each).
    for (const [make, first] of [
      [() => pool.createGzip({ params: { level: 9 } }), 2 ** 20],
      [() => pool.createHash('sha256'), 32 * 2 ** 20],
    ]) {
      const stream = make();
      stream.on('error', () => {});
      if (stream.resume) stream.resume();
      const data = crypto.randomBytes(first + 2 * 2 ** 20);
      const calls = [];
      // The first is in flight: called back, without an error, once its task
      // stopped (node:zlib's order); the others wait in the Writable and get
      // its ERR_STREAM_DESTROYED.
      stream.write(data.subarray(0, first), (err) => calls.push(['first', err?.code]));
      // (A turn later: a deflate stream's writes of one turn go as one task.)
      await new Promise((resolve) => setImmediate(resolve));
      stream.write(data.subarray(first), (err) => calls.push(['second', err?.code]));
      stream.write(Buffer.from('x'), (err) => calls.push(['third', err?.code]));
      await new Promise((resolve) => setImmediate(resolve));
      // (Should the first task have been done by now, on a stalled machine,
      // the other two went as one task and are the one in flight.)
      const firstDone = calls.length > 0;
      stream.destroy();
      await new Promise((resolve) => stream.on('close', resolve));
      await waitFor(() => calls.length === 3, { what: 'every write callback' });
      calls.sort(
        (a, b) =>
          ['first', 'second', 'third'].indexOf(a[0]) - ['first', 'second', 'third'].indexOf(b[0]),
      );
      const after = firstDone ? undefined : 'ERR_STREAM_DESTROYED';
      assert.deepEqual(calls, [
        ['first', undefined],
        ['second', after],
        ['third', after],
      ]);
    }
  } finally {
    await pool.close();
  }
});

test('end(body) after flush() or reset() on a corked stream: the end follows them, as node:zlib', async () => {
  const pool = new Pool();
  try {
    for (const [who, make] of [
      ['node:zlib', () => zlib.createDeflateRaw()],
      ['tidepool', () => pool.createDeflateRaw()],
    ]) {
      for (const [what, before] of [
        ['flush()', (s) => s.flush(zlib.constants.Z_SYNC_FLUSH)],
        ['reset()', (s) => s.reset()],
        ['write() then flush()', (s) => (s.write('written, '), s.flush())],
      ]) {
        const stream = make();
        const out = [];
        const errors = [];
        stream.on('data', (chunk) => out.push(chunk));
        stream.on('error', (err) => errors.push(err.code));
        const closed = new Promise((resolve) => stream.on('close', resolve));
        stream.cork();
        before(stream);
        stream.end('the end');
        await closed;
        assert.deepEqual(errors, [], `${who}, ${what}`);
        const expected = what.startsWith('write') ? 'written, the end' : 'the end';
        assert.equal(
          zlib.inflateRawSync(Buffer.concat(out)).toString(),
          expected,
          `${who}, ${what}`,
        );
      }
    }
  } finally {
    await pool.close();
  }
});

test('end(body) on an idle stream: one task for the body and the end, the same events as node:zlib', async () => {
  const pool = new Pool();
  try {
    const body = text(200_000);
    for (const [who, make] of [
      ['node:zlib', () => zlib.createGzip()],
      ['tidepool', () => pool.createGzip()],
    ]) {
      const before = pool.stats().completed;
      const gzip = make();
      const events = [];
      const out = [];
      gzip.on('data', (chunk) => out.push(chunk));
      for (const name of ['finish', 'end', 'close']) gzip.on(name, () => events.push(name));
      const ended = new Promise((resolve) => gzip.end(body, resolve));
      await once(gzip, 'close');
      await ended;
      assert.deepEqual(zlib.gunzipSync(Buffer.concat(out)), body, who);
      assert.ok(events.includes('finish') && events.includes('end'), `${who}: ${events}`);
      assert.equal(events[events.length - 1], 'close', who);
      if (who === 'tidepool') assert.equal(pool.stats().completed - before, 1, 'one task');
    }
    // A corrupt body: the same error, once, then 'close'.
    for (const [who, make] of [
      ['node:zlib', () => zlib.createGunzip()],
      ['tidepool', () => pool.createGunzip()],
    ]) {
      const gunzip = make();
      const errors = [];
      gunzip.on('error', (err) => errors.push(err.code));
      // (events.once() would reject on the 'error' first.)
      const closed = new Promise((resolve) => gunzip.on('close', resolve));
      gunzip.end(Buffer.from('not gzip at all'));
      await closed;
      assert.deepEqual(errors, ['Z_DATA_ERROR'], who);
    }
    // Writes still running: the end waits its turn, in order.
    const gzip = pool.createGzip();
    const out = [];
    gzip.on('data', (chunk) => out.push(chunk));
    gzip.write(body.subarray(0, 100_000));
    gzip.end(body.subarray(100_000));
    await once(gzip, 'end');
    assert.deepEqual(zlib.gunzipSync(Buffer.concat(out)), body);
  } finally {
    await pool.close();
  }
});

test('streams made after others were destroyed mid-step run whole, and count no failure', async () => {
  // One thread: the first stream's step runs, the others' wait in the
  // queue when they are destroyed. What stops a step (its cancel flag)
  // must stop that stream's alone: streams made after, which may reuse
  // what the ended ones held, run to their end.
  const pool = new Pool({ minThreads: 1, maxThreads: 1 });
  try {
    const data = crypto.randomBytes(2 ** 20);
    const destroyed = [];
    for (let i = 0; i < 6; i++) {
      const stream = pool.createGzip({ params: { level: 9 } });
      stream.on('error', () => {});
      stream.resume();
      stream.write(data);
      destroyed.push(stream);
    }
    await waitFor(() => pool.stats().busyThreads === 1, { what: 'a step running' });
    for (const stream of destroyed) stream.destroy();
    await Promise.all(destroyed.map((stream) => once(stream, 'close')));
    await waitFor(() => pool.stats().pending === 0, { what: 'the stopped steps settled' });
    // (Stopped steps count as failed tasks: aborted, in the metrics.)
    const stopped = pool.stats().failed;
    assert.ok(stopped >= 1, `the destroyed streams' steps were stopped (${stopped})`);
    const body = text(300 * 1024);
    for (let round = 0; round < 3; round++) {
      const outputs = await Promise.all(
        Array.from({ length: 8 }, (_, i) => through(pool.createGzip(), body, round * 8 + i + 1)),
      );
      for (const output of outputs) assert.ok(zlib.gunzipSync(output).equals(body));
    }
    assert.equal(pool.stats().failed, stopped, 'no later step was stopped');
  } finally {
    await pool.close();
  }
});
