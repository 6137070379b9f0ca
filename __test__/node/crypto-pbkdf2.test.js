'use strict';
// Adapted from nodejs/node test/parallel/test-crypto-pbkdf2.js: RFC 6070's
// vectors and their SHA-256 counterparts, sync and async; every kind of
// binary as password and salt; the argument errors (each compared with
// node:crypto's own, on this Node line); an unknown digest.

const test = require('node:test');
const assert = require('node:assert/strict');
const { promisify } = require('node:util');
const { both, sameOutcome, outcome } = require('./crypto-harness');

// [password, salt, iterations, keylen, digest, expected hex]
const VECTORS = [
  ['password', 'salt', 1, 20, 'sha1', '0c60c80f961f0e71f3a9b524af6012062fe037a6'],
  ['password', 'salt', 2, 20, 'sha1', 'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957'],
  ['password', 'salt', 4096, 20, 'sha1', '4b007901b765489abead49d926f721d065a429c1'],
  [
    'passwordPASSWORDpassword',
    'saltSALTsaltSALTsaltSALTsaltSALTsalt',
    4096,
    25,
    'sha1',
    '3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038',
  ],
  ['pass\0word', 'sa\0lt', 4096, 16, 'sha1', '56fa6aa75548099dcc37d7f03425e0c3'],
  ['password', 'salt', 1, 20, 'sha256', '120fb6cffcf8b32c43e7225256c4f837a86548c9'],
  ['password', 'salt', 2, 20, 'sha256', 'ae4d0c95af6b46d32d0adff928f06dd02a303f8e'],
  ['password', 'salt', 4096, 20, 'sha256', 'c5e478d59288c841aa530db6845c4c8d962893a0'],
  [
    'password',
    'salt',
    32,
    32,
    'sha256',
    '64c486c55d30d4c5a079b8823b7d7cb37ff0556f537da8410233bcec330ed956',
  ],
];

test('RFC 6070 vectors and their SHA-256 counterparts, sync and async', async () => {
  await both(async (crypto, common, who) => {
    for (const [password, salt, iterations, keylen, digest, expected] of VECTORS) {
      assert.equal(
        crypto.pbkdf2Sync(password, salt, iterations, keylen, digest).toString('hex'),
        expected,
        who,
      );
      const key = await new Promise((resolve) =>
        crypto.pbkdf2(password, salt, iterations, keylen, digest, common.mustSucceed(resolve)),
      );
      assert.ok(Buffer.isBuffer(key), who);
      assert.equal(key.toString('hex'), expected, `${who}: ${digest} ${iterations}`);
      assert.equal(
        (await promisify(crypto.pbkdf2)(password, salt, iterations, keylen, digest)).toString(
          'hex',
        ),
        expected,
        who,
      );
    }
  });
});

test('every hash the pool has, and its aliases, derive what node:crypto derives', async () => {
  const names = [
    'md5',
    'SHA1',
    'sha-1',
    'sha224',
    'SHA-224',
    'Sha256',
    'SHA-256',
    'sha384',
    'sha-384',
  ];
  names.push('SHA512', 'sha-512', 'sha512-224', 'SHA-512/224', 'sha512-256', 'sha-512/256');
  await sameOutcome(
    'pbkdf2',
    names.flatMap((digest) => [
      ['pw', 'salt', 3, 1, digest],
      ['pw', 'salt', 3, 200, digest],
    ]),
  );
});

test('an empty password and salt', async () => {
  await both(async (crypto, common) => {
    const key = await new Promise((resolve) =>
      crypto.pbkdf2('', '', 1, 32, 'sha256', common.mustSucceed(resolve)),
    );
    assert.equal(key.length, 32);
  });
});

test('a key of 0 bytes ends as node:crypto ends it (empty on Node 20, an error from 22)', async () => {
  await sameOutcome('pbkdf2', [['password', 'salt', 1, 0, 'sha1']]);
  // -0 is 0 (node:crypto's own aborts the process on it before Node 24).
  const nodeCrypto = require('node:crypto');
  const ours = require('@tidepool-rs/pool/crypto');
  const args = (keylen) => ['password', 'salt', 1, keylen, 'sha256'];
  assert.deepEqual(await outcome(ours.pbkdf2, args(-0)), await outcome(nodeCrypto.pbkdf2, args(0)));
});

test('every kind of binary as password and salt', async () => {
  await both(async (crypto, common, who) => {
    const expected = crypto.pbkdf2Sync('password', 'salt', 8, 64, 'sha512');
    for (const password of common.getBufferSources(Buffer.from('password'))) {
      for (const salt of common.getBufferSources(Buffer.from('salt'))) {
        const key = await promisify(crypto.pbkdf2)(password, salt, 8, 64, 'sha512');
        assert.deepEqual(key, expected, who);
      }
    }
  });
});

test('bad arguments throw as node:crypto throws them', async () => {
  const ok = ['password', 'salt', 1, 20, 'sha256'];
  const cases = [];
  for (const keylen of [Infinity, -Infinity, NaN, -1, 4073741824, 2 ** 31, 1.5, '20', null, 10n])
    cases.push(['password', 'salt', 1, keylen, 'sha256']);
  for (const iterations of [0, -1, 1.5, 2 ** 31, '1', null, undefined, NaN, Infinity])
    cases.push(['password', 'salt', iterations, 20, 'sha256']);
  for (const digest of [null, undefined, 1, {}, 'md55', 'sha', ''])
    cases.push(['password', 'salt', 1, 20, digest]);
  for (const input of [1, true, null, undefined, {}, [], Symbol('s')]) {
    cases.push([input, 'salt', 1, 20, 'sha256']);
    cases.push(['password', input, 1, 20, 'sha256']);
  }
  await sameOutcome('pbkdf2', [ok, ...cases]);
});

test('a callback that is not a function, or a digest left out', async () => {
  await both(
    async (crypto) => {
      for (const callback of [undefined, null, 'abc', {}]) {
        const thrown = captureThrow(() => crypto.pbkdf2('pw', 'salt', 1, 20, 'sha256', callback));
        assert.equal(thrown.name, 'TypeError');
        assert.equal(thrown.code, 'ERR_INVALID_ARG_TYPE');
        assert.match(thrown.message, /"callback" argument/);
      }
      // The old form without a digest: refused since Node 16.
      const thrown = captureThrow(() => crypto.pbkdf2('pw', 'salt', 1, 20, () => {}));
      assert.equal(thrown.code, 'ERR_INVALID_ARG_TYPE');
      assert.match(thrown.message, /"digest" argument/);
    },
    { work: false },
  );
});

test("a hash the pool does not have is node:crypto's own work", async () => {
  await both(
    async (crypto, common, who) => {
      const key = await new Promise((resolve) =>
        crypto.pbkdf2('pw', 'salt', 2, 16, 'sha3-256', common.mustSucceed(resolve)),
      );
      assert.deepEqual(key, crypto.pbkdf2Sync('pw', 'salt', 2, 16, 'sha3-256'), who);
    },
    { work: false },
  );
});

function captureThrow(fn) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail('did not throw');
}
