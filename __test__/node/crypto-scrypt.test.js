'use strict';
// Adapted from nodejs/node test/parallel/test-crypto-scrypt.js: RFC 7914's
// vectors, the options by both their names, bad options and the memory
// bound (each error compared with node:crypto's own, on this Node line),
// the default options, and options read once.

const test = require('node:test');
const assert = require('node:assert/strict');
const { promisify } = require('node:util');
const nodeCrypto = require('node:crypto');
const ours = require('@tidepool-rs/pool/crypto');
const { both, sameOutcome, outcome } = require('./crypto-harness');

const RFC7914 = [
  {
    password: '',
    salt: '',
    keylen: 64,
    options: { N: 16, p: 1, r: 1 },
    expected:
      '77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906',
  },
  {
    password: 'password',
    salt: 'NaCl',
    keylen: 64,
    options: { N: 1024, p: 16, r: 8 },
    expected:
      'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
  },
  {
    password: 'pleaseletmein',
    salt: 'SodiumChloride',
    keylen: 64,
    options: { N: 16384, p: 1, r: 8 },
    expected:
      '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887',
  },
  {
    password: 'pleaseletmein',
    salt: 'SodiumChloride',
    keylen: 64,
    options: { cost: 16384, parallelization: 1, blockSize: 8 },
    expected:
      '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887',
  },
];

test('RFC 7914 vectors, by either name of each option', async () => {
  await both(async (crypto, common, who) => {
    for (const { password, salt, keylen, options, expected } of RFC7914) {
      assert.equal(crypto.scryptSync(password, salt, keylen, options).toString('hex'), expected);
      const key = await new Promise((resolve) =>
        crypto.scrypt(password, salt, keylen, options, common.mustSucceed(resolve)),
      );
      assert.ok(Buffer.isBuffer(key), who);
      assert.equal(key.toString('hex'), expected, who);
    }
  });
});

test('the default options, with and without an options argument', async () => {
  await both(async (crypto, common, who) => {
    const expected = crypto.scryptSync('pass', 'salt', 32).toString('hex');
    for (const options of [undefined, null, {}, { N: 0, r: 0, p: 0, maxmem: 0 }]) {
      const key = await promisify(crypto.scrypt)('pass', 'salt', 32, options);
      assert.equal(key.toString('hex'), expected, who);
    }
    const key = await new Promise((resolve) =>
      crypto.scrypt('pass', 'salt', 32, common.mustSucceed(resolve)),
    );
    assert.equal(key.toString('hex'), expected, who);
  });
});

test('every kind of binary as password and salt', async () => {
  await both(async (crypto, common, who) => {
    const options = { N: 16, r: 1, p: 1 };
    const expected = crypto.scryptSync('password', 'salt', 16, options);
    for (const password of common.getBufferSources(Buffer.from('password'))) {
      for (const salt of common.getBufferSources(Buffer.from('salt'))) {
        assert.deepEqual(
          await promisify(crypto.scrypt)(password, salt, 16, options),
          expected,
          who,
        );
      }
    }
  });
});

test('bad arguments and options end as node:crypto ends them', async () => {
  const cases = [['pw', 'salt', 0, { N: 16 }]];
  for (const keylen of [-1, 1.5, 2 ** 31, '8', null, NaN, Infinity])
    cases.push(['pw', 'salt', keylen, { N: 16 }]);
  for (const input of [1, true, null, {}, Symbol('s')]) {
    cases.push([input, 'salt', 8, { N: 16 }]);
    cases.push(['pw', input, 8, { N: 16 }]);
  }
  const bad = [
    { N: 1 },
    { N: 3 },
    { N: 2 ** 32 },
    { N: -1 },
    { N: '16' },
    { N: 16, cost: 16 },
    { r: 1, blockSize: 1 },
    { p: 1, parallelization: 1 },
    { r: -1 },
    { r: 1.5 },
    { p: 2 ** 32 },
    { N: 2 ** 16, r: 1 },
    { N: 16, r: 1, p: 2 ** 30 },
    { N: 2 ** 20, maxmem: 2 ** 20 },
    { N: 16384, r: 8, maxmem: 16 << 20 },
    { N: 16384, r: 8, maxmem: 128 * 8 * 16386 + 1024 },
    { N: 16384, r: 8, maxmem: 128 * 8 * 16386 + 1023 },
    { maxmem: -1 },
    { maxmem: 1.5 },
    { maxmem: 2 ** 53 },
    { N: null },
    { r: null, N: 16 },
    { p: null, N: 16 },
    { cost: null },
    { maxmem: null, N: 16 },
    { N: 2 ** 20, r: 8 },
    5,
    'options',
    true,
  ];
  for (const options of bad) cases.push(['pw', 'salt', 8, options]);
  await sameOutcome('scrypt', cases);
  // -0 is 0 (node:crypto's own aborts the process on it before Node 24).
  assert.deepEqual(
    await outcome(ours.scrypt, ['pw', 'salt', -0, { N: 16 }]),
    await outcome(nodeCrypto.scrypt, ['pw', 'salt', 0, { N: 16 }]),
  );
});

test('a callback that is not a function throws, as node:crypto', async () => {
  await both(
    async (crypto) => {
      for (const callback of [null, 'abc', {}]) {
        assert.throws(() => crypto.scrypt('pw', 'salt', 8, { N: 16 }, callback), {
          name: 'TypeError',
          code: 'ERR_INVALID_ARG_TYPE',
        });
      }
      assert.throws(() => crypto.scrypt('pw', 'salt', 8), { code: 'ERR_INVALID_ARG_TYPE' });
    },
    { work: false },
  );
});

test('a getter past a refused option is not what fails: node:crypto checks each as it reads it', async () => {
  const thrower = () => {
    throw new Error('read too far');
  };
  await sameOutcome('scrypt', [
    [
      'pw',
      'salt',
      8,
      {
        N: 'bad',
        get cost() {
          return thrower();
        },
      },
    ],
    [
      'pw',
      'salt',
      8,
      {
        N: 16,
        cost: 16,
        get r() {
          return thrower();
        },
      },
    ],
    [
      'pw',
      'salt',
      8,
      {
        N: 3,
        get maxmem() {
          return thrower();
        },
      },
    ],
  ]);
});

test('inherited options count, as node:crypto reads them', async () => {
  await both(async (crypto, common, who) => {
    const reads = [];
    const proto = {
      get N() {
        reads.push('N');
        return 16;
      },
    };
    const options = Object.create(proto);
    Object.defineProperty(options, 'r', {
      get() {
        reads.push('r');
        return 2;
      },
    });
    const key = await promisify(crypto.scrypt)('pw', 'salt', 8, options);
    assert.deepEqual(key, crypto.scryptSync('pw', 'salt', 8, { N: 16, r: 2 }), who);
    // node:crypto reads each twice; the pool's check once.
    assert.deepEqual([...new Set(reads)], ['N', 'r'], who);
  });
});
