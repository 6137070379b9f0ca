'use strict';
// Adapted from nodejs/node test/parallel/test-crypto-hash-stream-pipe.js:
// a Hash is a Transform: piped into, its readable side gives the digest.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { PassThrough } = require('node:stream');
const { Pool } = require('../..');

test('piped into a hash, its readable side gives the digest', async () => {
  const pool = new Pool();
  try {
    for (const [who, createHash] of [
      ['node:crypto', crypto.createHash],
      ['tidepool', (name) => pool.createHash(name)],
    ]) {
      const s = new PassThrough();
      const h = createHash('sha1');
      const digest = new Promise((resolve) => s.pipe(h).on('data', resolve).setEncoding('hex'));
      s.end('aoeu');
      assert.equal(await digest, '15987e60950cf22655b9323bc1e281f9c4aff47e', who);
    }
  } finally {
    await pool.close();
  }
});
