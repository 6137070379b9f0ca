'use strict';
// Adapted from nodejs/node test/parallel/test-crypto-domain.js and
// test-domain-crypto.js: a throw in a derivation's callback reaches the
// domain the call was made in, as the very error thrown; and with the
// domain module loaded and `domain` a global, every call still works.
// pbkdf2 there; here each derivation the drop-in has, node:crypto first as
// the control. node --test runs each file in a process of its own, so the
// domain module loaded here changes no other file's process.

const test = require('node:test');
const assert = require('node:assert/strict');
const domain = require('node:domain');
const { both } = require('./crypto-harness');

/** Each derivation the module has on this Node: [name, call(crypto, callback)]. */
function calls(crypto) {
  const list = [
    ['pbkdf2', (cb) => crypto.pbkdf2('password', 'salt', 1, 8, 'sha256', cb)],
    ['scrypt', (cb) => crypto.scrypt('password', 'salt', 8, { N: 16 }, cb)],
    ['hkdf', (cb) => crypto.hkdf('sha256', 'key', 'salt', 'info', 8, cb)],
  ];
  if (typeof crypto.argon2 === 'function') {
    const params = { message: 'password', nonce: 'saltsalt', parallelism: 1 };
    Object.assign(params, { tagLength: 8, memory: 8, passes: 1 });
    list.push(['argon2', (cb) => crypto.argon2('argon2id', params, cb)]);
  }
  return list;
}

test("a throw in the callback goes to the call's domain, the very error", async () => {
  await both(async (crypto, common, who) => {
    for (const [name, call] of calls(crypto)) {
      const ex = new Error(`BAM from ${name}`);
      await new Promise((resolve) => {
        const d = domain.create();
        d.on(
          'error',
          common.mustCall((err) => {
            assert.equal(err, ex, `${who} ${name}`);
            resolve();
          }),
        );
        d.run(() =>
          call(
            common.mustCall((err) => {
              assert.ifError(err);
              assert.equal(process.domain, d, `${who} ${name}: the callback's domain`);
              throw ex;
            }),
          ),
        );
      });
    }
  });
});

test('with domain a global, the calls neither throw nor lose their callback', async () => {
  global.domain = domain;
  try {
    await both(async (crypto, common, who) => {
      const done = calls(crypto).map(
        ([name, call]) =>
          new Promise((resolve) =>
            call(
              common.mustCall((err, key) => {
                assert.ifError(err);
                assert.equal(key.byteLength, 8, `${who} ${name}`);
                resolve();
              }),
            ),
          ),
      );
      await Promise.all(done);
    });
  } finally {
    delete global.domain;
  }
});
