'use strict';
// @tidepool-rs/pool/crypto beyond Node's own tests (__test__/node/crypto-*):
// the callback's async context and its throws, checked against
// node:crypto in the same test as the control; the copy of the secret
// wiped; close() with derivations queued; install() and uninstall().

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeCrypto = require('node:crypto');
const { AsyncLocalStorage } = require('node:async_hooks');
const { promisify } = require('node:util');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const ours = require('@tidepool-rs/pool/crypto');
const { nodeOnly } = require('./runtime');
const { poolKeepingInputs, allWiped } = require('./secrets');
const { childOutput, installRoundTrip } = require('./dropin');
const { Pool } = require('..');

const BOTH = [
  ['node:crypto', nodeCrypto],
  ['tidepool', ours],
];

/** Each derivation once, with its callback: [name, call(crypto, callback)]. */
const CALLS = [
  ['pbkdf2', (crypto, cb) => crypto.pbkdf2('pw', 'salt', 10, 32, 'sha256', cb)],
  ['scrypt', (crypto, cb) => crypto.scrypt('pw', 'salt', 32, { N: 1024 }, cb)],
  ['hkdf', (crypto, cb) => crypto.hkdf('sha256', 'key', 'salt', 'info', 32, cb)],
];

test('the callback runs in the AsyncLocalStorage context of the call', async () => {
  const als = new AsyncLocalStorage();
  for (const [who, crypto] of BOTH) {
    for (const [name, call] of CALLS) {
      const store = { who, name };
      const seen = await new Promise((resolve) => {
        als.run(store, () => call(crypto, () => resolve(als.getStore())));
      });
      assert.equal(seen, store, `${who} ${name}`);
    }
  }
});

test(
  "a throw in the callback is the process's uncaught exception, in the call's domain",
  { skip: nodeOnly('domains and uncaught exceptions of a child Node') },
  () => {
    // In a child: the domain module changes the process it is loaded in.
    const script = [
      "const domain = require('node:domain');",
      "const crypto = require(process.argv[1] === 'node' ? 'node:crypto' : '@tidepool-rs/pool/crypto');",
      "process.on('unhandledRejection', () => console.log('unhandled rejection'));",
      'const d = domain.create();',
      "d.on('error', (err) => { console.log('caught', err.message); if (err.message === 'hkdf') process.exit(0); });",
      'const fail = (name) => () => { console.log(name, process.domain === d); throw new Error(name); };',
      'd.run(() => {',
      "  crypto.pbkdf2('pw', 'salt', 10, 32, 'sha256', fail('pbkdf2'));",
      "  crypto.scrypt('pw', 'salt', 32, { N: 1024 }, fail('scrypt'));",
      "  setTimeout(() => crypto.hkdf('sha256', 'k', 's', 'i', 32, fail('hkdf')), 100);",
      '});',
    ].join('\n');
    const outputs = {};
    for (const who of ['node', 'tidepool']) {
      const run = spawnSync(process.execPath, ['-e', script, who], {
        cwd: path.join(__dirname, '..'),
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(run.status, 0, `${who}: ${run.stderr}`);
      outputs[who] = run.stdout.trim().split('\n').sort();
    }
    const expected = ['caught hkdf', 'caught pbkdf2', 'caught scrypt'];
    expected.push('hkdf true', 'pbkdf2 true', 'scrypt true');
    assert.deepEqual(outputs.node, expected);
    assert.deepEqual(outputs.tidepool, outputs.node);
  },
);

test("the pool's copy of the secret is wiped once the task is over, whichever way it ended", async () => {
  const { pool, inputs: seen } = poolKeepingInputs();
  ours.install({ pool });
  try {
    const password = Buffer.from('correct horse battery staple');
    const key = await promisify(nodeCrypto.pbkdf2)(password, 'salt', 10, 32, 'sha256');
    assert.deepEqual(key, nodeCrypto.pbkdf2Sync(password, 'salt', 10, 32, 'sha256'));
    await promisify(nodeCrypto.hkdf)('sha256', 'a key as a string', 'salt', 'info', 32);
    assert.equal(seen.length, 2);
    // A copy, not the caller's: the caller's password is untouched.
    assert.notEqual(seen[0].buffer, password.buffer);
    assert.equal(password.toString(), 'correct horse battery staple');
    assert.ok(allWiped(seen), 'wiped');
  } finally {
    ours.uninstall();
    await pool.close();
  }
});

test('a derivation on a closed pool calls back with ERR_TIDEPOOL_CLOSED', async () => {
  const pool = new Pool();
  ours.install({ pool });
  try {
    await pool.close();
    for (const [name, call] of CALLS) {
      const err = await new Promise((resolve) => call(nodeCrypto, resolve));
      assert.equal(err?.code, 'ERR_TIDEPOOL_CLOSED', name);
    }
  } finally {
    ours.uninstall();
  }
});

test('close() with derivations queued: every callback is called once, with its key', async () => {
  const pool = new Pool({ maxThreads: 1 });
  ours.install({ pool });
  const calls = [];
  try {
    const expected = nodeCrypto.scryptSync('pw', 'salt', 16, { N: 4096 });
    for (let i = 0; i < 16; i++) {
      calls.push(
        new Promise((resolve) => {
          let times = 0;
          nodeCrypto.scrypt('pw', 'salt', 16, { N: 4096 }, (err, key) => {
            times++;
            setImmediate(() => resolve({ err, key, times }));
          });
        }),
      );
    }
    assert.ok(pool.stats().queued > 0, 'some wait in the queue');
    await pool.close();
    for (const { err, key, times } of await Promise.all(calls)) {
      assert.equal(times, 1);
      assert.ifError(err);
      assert.deepEqual(key, expected);
    }
  } finally {
    ours.uninstall();
  }
});

test('install() routes node:crypto and uninstall() puts back exactly what was there', async () => {
  const names = ['pbkdf2', 'scrypt', 'hkdf'];
  await installRoundTrip({
    nodeModule: nodeCrypto,
    dropin: ours,
    names,
    installedCode: 'ERR_TIDEPOOL_CRYPTO_INSTALLED',
    async routed(pool) {
      for (const name of names) assert.equal(nodeCrypto[name], ours[name], name);
      for (const [name, call] of CALLS) {
        const done = pool.stats().completed;
        await new Promise((resolve, reject) =>
          call(nodeCrypto, (err) => (err ? reject(err) : resolve())),
        );
        assert.equal(pool.stats().completed, done + 1, `${name}: the pool did the work`);
      }
      // The *Sync functions stay node:crypto's; so do hashes the pool lacks.
      assert.equal(ours.pbkdf2Sync, nodeCrypto.pbkdf2Sync);
      const done = pool.stats().completed;
      await promisify(nodeCrypto.pbkdf2)('pw', 'salt', 1, 8, 'sha3-256');
      assert.equal(pool.stats().completed, done);
    },
  });
});

test(
  'ESM named imports: of the module, and of node:crypto after install(); --require …/register installs',
  { skip: nodeOnly("node's command line (--input-type, --require)") },
  () => {
    const esm = [
      "import cryptoModule, { pbkdf2, scrypt, hkdf, install } from '@tidepool-rs/pool/crypto';",
      "import { pbkdf2 as before } from 'node:crypto';",
      'install();',
      "const { pbkdf2: after } = await import('node:crypto');",
      'console.log(pbkdf2 === cryptoModule.pbkdf2, typeof scrypt, typeof hkdf);',
      'console.log(after === pbkdf2, before === pbkdf2);',
      "pbkdf2('pw', 'salt', 1, 4, 'sha1', (err, key) => { console.log(err, key.toString('hex')); cryptoModule.pool.close(); });",
    ].join('\n');
    const key = nodeCrypto.pbkdf2Sync('pw', 'salt', 1, 4, 'sha1').toString('hex');
    assert.equal(
      childOutput(['--input-type=module', '-e', esm]),
      `true function function\ntrue true\nnull ${key}`,
    );
    const registered = childOutput([
      '--require',
      '@tidepool-rs/pool/crypto/register',
      '-e',
      "console.log(require('crypto').scrypt === require('@tidepool-rs/pool/crypto').scrypt)",
    ]);
    assert.equal(registered, 'true');
  },
);

test(
  "install() where node:crypto's functions cannot be replaced (Deno): a typed error, nothing changed",
  { skip: nodeOnly("node's command line (-e)") },
  () => {
    const script = [
      "const crypto = require('node:crypto');",
      'const before = [crypto.pbkdf2, crypto.scrypt];',
      "Object.defineProperty(crypto, 'hkdf', { writable: false, configurable: false });",
      "const ours = require('@tidepool-rs/pool/crypto');",
      'try { ours.install(); } catch (err) { console.log(`${err.name} ${err.code} ${err.message}`); }',
      'console.log(crypto.pbkdf2 === before[0] && crypto.scrypt === before[1]);',
    ].join('\n');
    const [code, untouched] = childOutput(['-e', script]).split('\n');
    assert.match(
      code,
      /^Error ERR_TIDEPOOL_CRYPTO_UNSUPPORTED install\(\) is not supported .*node:crypto's hkdf cannot be replaced/,
    );
    assert.equal(untouched, 'true');
  },
);

test('a burst of derivations: each key is right, each callback called once', async () => {
  const burst = Array.from({ length: 64 }, (_, i) => `password ${i}`);
  const keys = await Promise.all(
    burst.map((pw) => promisify(ours.pbkdf2)(pw, 'salt', 100, 32, 'sha512')),
  );
  keys.forEach((key, i) =>
    assert.deepEqual(key, nodeCrypto.pbkdf2Sync(burst[i], 'salt', 100, 32, 'sha512')),
  );
});

test.after(() => ours.pool.close());
