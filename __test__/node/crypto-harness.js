'use strict';
// The harness of Node's own key-derivation tests (nodejs/node
// test/parallel/test-crypto-pbkdf2.js, -scrypt.js, -hkdf.js), adapted as
// ./harness.js adapts the zlib ones: each check runs against node:crypto
// (the control), then against `@tidepool-rs/pool/crypto`, with the same
// assertions; and `sameOutcome` calls both with the same arguments and
// requires the same thrown error or the same callback arguments.

const assert = require('node:assert/strict');
const { inspect } = require('node:util');
const nodeCrypto = require('node:crypto');
const ours = require('@tidepool-rs/pool/crypto');
const { Common } = require('./harness');

/** The tasks the module's pool has run, failed ones included. */
function tasksRun() {
  const { completed, failed } = ours.pool.stats();
  return completed + failed;
}

/**
 * Runs `check(crypto, common, who)` against node:crypto, then against the
 * drop-in; each run may return a promise, and its mustCall()s are checked
 * when it settles. `work`: the drop-in's run must have run tasks on its
 * pool (false: it must not have, every call being node:crypto's own).
 */
async function both(check, { work = true } = {}) {
  for (const [crypto, who] of [
    [nodeCrypto, 'node:crypto'],
    [ours, 'tidepool'],
  ]) {
    const common = new Common();
    const before = crypto === ours ? tasksRun() : 0;
    await check(crypto, common, who);
    common.verify(who);
    if (crypto === ours) {
      if (work) assert.ok(tasksRun() > before, `${who}: the pool ran no task`);
      else assert.equal(tasksRun(), before, `${who}: the pool ran a task`);
    }
  }
}

/** What calling `fn(...args, callback)` did: threw, or called back with what. */
function outcome(fn, args) {
  return new Promise((resolve) => {
    try {
      fn(...args, (err, key) => {
        if (err) resolve({ calledBack: describe(err) });
        else
          resolve({ calledBack: null, key: Buffer.from(key).toString('hex'), type: typeName(key) });
      });
    } catch (err) {
      resolve({ threw: describe(err) });
    }
  });
}

function describe(err) {
  return { name: err.name, code: err.code, message: err.message };
}

function typeName(value) {
  return Buffer.isBuffer(value) ? 'Buffer' : Object.prototype.toString.call(value);
}

/**
 * node:crypto's `name` and the drop-in's, called with each of `cases` (an
 * Array of argument lists, the callback left out), end the same way.
 */
async function sameOutcome(name, cases) {
  for (const args of cases) {
    const theirs = await outcome(nodeCrypto[name], args);
    const mine = await outcome(ours[name], args);
    assert.deepEqual(
      mine,
      theirs,
      `${name}(${args.map((a) => inspect(a, { depth: 0 })).join(', ')})`,
    );
  }
}

module.exports = { both, sameOutcome, outcome, tasksRun };
