'use strict';
// What the crypto and password tests share: a pool that keeps each input
// its one-shot door is given (the copy of a secret the drop-ins make), so
// that a test can look at it once the task is over. Not a test file.

const { ONE_SHOT } = require('../lib/symbols');
const { Pool } = require('..');

/** A new Pool, and the Array its one-shot tasks' inputs are pushed to. */
function poolKeepingInputs() {
  const pool = new Pool();
  const inputs = [];
  const oneShot = pool[ONE_SHOT];
  pool[ONE_SHOT] = function (kernel, params, max, data, signal) {
    inputs.push(data);
    return oneShot.call(this, kernel, params, max, data, signal);
  };
  return { pool, inputs };
}

/** True when every byte of every input is 0 (and there was one). */
function allWiped(inputs) {
  return inputs.every((copy) => copy.byteLength > 0 && copy.every((byte) => byte === 0));
}

module.exports = { poolKeepingInputs, allWiped };
