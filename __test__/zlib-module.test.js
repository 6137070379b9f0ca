'use strict';
// @tidepool-rs/pool/zlib beyond Node's own tests (__test__/node/): what an
// adversarial review of it found, each checked against node:zlib in the
// same test as the control, and install()/uninstall() themselves.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { promisify } = require('node:util');
const { once } = require('node:events');
const ours = require('@tidepool-rs/pool/zlib');
const { nodeOnly, notOnDeno, needsInstall } = require('./runtime');
const { childOutput, installRoundTrip } = require('./dropin');
const { Pool } = require('..');

const BOTH = [
  ['node:zlib', nodeZlib],
  ['tidepool', ours],
];

test('an aborted signal: the stream is destroyed with an AbortError, a one-shot calls back with it', async () => {
  for (const [who, zlib] of BOTH) {
    const stream = zlib.createGzip({ signal: AbortSignal.abort('why') });
    const [err] = await once(stream, 'error');
    assert.equal(err.name, 'AbortError', who);
    assert.equal(err.code, 'ABORT_ERR', who);
    // With info: the engine is not destroyed under the caller (no crash).
    const oneShot = await promisify(zlib.gzip)('x', { info: true, signal: AbortSignal.abort() })
      .then(() => 'resolved')
      .catch((e) => e.code);
    assert.equal(oneShot, 'ABORT_ERR', who);
    const sync = zlib.gzipSync('x', { info: true, signal: AbortSignal.abort() });
    assert.ok(Buffer.isBuffer(sync.buffer), who);
  }
});

test('a one-shot stops when its signal fires under way', async () => {
  const bomb = nodeZlib.gzipSync(Buffer.alloc(64 << 20));
  for (const [who, zlib] of BOTH) {
    const controller = new AbortController();
    const result = promisify(zlib.gunzip)(bomb, { signal: controller.signal });
    controller.abort();
    await assert.rejects(result, { code: 'ABORT_ERR' }, who);
  }
});

test('a one-shot whose signal fires after the work, before its callback, calls back with the AbortError', async () => {
  const input = Buffer.alloc(100_000, 'a');
  for (const [who, zlib] of BOTH) {
    const controller = new AbortController();
    const result = promisify(zlib.gzip)(input, { signal: controller.signal });
    // This job holds the event loop until the work is done (node:zlib's on a
    // libuv thread; ours until the pool reports no task queued or running),
    // then aborts: the result has not reached JavaScript yet.
    if (zlib === ours) {
      const deadline = Date.now() + 10_000;
      for (let s = ours.pool.stats(); s.queued !== 0 || s.busyThreads !== 0; s = ours.pool.stats())
        if (Date.now() > deadline) assert.fail('the pool never ran the one-shot');
    } else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    controller.abort();
    await assert.rejects(result, { name: 'AbortError', code: 'ABORT_ERR' }, who);
  }
});

test('a falsy signal is none, as node:zlib takes it', async () => {
  for (const signal of [0, false, '', null]) {
    for (const [who, zlib] of BOTH) {
      const packed = await promisify(zlib.gzip)('hello, world', { signal });
      assert.equal(nodeZlib.gunzipSync(packed).toString(), 'hello, world', `${who} ${signal}`);
      const stream = zlib.createGzip({ signal });
      stream.end('hello, world');
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(nodeZlib.gunzipSync(Buffer.concat(chunks)).toString(), 'hello, world', who);
    }
  }
});

test(
  "a pool's maxInputBytes does not bound the drop-in's one-shots: node:zlib has no such bound",
  { skip: needsInstall() },
  async () => {
    const input = Buffer.alloc(1000, 'a');
    // The control first: install() routes node:zlib itself.
    const control = await promisify(nodeZlib.gzip)(input);
    const pool = new Pool({ maxInputBytes: 10 });
    ours.install({ pool });
    try {
      for (const zlib of [nodeZlib, ours]) {
        const packed = await promisify(zlib.gzip)(input);
        assert.deepEqual(nodeZlib.gunzipSync(packed), nodeZlib.gunzipSync(control));
      }
      // post() keeps its bound.
      assert.throws(() => pool.post(input), { code: 'ERR_OUT_OF_RANGE' });
    } finally {
      ours.uninstall();
      await pool.close();
    }
  },
);

test(
  "numbers node:zlib's binding truncates are taken, as there",
  { skip: nodeOnly("its node:zlib refuses them; the drop-in reads options as Node's does") },
  async () => {
    for (const [who, zlib] of BOTH) {
      const options = { level: 2.5, windowBits: 9.5, memLevel: 1.5 };
      const packed = await promisify(zlib.deflate)('hello hello hello', options);
      assert.equal(nodeZlib.inflateSync(packed).toString(), 'hello hello hello', who);
      const out = await promisify(zlib.gunzip)(nodeZlib.gzipSync('abc'), {
        maxOutputLength: 100.5,
      });
      assert.equal(out.toString(), 'abc', who);
      const brotli = { params: { [nodeZlib.constants.BROTLI_PARAM_QUALITY]: 4.7 } };
      const squeezed = await promisify(zlib.brotliCompress)('abc abc abc', brotli);
      assert.equal(nodeZlib.brotliDecompressSync(squeezed).toString(), 'abc abc abc', who);
    }
  },
);

test('an end() refused for its chunk leaves nothing for close() to wait for', async () => {
  for (const [who, zlib] of BOTH) {
    const gzip = zlib.createGzip();
    assert.throws(() => gzip.end(42), { code: 'ERR_INVALID_ARG_TYPE' }, who);
    gzip.destroy();
  }
  const pool = new Pool();
  const gzip = pool.createGzip();
  assert.throws(() => gzip.end(42), { code: 'ERR_INVALID_ARG_TYPE' });
  // The stream is left open and unended: close() still resolves.
  await pool.close();
});

test(
  'install() routes node:zlib and uninstall() puts back exactly what was there',
  { skip: needsInstall() },
  async () => {
    await installRoundTrip({
      nodeModule: nodeZlib,
      dropin: ours,
      names: ['createGzip', 'gzip', 'createUnzip', 'brotliDecompress'],
      installedCode: 'ERR_TIDEPOOL_ZLIB_INSTALLED',
      async routed(pool) {
        assert.equal(nodeZlib.createGzip, ours.createGzip);
        const packed = await promisify(nodeZlib.gzip)('routed');
        assert.equal(nodeZlib.gunzipSync(packed).toString(), 'routed');
        assert.ok(pool.stats().completed > 0, 'the pool did the work');
        // The *Sync functions and the classes stay node:zlib's.
        assert.notEqual(nodeZlib.gzipSync, ours.gzipSync);
        assert.notEqual(nodeZlib.Gzip, ours.Gzip);
      },
    });
  },
);

test(
  'ESM named imports of node:zlib follow install(), and --require …/register installs',
  { skip: nodeOnly("node's command line (--input-type, --require)") },
  () => {
    const esm = [
      "import zlibModule from '@tidepool-rs/pool/zlib';",
      "import { createGzip } from 'node:zlib';",
      'zlibModule.install();',
      "const { createGzip: after } = await import('node:zlib');",
      'console.log(after === zlibModule.createGzip, createGzip === zlibModule.createGzip);',
    ].join('\n');
    // Live bindings: both the new import and the one taken before follow.
    assert.equal(childOutput(['--input-type=module', '-e', esm]), 'true true');
    const registered = childOutput([
      '--require',
      '@tidepool-rs/pool/zlib/register',
      '-e',
      "console.log(require('zlib').gzip === require('@tidepool-rs/pool/zlib').gzip)",
    ]);
    assert.equal(registered, 'true');
  },
);

test('zstd takes a dictionary both ways, as node:zlib 22.15+ does (Node 20 has no zstd: no control)', async () => {
  const dictionary = Buffer.from('{"id": 1, "user": "user-1", "tags": ["red", "blue"]}');
  const data = Buffer.from(JSON.stringify([{ id: 7, user: 'user-7', tags: ['red'] }]).repeat(20));
  const packed = await promisify(ours.zstdCompress)(data, { dictionary });
  const back = await promisify(ours.zstdDecompress)(packed, { dictionary });
  assert.ok(back.equals(data));
  // Without the dictionary the frame is refused with a typed error, never wrong bytes.
  await assert.rejects(
    promisify(ours.zstdDecompress)(packed),
    (err) => typeof err.code === 'string',
  );
  // And through the streams.
  const encoder = ours.createZstdCompress({ dictionary });
  const decoder = ours.createZstdDecompress({ dictionary });
  const out = [];
  decoder.on('data', (chunk) => out.push(chunk));
  encoder.pipe(decoder);
  encoder.end(data);
  await once(decoder, 'end');
  assert.ok(Buffer.concat(out).equals(data));
});

test(
  "brotli's large window, both ways, as node:zlib's; beyond 24 bits without it, clamped",
  { skip: notOnDeno('its brotli takes no large window') },
  async () => {
    const c = nodeZlib.constants;
    const data = Buffer.from('a large window, '.repeat(100_000));
    const large = {
      params: {
        [c.BROTLI_PARAM_LARGE_WINDOW]: 1,
        [c.BROTLI_PARAM_LGWIN]: 28,
        [c.BROTLI_PARAM_QUALITY]: 5,
      },
    };
    const reader = { params: { [c.BROTLI_DECODER_PARAM_LARGE_WINDOW]: true } };
    for (const [who, zlib] of BOTH) {
      const compress = promisify(zlib.brotliCompress);
      const decompress = promisify(zlib.brotliDecompress);
      const packed = await compress(data, large);
      // The large-window format: node:zlib's standard decoder refuses it.
      assert.throws(() => nodeZlib.brotliDecompressSync(packed), {
        code: 'ERR__ERROR_FORMAT_WINDOW_BITS',
      });
      assert.deepEqual(nodeZlib.brotliDecompressSync(packed, reader), data, who);
      assert.deepEqual(await decompress(packed, reader), data, who);
      await assert.rejects(decompress(packed), {
        code: 'ERR__ERROR_FORMAT_WINDOW_BITS',
        errno: -13,
      });
      // A window of 28 bits without it is brotli's 24.
      const clamped = await compress(data, { params: { [c.BROTLI_PARAM_LGWIN]: 28 } });
      assert.deepEqual(nodeZlib.brotliDecompressSync(clamped), data, who);
    }
  },
);

test(
  "streams take no output limit, as node:zlib's; the one-shots keep maxOutputLength",
  { skip: needsInstall() },
  async () => {
    // A pool whose own limits are 1 MiB: its one-shots and its own streams
    // stop there; the drop-in's streams on it go on, as node:zlib's do.
    const limit = 1 << 20;
    const total = 8 * limit;
    const packed = nodeZlib.gzipSync(Buffer.alloc(total, 'x'));
    const pool = new Pool({ maxOutputBytes: limit });
    /** The byte count `stream` gives for `input`, or the code of the error it ends with. */
    const drain = async (stream, input) => {
      let bytes = 0;
      stream.on('data', (chunk) => (bytes += chunk.length));
      stream.end(input);
      try {
        await once(stream, 'end');
      } catch (err) {
        return err.code;
      }
      return bytes;
    };
    try {
      ours.install({ pool });
      for (const [who, zlib] of BOTH) {
        assert.equal(await drain(zlib.createGunzip(), packed), total, `${who}: createGunzip()`);
        // An encoder's output past the limit: incompressible input.
        const noise = require('node:crypto').randomBytes(2 * limit);
        const out = await drain(zlib.createDeflateRaw({ level: 0 }), noise);
        assert.ok(out > 2 * limit, `${who}: createDeflateRaw(): ${out}`);
        await assert.rejects(promisify(zlib.gunzip)(packed, { maxOutputLength: limit }), {
          code: 'ERR_BUFFER_TOO_LARGE',
        });
      }
      // The routed node:zlib too.
      assert.equal(await drain(nodeZlib.createGunzip(), packed), total, 'installed createGunzip()');
      assert.ok(pool.stats().completed > 0, 'the pool did the work');
      // The pool's own streams keep the pool's limit (its documented contract).
      assert.equal(await drain(pool.createGunzip(), packed), 'ERR_BUFFER_TOO_LARGE');
    } finally {
      ours.uninstall();
      await pool.close();
    }
  },
);

test(
  "install() where node:zlib's functions cannot be replaced (Deno): a typed error, nothing changed",
  { skip: nodeOnly("node's command line (-e); Deno's own case is the runtimes' check") },
  () => {
    // Deno's node:zlib is frozen; so is this child's, before install().
    const script = [
      "const zlib = require('node:zlib');",
      "const names = ['createGzip', 'gzip', 'createGunzip'];",
      'const before = names.map((n) => zlib[n]);',
      "Object.defineProperty(zlib, 'gunzip', { writable: false, configurable: false });",
      "const ours = require('@tidepool-rs/pool/zlib');",
      'let code;',
      'try { ours.install(); } catch (err) { code = `${err.name} ${err.code} ${err.message}`; }',
      'console.log(code);',
      'console.log(names.every((n, i) => zlib[n] === before[i]));',
      // Used directly, the module works there.
      "ours.gzip('direct', (err, out) => console.log(err, zlib.gunzipSync(out).toString()));",
    ].join('\n');
    const [code, untouched, direct] = childOutput(['-e', script]).split('\n');
    assert.match(
      code,
      /^Error ERR_TIDEPOOL_ZLIB_UNSUPPORTED install\(\) is not supported .*node:zlib's gunzip cannot be replaced/,
    );
    assert.equal(untouched, 'true');
    assert.equal(direct, 'null direct');
  },
);

test('the last write before end() is finished with it: its callback reads the whole stream', async () => {
  for (const [who, zlib] of BOTH) {
    for (const flushFirst of [false, true]) {
      const gzip = zlib.createGzip();
      const read = [];
      await new Promise((resolve) => {
        gzip.write('abc');
        const last = () => {
          for (let chunk; (chunk = gzip.read()) !== null;) read.push(chunk);
          resolve();
        };
        if (flushFirst) gzip.flush(last);
        else gzip.write('def', last);
        gzip.end();
      });
      // What the callback read decodes whole: the trailer was in it.
      const text = zlib.gunzipSync(Buffer.concat(read)).toString();
      assert.equal(text, flushFirst ? 'abc' : 'abcdef', `${who}, flush first: ${flushFirst}`);
    }
  }
});

test(
  'destroy() in the callback of a flush queued before end(): no finish, no end after it',
  {
    skip: notOnDeno("its brotli stream ends and finishes after such a destroy(), Node's does not"),
  },
  async () => {
    for (const [who, zlib] of BOTH) {
      for (const kind of ['createGzip', 'createBrotliCompress']) {
        const stream = zlib[kind]();
        const events = [];
        stream.on('data', () => {});
        for (const name of ['finish', 'end', 'error']) stream.on(name, () => events.push(name));
        stream.write('abc');
        // Queued behind the write, then the end: the flush is the last write.
        stream.flush(() => {
          events.push('flushed');
          stream.destroy();
        });
        stream.end();
        await once(stream, 'close');
        assert.deepEqual(events, ['flushed'], `${who}, ${kind}`);
      }
    }
  },
);

test("zstd's *Sync: a detached view is empty input; maxOutputLength named as given", () => {
  const detached = () => {
    const view = new Uint8Array(new ArrayBuffer(8));
    structuredClone(view.buffer, { transfer: [view.buffer] });
    return view;
  };
  // The control on every line: node:zlib's *Sync reads a detached view as empty.
  assert.deepEqual(nodeZlib.gunzipSync(nodeZlib.gzipSync(detached())), Buffer.alloc(0));
  const packed = nodeZlib.gzipSync(Buffer.alloc(1000));
  assert.throws(() => nodeZlib.gunzipSync(packed, { maxOutputLength: 999.5 }), {
    code: 'ERR_BUFFER_TOO_LARGE',
    message: 'Cannot create a Buffer larger than 999.5 bytes',
  });
  // zstd's, node:zlib's where this Node has them, ours everywhere.
  for (const [who, zlib] of BOTH) {
    if (typeof zlib.zstdCompressSync !== 'function') continue;
    const empty = zlib.zstdCompressSync(detached());
    assert.deepEqual(zlib.zstdDecompressSync(empty), Buffer.alloc(0), who);
    const zstd = zlib.zstdCompressSync(Buffer.alloc(1000));
    assert.throws(
      () => zlib.zstdDecompressSync(zstd, { maxOutputLength: 999.5 }),
      { code: 'ERR_BUFFER_TOO_LARGE', message: 'Cannot create a Buffer larger than 999.5 bytes' },
      who,
    );
  }
});

test('params(): _level and _strategy change once applied; a call meanwhile compares with those', async () => {
  for (const [who, zlib] of BOTH) {
    const gzip = zlib.createGzip();
    gzip.resume();
    const events = [];
    await new Promise((resolve) => {
      const note = (what) => () => {
        events.push(`${what} ${gzip._level} ${gzip._strategy}`);
        if (events.length === 4) resolve();
      };
      gzip.write('abc');
      gzip.params(9, 1, note('first'));
      events.push(`called ${gzip._level} ${gzip._strategy}`);
      // The same change again flushes again; the defaults are no change yet.
      gzip.params(9, 1, note('again'));
      gzip.params(-1, 0, note('defaults'));
    });
    // (Not ended: Node 24's own Gzip fails its end after two params() flushes.)
    gzip.destroy();
    assert.deepEqual(events, ['called -1 0', 'defaults -1 0', 'first 9 1', 'again 9 1'], who);
  }
});

test("reset() of a gzip member begun or a zstd frame that made output: as node:zlib's of this Node", async () => {
  // Node 26 fails the stream with ERR_ZLIB_INCOMPLETE_FRAME (the output
  // would be a cut member, then a new one); Node 20 to 24 take the reset.
  // Both modules, the same way on each line; zstd only where node:zlib has it.
  /** What `cls` does with a reset() once `feed` called back: 'end' and its bytes, or 'error CODE errno'. */
  const outcome = (zlib, cls, feed) =>
    new Promise((resolve) => {
      const stream = new zlib[cls]();
      let bytes = 0;
      stream.on('data', (chunk) => (bytes += chunk.length));
      stream.on('error', (err) => resolve(`error ${err.code} ${err.errno}`));
      stream.on('end', () => resolve(`end ${bytes > 0}`));
      feed(stream, () => {
        stream.reset();
        if (!stream.destroyed) stream.end('xyz');
      });
    });
  const feeds = {
    'a write': (s, then) => s.write('abc', then),
    'a write, a flush': (s, then) => s.write('abc', () => s.flush(then)),
    'a flush': (s, then) => s.flush(then),
    'a large write': (s, then) => s.write(require('node:crypto').randomBytes(1 << 20), then),
  };
  const classes = ['Gzip', 'Deflate', 'BrotliCompress'];
  if (typeof nodeZlib.ZstdCompress === 'function') classes.push('ZstdCompress');
  for (const cls of classes) {
    for (const [what, feed] of Object.entries(feeds)) {
      const theirs = await outcome(nodeZlib, cls, feed);
      assert.equal(await outcome(ours, cls, feed), theirs, `${cls}, ${what}`);
    }
  }
});

test(
  'uninstall() where node:zlib was frozen after install(): a typed error, still routed',
  { skip: nodeOnly("node's command line (-e)") },
  () => {
    const script = [
      "const zlib = require('node:zlib');",
      "const ours = require('@tidepool-rs/pool/zlib');",
      'ours.install();',
      'Object.freeze(zlib);',
      'try { ours.uninstall(); } catch (err) { console.log(err.code, zlib.gzip === ours.gzip); }',
    ].join('\n');
    assert.equal(childOutput(['-e', script]), 'ERR_TIDEPOOL_ZLIB_UNSUPPORTED true');
  },
);
