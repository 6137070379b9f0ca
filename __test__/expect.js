'use strict';
// Assertions of a typed error: its code, and a pattern its message matches.

const assert = require('node:assert/strict');

/** `promise` rejects with `code`, its message matching `pattern` if given. */
async function rejects(promise, code, pattern) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

/** `fn` throws a `Ctor` with `code`, its message matching `pattern` if given. */
function throws(fn, Ctor, code, pattern) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof Ctor, `${err.name}: ${err.message}`);
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

module.exports = { rejects, throws };
