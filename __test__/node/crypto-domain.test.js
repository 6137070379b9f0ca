'use strict';
// Adapted from nodejs/node test/parallel/test-crypto-domain.js and
// test-domain-crypto.js. The first means a throw in pbkdf2's callback to
// reach the domain the call was made in, as the very error thrown (as
// written upstream, its d.run() throws before pbkdf2 is called); the
// second calls pbkdf2 with the domain module loaded and `domain` a global.
// Here each derivation the drop-in has, node:crypto first as the control,
// the drop-in's each run on the pool. node --test runs each file in a
// process of its own, so the domain module loaded here changes no other
// file's process.

const test = require('node:test');
const assert = require('node:assert/strict');
const domain = require('node:domain');
const { both, tasksRun } = require('./crypto-harness');

/** Tasks the drop-in's pool has run (0 for node:crypto's runs). */
const ran = (who) => (who === 'tidepool' ? tasksRun() : 0);

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
      const before = ran(who);
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
      assert.equal(ran(who), before + (who === 'tidepool' ? 1 : 0), `${who} ${name}: on the pool`);
    }
  });
});

test('with domain a global, the calls neither throw nor lose their callback', async () => {
  global.domain = domain;
  try {
    await both(async (crypto, common, who) => {
      const before = ran(who);
      const list = calls(crypto);
      const done = list.map(
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
      const tasks = who === 'tidepool' ? list.length : 0;
      assert.equal(ran(who), before + tasks, `${who}: each call on the pool`);
    });
  } finally {
    delete global.domain;
  }
});
