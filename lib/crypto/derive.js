'use strict';
// A planned derivation (./args.js) run as a task of the pool, its result
// handed to the callback as node:crypto hands its own: from a tick of its
// own (a throw there is the process's uncaught exception, not a rejected
// promise), in the async context of the call (AsyncLocalStorage and
// domains follow the promise the task is, then the tick).

const { ONE_SHOT } = require('../symbols');
const { abortError } = require('../errors');
const { isAborted, signalReason, addListener, removeListener, ONCE } = require('../engine/signals');

const nextTick = process.nextTick;

/**
 * Runs `plan` on `pool`, stopped by `signal` (undefined: none): the
 * Promise of the derived bytes, a Buffer. The copy of the secret is wiped
 * once the task is over, whichever way it ended; a pool that cannot take
 * it (closed, full) rejects.
 */
function runPlan(pool, plan, signal) {
  const { kernel, secret, params, scratch } = plan;
  let task;
  try {
    task = pool[ONE_SHOT](kernel, params, undefined, secret, signal);
  } catch (err) {
    secret.fill(0);
    return Promise.reject(err);
  } finally {
    // Native code copied the parameters at the call.
    if (scratch !== undefined) for (const bytes of scratch) bytes.fill(0);
  }
  // Wiped once no thread reads it, whichever way the task ended.
  const wipe = () => secret.fill(0);
  task.then(wipe, wipe);
  if (signal === undefined) return task;
  // A signal that fires while the task runs settles the call at once: a
  // hash the kernel cannot stop (Argon2, bcrypt, scrypt) runs to its end
  // on its thread, and its result is dropped.
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signalReason(signal)));
    addListener(signal, 'abort', onAbort, ONCE);
    const done = () => removeListener(signal, 'abort', onAbort);
    task.then(
      (key) => {
        done();
        if (isAborted(signal)) {
          key.fill(0);
          onAbort();
        } else resolve(key);
      },
      (err) => {
        done();
        reject(err);
      },
    );
  });
}

/**
 * Runs `plan` on `pool` and calls `callback(err)` or `callback(null,
 * shape(key))`, as node:crypto calls back: a failed task (a closed pool)
 * is the callback's error, as a failed job's is node:crypto's.
 */
function derive(pool, plan, callback, shape) {
  runPlan(pool, plan, undefined).then(
    (key) => nextTick(callback, null, shape(key)),
    (err) => nextTick(callback, err),
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

module.exports = { runPlan, derive, asBuffer, asArrayBuffer };
