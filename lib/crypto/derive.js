'use strict';
// A planned derivation (./args.js) run as a task of the pool, its result
// handed to the callback as node:crypto hands its own: from a tick of its
// own (a throw there is the process's uncaught exception, not a rejected
// promise), in the async context of the call (AsyncLocalStorage and
// domains follow the promise the task is, then the tick).

const { ONE_SHOT } = require('../symbols');

const nextTick = process.nextTick;

/**
 * Runs `plan` on `pool` and calls `callback(err)` or `callback(null,
 * shape(key))`, `key` being the derived bytes as a Buffer. The copy of
 * the secret is wiped once the task is over, whichever way it ended.
 */
function derive(pool, plan, callback, shape) {
  const { kernel, secret, params } = plan;
  let task;
  try {
    task = pool[ONE_SHOT](kernel, params, undefined, secret, undefined);
  } catch (err) {
    secret.fill(0);
    // A pool that cannot take it now (closed, full): the callback's error,
    // as a failed job's is node:crypto's.
    nextTick(callback, err);
    return;
  }
  task.then(
    (key) => {
      secret.fill(0);
      nextTick(callback, null, shape(key));
    },
    (err) => {
      secret.fill(0);
      nextTick(callback, err);
    },
  );
}

/** pbkdf2's and scrypt's key: a Buffer (node:crypto's, over an ArrayBuffer of its own). */
function asBuffer(key) {
  return key.byteOffset === 0 && key.buffer.byteLength === key.byteLength
    ? key
    : Buffer.from(asArrayBuffer(key));
}

/** hkdf's key: an ArrayBuffer. */
function asArrayBuffer(key) {
  return key.byteOffset === 0 && key.buffer.byteLength === key.byteLength
    ? key.buffer
    : key.buffer.slice(key.byteOffset, key.byteOffset + key.byteLength);
}

module.exports = { derive, asBuffer, asArrayBuffer };
