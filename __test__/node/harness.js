'use strict';
// The harness of Node's own zlib tests (nodejs/node test/parallel/
// test-zlib-*.js), adapted: each check runs twice in the same test, first
// against node:zlib itself (the control), then against
// `@tidepool-rs/pool/zlib` (required by the package's own name, through its
// `exports`), with the same assertions. `common` stands in for Node's
// test/common: mustCall() and its kin are counted per run and checked when
// the run ends, so a callback that never came fails the run that owed it.

const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { inspect } = require('node:util');
const ours = require('@tidepool-rs/pool/zlib');

/** Node's test/common, the parts the zlib tests use; one per run. */
class Common {
  #owed = [];

  /** `fn` (or a no-op) that must be called exactly `times` times in this run. */
  mustCall(fn = () => {}, times = 1) {
    const entry = { calls: 0, times, stack: new Error('mustCall').stack };
    this.#owed.push(entry);
    return function (...args) {
      entry.calls++;
      return fn.apply(this, args);
    };
  }

  /** mustCall() of a callback whose first argument must be null/undefined. */
  mustSucceed(fn = () => {}, times = 1) {
    return this.mustCall(function (err, ...args) {
      assert.ifError(err);
      return fn.apply(this, args);
    }, times);
  }

  /** A function that fails the run when called. */
  mustNotCall(what = 'mustNotCall') {
    return () => assert.fail(`${what} was called`);
  }

  /** mustCall() of a callback whose first argument matches `expected` (assert.throws' forms). */
  expectsError(expected, times = 1) {
    return this.mustCall((err) => {
      assert.throws(() => {
        throw err;
      }, expected);
    }, times);
  }

  /** Node's getBufferSources(buf): the same bytes as every kind of ArrayBufferView and ArrayBuffer. */
  getBufferSources(buf) {
    return [...this.getArrayBufferViews(buf), new Uint8Array(buf).buffer];
  }

  /**
   * Node's invalidArgTypeHelper(input): the " Received ..." that ends an
   * ERR_INVALID_ARG_TYPE message for `input`.
   */
  invalidArgTypeHelper(input) {
    if (input === null || input === undefined) return ` Received ${input}`;
    if (typeof input === 'function') return ` Received function ${input.name}`;
    if (typeof input === 'object') {
      const name = input.constructor?.name;
      return name
        ? ` Received an instance of ${name}`
        : ` Received ${inspect(input, { depth: -1 })}`;
    }
    const shown = inspect(input, { colors: false });
    return ` Received type ${typeof input} (${shown.length > 28 ? `${shown.slice(0, 25)}...` : shown})`;
  }

  /** Node's getArrayBufferViews(buf): the same bytes as each kind of view. */
  getArrayBufferViews(buf) {
    const { buffer, byteOffset, byteLength } = buf;
    const out = [];
    for (const Type of [
      Int8Array,
      Uint8Array,
      Uint8ClampedArray,
      Int16Array,
      Uint16Array,
      Int32Array,
      Uint32Array,
      Float32Array,
      Float64Array,
      BigInt64Array,
      BigUint64Array,
      DataView,
    ]) {
      const { BYTES_PER_ELEMENT = 1 } = Type;
      if (byteLength % BYTES_PER_ELEMENT === 0)
        out.push(new Type(buffer, byteOffset, byteLength / BYTES_PER_ELEMENT));
    }
    return out;
  }

  /** Fails unless every mustCall() of the run was called as often as it must. */
  verify(who) {
    for (const { calls, times, stack } of this.#owed) {
      assert.equal(
        calls,
        times,
        `${who}: a mustCall(${times}) was called ${calls} times\n${stack}`,
      );
    }
  }
}

/**
 * The tasks the module's pool has run: those completed, or with `work:
 * 'any'` (a check whose only work fails, such as a decoder given bad
 * input) those that failed too.
 */
function tasksRun(work) {
  const { completed, failed } = ours.pool.stats();
  return work === 'any' ? completed + failed : completed;
}

/**
 * Runs `check(zlib, common, who)` against node:zlib, then against
 * `@tidepool-rs/pool/zlib`; each run may return a promise, and its
 * mustCall()s are checked when it settles and `settle` ms more have passed
 * (for callbacks an upstream test leaves to process exit). `work`: the
 * tidepool run must have run tasks on the module's pool (its stats say so;
 * 'any': tasks that failed count too; false: no check).
 */
async function both(check, { settle = 0, work = true } = {}) {
  for (const [zlib, who] of [
    [nodeZlib, 'node:zlib'],
    [ours, 'tidepool'],
  ]) {
    const common = new Common();
    const before = zlib === ours ? tasksRun(work) : 0;
    await check(zlib, common, who);
    if (settle > 0) await new Promise((resolve) => setTimeout(resolve, settle));
    common.verify(who);
    if (zlib === ours && work) {
      assert.ok(tasksRun(work) > before, `${who}: the pool ran no task`);
    }
  }
}

/** A promise of `emitter`'s `event`, or of its 'error' (rejected). */
function event(emitter, name) {
  return new Promise((resolve, reject) => {
    emitter.once(name, resolve);
    if (name !== 'error') emitter.once('error', reject);
  });
}

module.exports = { both, event, Common };
