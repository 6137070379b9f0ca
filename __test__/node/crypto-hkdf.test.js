'use strict';
// Adapted from nodejs/node test/parallel/test-crypto-hkdf.js: RFC 5869's
// vectors, every kind of binary, the length bounds per hash, info's 1024
// bytes, and the argument errors, each compared with node:crypto's own.

const test = require('node:test');
const assert = require('node:assert/strict');
const { promisify } = require('node:util');
const nodeCrypto = require('node:crypto');
const ours = require('@tidepool-rs/pool/crypto');
const { both, sameOutcome, outcome } = require('./crypto-harness');

const hex = (s) => Buffer.from(s, 'hex');
// RFC 5869, test cases 1, 3 (SHA-256) and 4, 7 (SHA-1).
const VECTORS = [
  [
    'sha256',
    hex('0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b'),
    hex('000102030405060708090a0b0c'),
    hex('f0f1f2f3f4f5f6f7f8f9'),
    42,
    '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
  ],
  [
    'sha256',
    hex('0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b'),
    '',
    '',
    42,
    '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8',
  ],
  [
    'sha1',
    hex('0b0b0b0b0b0b0b0b0b0b0b'),
    hex('000102030405060708090a0b0c'),
    hex('f0f1f2f3f4f5f6f7f8f9'),
    42,
    '085a01ea1b10f36933068b56efa5ad81a4f14b822f5b091568a9cdd4f155fda2c22e422478d305f3f896',
  ],
  [
    'sha1',
    hex('0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c'),
    '',
    '',
    42,
    '2c91117204d745f3500d636a62f64f0ab3bae548aa53d423b0d1f27ebba6f5e5673a081d70cce7acfc48',
  ],
];

test('RFC 5869 vectors, sync and async; the key is an ArrayBuffer', async () => {
  await both(async (crypto, common, who) => {
    for (const [digest, ikm, salt, info, length, expected] of VECTORS) {
      assert.equal(
        Buffer.from(crypto.hkdfSync(digest, ikm, salt, info, length)).toString('hex'),
        expected,
      );
      const key = await new Promise((resolve) =>
        crypto.hkdf(digest, ikm, salt, info, length, common.mustSucceed(resolve)),
      );
      assert.ok(key instanceof ArrayBuffer, who);
      assert.equal(Buffer.from(key).toString('hex'), expected, who);
    }
  });
});

test('every kind of binary as key, salt and info', async () => {
  await both(async (crypto, common, who) => {
    const expected = Buffer.from(crypto.hkdfSync('sha512', 'key', 'salt', 'info', 100));
    for (const source of common.getBufferSources(Buffer.from('key'))) {
      const key = await promisify(crypto.hkdf)('sha512', source, Buffer.from('salt'), 'info', 100);
      assert.deepEqual(Buffer.from(key), expected, who);
    }
    for (const salt of common.getBufferSources(Buffer.from('salt'))) {
      for (const info of common.getBufferSources(Buffer.from('info'))) {
        const key = await promisify(crypto.hkdf)('sha512', 'key', salt, info, 100);
        assert.deepEqual(Buffer.from(key), expected, who);
      }
    }
  });
});

test('lengths at and past 255 blocks of each hash, and info at and past 1024 bytes', async () => {
  const cases = [];
  for (const [digest, bytes] of [
    ['md5', 16],
    ['sha1', 20],
    ['sha256', 32],
    ['SHA-384', 48],
    ['sha512', 64],
  ]) {
    cases.push([digest, 'key', 'salt', 'info', 255 * bytes]);
    cases.push([digest, 'key', 'salt', 'info', 255 * bytes + 1]);
  }
  cases.push(['sha256', 'key', 'salt', Buffer.alloc(1024, 1), 16]);
  cases.push(['sha256', 'key', 'salt', Buffer.alloc(1025, 1), 16]);
  cases.push(['sha256', 'key', 'salt', 'info', 0]);
  cases.push(['sha256', '', '', '', 16]);
  await sameOutcome('hkdf', cases);
});

test('an info whose byteLength property lies, and a keylen of -0, end as node:crypto ends them', async () => {
  const lying = Buffer.alloc(16, 1);
  Object.defineProperty(lying, 'byteLength', { value: 2000 });
  const small = Buffer.alloc(2000, 1);
  Object.defineProperty(small, 'byteLength', { value: 16 });
  await sameOutcome('hkdf', [
    ['sha256', 'key', 'salt', lying, 16],
    ['sha256', 'key', 'salt', small, 16],
  ]);
  // -0 is 0 (node:crypto's own aborts the process on it before Node 24).
  assert.deepEqual(
    await outcome(ours.hkdf, ['sha256', 'key', 'salt', 'info', -0]),
    await outcome(nodeCrypto.hkdf, ['sha256', 'key', 'salt', 'info', 0]),
  );
});

test('bad arguments end as node:crypto ends them', async () => {
  const cases = [];
  for (const digest of [null, undefined, 1, {}, 'md55', ''])
    cases.push([digest, 'key', 'salt', 'info', 16]);
  for (const input of [1, true, null, undefined, {}, Symbol('s')]) {
    cases.push(['sha256', input, 'salt', 'info', 16]);
    cases.push(['sha256', 'key', input, 'info', 16]);
    cases.push(['sha256', 'key', 'salt', input, 16]);
  }
  // (Not 2 ** 32: Node 20's binding aborts the process on it.)
  for (const length of [-1, 1.5, '16', null, NaN, Infinity])
    cases.push(['sha256', 'key', 'salt', 'info', length]);
  await sameOutcome('hkdf', cases);
});

test("a secret KeyObject, and a hash the pool does not have, are node:crypto's own work", async () => {
  await both(
    async (crypto, _common, who) => {
      const secret = nodeCrypto.createSecretKey(Buffer.from('key'));
      const key = await promisify(crypto.hkdf)('sha256', secret, 'salt', 'info', 16);
      assert.deepEqual(
        Buffer.from(key),
        Buffer.from(crypto.hkdfSync('sha256', 'key', 'salt', 'info', 16)),
        who,
      );
      const other = await promisify(crypto.hkdf)('sha3-256', 'key', 'salt', 'info', 16);
      const expected = crypto.hkdfSync('sha3-256', 'key', 'salt', 'info', 16);
      assert.deepEqual(Buffer.from(other), Buffer.from(expected), who);
    },
    { work: false },
  );
});
