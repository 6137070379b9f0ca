'use strict';
// Adapted from nodejs/node test/parallel/test-crypto-argon2.js (Node
// 24.7+, where node:crypto has argon2): its vectors for the three
// variants, with a secret, associated data and other costs; the costs
// past their limits and each parameter left out, every outcome compared
// with node:crypto's own in the same run. Where node:crypto has no
// argon2, neither has the drop-in (its password hashing is
// @tidepool-rs/pool/password's).

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeCrypto = require('node:crypto');
const ours = require('@tidepool-rs/pool/crypto');
const { both, sameOutcome } = require('./crypto-harness');

const skip = typeof nodeCrypto.argon2 === 'function' ? false : 'node:crypto has no argon2 here';

const message = Buffer.alloc(32, 0x01);
const nonce = Buffer.alloc(16, 0x02);
const secret = Buffer.alloc(8, 0x03);
const associatedData = Buffer.alloc(12, 0x04);
const defaults = { message, nonce, parallelism: 4, tagLength: 32, memory: 64 << 10, passes: 3 };

const GOOD = [
  ['argon2d', {}, 'bf37a2a7530e053a8bd2784a9d50dc7de451e33bd581096922bc7f9ef66020ed'],
  ['argon2i', {}, '96334882febdd85eb9b2cf367479fbad2d5b87cf79f9076f51b23589560a2e0a'],
  ['argon2id', {}, 'fedd802b86b17230843c6d3f025c81d3f472fbf9daaf26897fa88844732167ec'],
  ['argon2id', { secret }, '71d8a1361e3660f8e8158021a6870f223d42342c6a194429252c6d6ad19c25d6'],
  [
    'argon2id',
    { associatedData },
    '7da97d5dd2ba433dbb1b26e00a496caa673501b9a437e863855201eb51cea6ef',
  ],
  [
    'argon2id',
    { secret, associatedData },
    '47a677ebc68412b8e17949c921fdca065352114ffb2a09eebe61adc451eecf1e',
  ],
  ['argon2id', { passes: 2 }, '2139b90863e8bbffff1459c9f08f6460db08def592991e78f11b6c5765bd1fac'],
  [
    'argon2id',
    { memory: 32 << 10 },
    '2beec876bf5b1098e8349d094385eda1dd472733d103e0f1afad4d28f948e808',
  ],
  ['argon2id', { message: '' }, '07a0f408fd6bb1190be8e1600f680304e4680f72af121c3399308f48aba67ce4'],
];

test("the vectors of Node's test, sync and async", { skip }, async () => {
  await both(async (crypto, common, who) => {
    for (const [algorithm, overrides, expected] of GOOD) {
      const parameters = { ...defaults, ...overrides };
      assert.equal(crypto.argon2Sync(algorithm, parameters).toString('hex'), expected, who);
      const tag = await new Promise((resolve) =>
        crypto.argon2(algorithm, parameters, common.mustSucceed(resolve)),
      );
      assert.ok(Buffer.isBuffer(tag), who);
      assert.equal(tag.toString('hex'), expected, `${who}: ${algorithm} ${Object.keys(overrides)}`);
    }
  });
});

test(
  'costs past their limits, and each parameter left out, end as node:crypto ends them',
  { skip },
  async () => {
    const small = { ...defaults, memory: 64, parallelism: 1 };
    const cases = [
      { nonce: nonce.subarray(0, 7) },
      { tagLength: 3 },
      { tagLength: 2 ** 32 },
      { passes: 0 },
      { passes: 2 ** 32 },
      { parallelism: 0 },
      { parallelism: 2 ** 24 },
      { parallelism: 4, memory: 16 },
      { memory: 2 ** 32 },
      { memory: 1.5 },
      { passes: '1' },
      { message: 1 },
      { secret: null },
      { associatedData: Buffer.alloc(33) },
      { associatedData: 'ad' },
      { associatedData: Buffer.alloc(1000, 1) },
      // A byteLength property that lies: node:crypto's checks read it.
      { nonce: Object.defineProperty(Buffer.alloc(16, 2), 'byteLength', { value: 4 }) },
      { message: Object.defineProperty(Buffer.alloc(4, 1), 'byteLength', { value: 2 ** 40 }) },
      {},
    ].map((overrides) => ['argon2id', { ...small, ...overrides }]);
    for (const key of Object.keys(defaults)) {
      const parameters = { ...small };
      delete parameters[key];
      cases.push(['argon2id', parameters]);
    }
    cases.push(['argon2x', small], [undefined, small], ['argon2id', null], ['argon2id', [1]]);
    await sameOutcome('argon2', cases);
  },
);

test('a callback that is not a function throws, as node:crypto', { skip }, async () => {
  await both(
    async (crypto) => {
      assert.throws(() => crypto.argon2(), { code: 'ERR_INVALID_ARG_TYPE' });
      for (const callback of [null, {}])
        assert.throws(() => crypto.argon2('argon2id', defaults, callback), {
          code: 'ERR_INVALID_ARG_TYPE',
        });
    },
    { work: false },
  );
});

test('where node:crypto has no argon2, neither has the drop-in', { skip: !skip }, () => {
  assert.equal(ours.argon2, undefined);
  assert.equal(ours.argon2Sync, undefined);
});
