'use strict';
// Waiting in the tests. Every wait has a deadline: a condition that never
// comes true fails its test with a message naming what it waited for,
// instead of hanging the run. And a thread a test needs busy is held busy
// until the test lets it go, instead of by a task that may have ended
// before the test looked.

const { setTimeout: sleep } = require('node:timers/promises');
const { micros } = require('..');

/**
 * Calls `predicate` (it may return a promise) every `interval` ms until it
 * returns something truthy, and resolves with that. Rejects after
 * `timeoutMs` with an Error that names `what` (and says where things stood,
 * from `state()`, if given). A throw of `predicate` rejects at once.
 */
async function waitFor(predicate, { timeoutMs = 10_000, what, interval = 5, state } = {}) {
  if (typeof what !== 'string' || what === '')
    throw new TypeError('waitFor: say `what` is waited for');
  const started = Date.now();
  for (;;) {
    const value = await predicate();
    if (value) return value;
    const waited = Date.now() - started;
    if (waited >= timeoutMs) {
      const where = state === undefined ? '' : ` (${state()})`;
      throw new Error(`timed out after ${waited} ms waiting for ${what}${where}`);
    }
    await sleep(interval);
  }
}

/** What `stats()` says about threads and queue, for waitFor's messages. */
const poolState = (pool) => () => {
  const s = pool.stats();
  return `threads ${s.threads}, busy ${s.busyThreads}, queued ${s.queued}, pending ${s.pending}, completed ${s.completed}, failed ${s.failed}`;
};

/** A promise's outcome, as Promise.allSettled gives it; never rejects. */
const settle = (p) =>
  p.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason) => ({ status: 'rejected', reason }),
  );

/**
 * Holds a thread of `pool` busy for as long as the test needs: posts a
 * `sleep` task of 60 s (far longer than any test holds it, short enough
 * that a test that fails to let it go only waits that long) with its own
 * AbortSignal, and waits until a thread runs it: nothing queued and a
 * thread busy, which says so while the pool has nothing else to do.
 * `release()` aborts it: it stops within a millisecond's slice and rejects
 * with an AbortError (and counts as failed). `settled` is its outcome (see
 * settle()). Release it in a `finally`: close() waits for running tasks.
 */
async function holdThread(pool, { what = 'a thread to take the blocking task' } = {}) {
  const controller = new AbortController();
  const settled = settle(
    pool.post(micros(60_000_000), { kernel: 'sleep', signal: controller.signal }),
  );
  try {
    await waitFor(
      () => {
        const s = pool.stats();
        return s.queued === 0 && s.busyThreads >= 1;
      },
      { what, state: poolState(pool) },
    );
  } catch (err) {
    controller.abort();
    throw err;
  }
  return { settled, release: () => controller.abort() };
}

/** Waits until every task of `pool` has settled; returns its stats then. */
async function everySettled(pool) {
  await waitFor(() => pool.stats().pending === 0, {
    what: 'every task of the pool to settle',
    state: poolState(pool),
  });
  return pool.stats();
}

module.exports = { waitFor, poolState, settle, holdThread, everySettled };
