'use strict';
// Each entry of the package (`@tidepool-rs/pool`, `/metrics`, `/zlib`, `/crypto`,
// `/password`),
// imported as an ES module and required as CommonJS, has every value its
// .d.ts declares, with the same value both ways: code that type-checks
// runs. `/zlib` also has every name node:zlib has on this Node.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const nodeZlib = require('node:zlib');
const nodeCrypto = require('node:crypto');
const { declaredValues } = require('./dts-exports');
const { ROOT } = require('./project');
const { nodeOnly, needsInstall } = require('./runtime');

const ENTRIES = [
  ['@tidepool-rs/pool', 'index.d.ts'],
  ['@tidepool-rs/pool/metrics', 'metrics.d.ts'],
  ['@tidepool-rs/pool/zlib', 'zlib.d.ts'],
  ['@tidepool-rs/pool/crypto', 'crypto.d.ts'],
  ['@tidepool-rs/pool/password', 'password.d.ts'],
];

for (const [entry, dts] of ENTRIES) {
  test(`${entry}: every value ${dts} declares, as ESM named exports and in CommonJS, the same`, async () => {
    const esm = await import(entry);
    const cjs = require(entry);
    const declared = declaredValues(path.join(ROOT, dts));
    assert.ok(declared.length > 0, dts);
    for (const name of declared) {
      assert.ok(Object.hasOwn(esm, name), `${entry}: no ESM export named ${name}`);
      assert.equal(esm[name], cjs[name], `${entry}: ${name} differs between ESM and CommonJS`);
      // Only where node:zlib itself lacks what @types/node declares of it
      // (Z_ASCII and five more legacy names), or node:crypto what the
      // drop-in declares (argon2 before Node 24.7), is a declared value
      // undefined.
      if (cjs[name] === undefined) {
        const lacking =
          (dts === 'zlib.d.ts' && !(name in nodeZlib)) ||
          (dts === 'crypto.d.ts' && !(name in nodeCrypto));
        assert.ok(lacking, `${entry}: ${name} is undefined`);
      }
    }
    assert.equal(esm.default, cjs, `${entry}: the default export is the CommonJS module`);
  });
}

test(
  "@tidepool-rs/pool/zlib: node:zlib's names on this Node, each ours or node:zlib's own",
  { skip: nodeOnly("its node:zlib's names are not Node's (Deno enumerates the legacy constants)") },
  async () => {
    const esm = await import('@tidepool-rs/pool/zlib');
    const cjs = require('@tidepool-rs/pool/zlib');
    for (const name of Reflect.ownKeys(nodeZlib)) {
      const theirs = Object.getOwnPropertyDescriptor(nodeZlib, name);
      const ours = Object.getOwnPropertyDescriptor(cjs, name);
      assert.ok(ours !== undefined, `CommonJS lacks node:zlib's ${String(name)}`);
      assert.equal(ours.enumerable, theirs.enumerable, `${String(name)}: enumerable`);
      // ESM's node:zlib has its enumerable names; ours has them too.
      if (theirs.enumerable) assert.equal(esm[name], cjs[name], `ESM's ${String(name)}`);
    }
    // What is not ours is node:zlib's very own.
    assert.equal(cjs.codes, nodeZlib.codes);
    // crc32 is node:zlib's behind a guard of -0 (an abort on Node 20 and 22).
    assert.equal(cjs.crc32('hello', 7), nodeZlib.crc32('hello', 7));
    assert.equal(cjs.crc32.length, nodeZlib.crc32.length);
    assert.equal(cjs.Z_SYNC_FLUSH, nodeZlib.Z_SYNC_FLUSH);
    // A named export this Node's node:zlib lacks is undefined, as required.
    for (const name of Object.keys(esm)) {
      if (esm[name] === undefined) {
        assert.ok(!(name in nodeZlib), `${name} is undefined here but node:zlib has it`);
        assert.equal(cjs[name], undefined, name);
      }
    }
    // zstd's whole set of names, on every Node.
    for (const name of ['ZstdCompress', 'createZstdCompress', 'zstdCompress', 'zstdCompressSync']) {
      assert.equal(typeof esm[name], 'function', name);
      assert.equal(typeof esm[name.replace('Compress', 'Decompress')], 'function', name);
    }
  },
);

test(
  "@tidepool-rs/pool/zlib: ESM's `pool` follows install() and uninstall(), as the getter",
  { skip: needsInstall() },
  async () => {
    const esm = await import('@tidepool-rs/pool/zlib');
    const cjs = require('@tidepool-rs/pool/zlib');
    const { Pool } = require('..');
    const own = cjs.pool;
    assert.equal(esm.pool, own);
    const pool = new Pool();
    try {
      cjs.install({ pool });
      assert.equal(esm.pool, pool);
    } finally {
      cjs.uninstall();
    }
    assert.equal(esm.pool, own);
    await pool.close();
  },
);

test("zstd's *Sync one-shots: node:zlib's where it has them, else the pool's codec on this thread", async () => {
  const zlib = require('@tidepool-rs/pool/zlib');
  const input = Buffer.from('zstd, synchronously. '.repeat(100));
  const packed = zlib.zstdCompressSync(input);
  assert.deepEqual(zlib.zstdDecompressSync(packed), input);
  assert.deepEqual(zlib.zstdDecompressSync(new Uint8Array(packed).buffer), input);
  // The same bytes come out of the async one-shot on the pool.
  const viaPool = await new Promise((resolve, reject) =>
    zlib.zstdDecompress(packed, (err, out) => (err ? reject(err) : resolve(out))),
  );
  assert.deepEqual(viaPool, input);
  const info = zlib.zstdCompressSync(input, { info: true });
  assert.ok(info.engine instanceof zlib.ZstdCompress);
  assert.deepEqual(zlib.zstdDecompressSync(info.buffer), input);
  assert.throws(() => zlib.zstdDecompressSync(packed, { maxOutputLength: 10 }), {
    name: 'RangeError',
    code: 'ERR_BUFFER_TOO_LARGE',
    message: 'Cannot create a Buffer larger than 10 bytes',
  });
  assert.throws(() => zlib.zstdCompressSync(42), { code: 'ERR_INVALID_ARG_TYPE' });
  const level = zlib.constants.ZSTD_c_compressionLevel;
  assert.throws(() => zlib.zstdCompressSync('x', { params: { [level]: 'x' } }), {
    code: 'ERR_INVALID_ARG_TYPE',
  });
  // Where node:zlib has them, they are its own; the errors of corrupt input are its.
  if (typeof nodeZlib.zstdDecompressSync === 'function') {
    assert.notEqual(zlib.zstdDecompressSync, nodeZlib.zstdDecompressSync); // (info's engine is ours)
    let theirs;
    try {
      nodeZlib.zstdDecompressSync(Buffer.from('not zstd'));
    } catch (err) {
      theirs = err;
    }
    assert.throws(
      () => zlib.zstdDecompressSync(Buffer.from('not zstd')),
      (err) => {
        assert.equal(err.code, theirs.code);
        assert.equal(err.message, theirs.message);
        return true;
      },
    );
  } else {
    assert.throws(
      () => zlib.zstdDecompressSync(Buffer.from('not zstd')),
      (err) => {
        assert.match(err.message, /Unknown frame descriptor/);
        return true;
      },
    );
  }
});
