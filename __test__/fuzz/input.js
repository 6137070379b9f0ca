#!/usr/bin/env node
'use strict';
// A seeded property test of post()'s input path, run as its own process so
// that a crash shows up as a failed run instead of killing the test runner.
//
//   node __test__/fuzz/input.js [--seconds 3] [--seed N]
//
// Each case builds a random input: binaries of every kind (Buffers, views at
// offsets, DataViews, ArrayBuffers, SharedArrayBuffers, growable ones, empty
// ones), Arrays of them, sparse Arrays, Arrays with getter elements, Proxies,
// detached and resizable buffers, non-binaries, Buffers with a lying own
// `byteLength`, messages with a `data` property or a custom `select`. The
// oracle: a case with an invalid part must throw a typed error
// synchronously; any other case must settle with the digest of what was
// there when post() was called, whatever is done to the caller's Array
// afterwards (cleared, elements replaced, garbage collected) and each getter
// must have run exactly once. Posts overlap (up to 64 in flight, some pools
// with a small queue in 'wait' mode) so that mutation and GC happen while
// tasks are queued, waiting or running. One case in four is a postMany()
// of several such inputs, its results as an Array or packed into one
// Buffer (`packed: true`, several messages per native task): the same
// oracle per message, and the first invalid one (a type error before a
// readability error) named by the error. One case in eight is a
// postRecords() of one such input cut into records: lengths that fit,
// that lie (past the end, negative, not numbers), a huge Array of them,
// changed after the call, or the binary detached after the call (its
// memory kept alive by the transfer's new owner, as a caller must): the
// digests of the records as they were, or the typed error.

const crypto = require('node:crypto');
const { types } = require('node:util');
const v8 = require('node:v8');
const vm = require('node:vm');
const { Pool } = require('../..');
const { seeded } = require('./seeded');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const { SECONDS, SEED, int, pick, chance } = seeded();

const SIZES = [0, 1, 3, 8, 64, 1000, 4096, 65536, 200_000];
const KERNELS = ['sha256', 'md5', 'sha1'];

function randomBytes(n) {
  return n === 0 ? Buffer.alloc(0) : crypto.randomBytes(n);
}

/** Bytes a binary shows right now (a copy). */
function bytesOf(b) {
  if (ArrayBuffer.isView(b))
    return Buffer.from(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
  return Buffer.from(new Uint8Array(b));
}

function detach(ab) {
  structuredClone(ab, { transfer: [ab] });
}

/**
 * A random part: `{ value, valid, bytes }` where `bytes` is what a post reads
 * (valid parts only) and `expect` names the error class of an invalid one.
 */
function randomPart() {
  const n = pick(SIZES);
  // One part in ten is invalid (cases 8 to 11), so most Arrays are valid.
  switch (chance(0.1) ? 8 + int(4) : pick([0, 1, 2, 3, 4, 5, 6, 7, 12, 13])) {
    case 0:
    case 1: {
      const b = randomBytes(n);
      return { value: b, bytes: Buffer.from(b) };
    }
    case 2: {
      // A view at an offset of a larger buffer.
      const whole = randomBytes(n + 16);
      const off = int(16);
      const len = int(n + 16 - off + 1);
      const v = whole.subarray(off, off + len);
      return { value: v, bytes: Buffer.from(v) };
    }
    case 3: {
      const whole = randomBytes(8 * (n + 2));
      const type = pick([Uint16Array, Int32Array, Float64Array, BigInt64Array]);
      const count = Math.floor(n / type.BYTES_PER_ELEMENT);
      const v = new type(whole.buffer, whole.byteOffset + type.BYTES_PER_ELEMENT, count);
      return { value: v, bytes: bytesOf(v) };
    }
    case 4: {
      const whole = randomBytes(n + 8);
      const off = int(8);
      const v = new DataView(whole.buffer, whole.byteOffset + off, n);
      return { value: v, bytes: bytesOf(v) };
    }
    case 5: {
      const ab = new ArrayBuffer(n);
      new Uint8Array(ab).set(randomBytes(n));
      return { value: ab, bytes: bytesOf(ab) };
    }
    case 6: {
      const sab = new SharedArrayBuffer(n);
      new Uint8Array(sab).set(randomBytes(n));
      return { value: chance(0.5) ? sab : new Uint8Array(sab), bytes: bytesOf(sab) };
    }
    case 7: {
      // A growable SharedArrayBuffer can only grow: it is read in place.
      const sab = new SharedArrayBuffer(n, { maxByteLength: n + 64 });
      new Uint8Array(sab).set(randomBytes(n));
      const v = new Uint8Array(sab, 0, n);
      return { value: v, bytes: bytesOf(v) };
    }
    case 8: {
      // Detached before the post.
      const b = Buffer.alloc(n + 1);
      const value = pick([b, b.buffer, new DataView(b.buffer), new Float64Array(b.buffer, 0, 0)]);
      detach(b.buffer);
      return { value, expect: 'ERR_INVALID_STATE' };
    }
    case 9: {
      // Resizable, in bounds or already shrunk out of bounds.
      const ab = new ArrayBuffer(n + 8, { maxByteLength: 2 * n + 16 });
      const v = new Uint8Array(ab, 4, n);
      if (chance(0.3)) ab.resize(2);
      return { value: pick([ab, v, new DataView(ab)]), expect: 'ERR_INVALID_ARG_VALUE' };
    }
    case 10:
      return { value: new Proxy(randomBytes(n), {}), expect: 'ERR_INVALID_ARG_TYPE' };
    case 11:
      return {
        value: pick(['text', 42, null, undefined, {}, [Buffer.alloc(1)], { byteLength: 4 }]),
        expect: 'ERR_INVALID_ARG_TYPE',
      };
    case 12: {
      // An own `byteLength` that lies: the engine's length counts.
      const b = randomBytes(n);
      Object.defineProperty(b, 'byteLength', { value: 1 });
      return { value: b, bytes: Buffer.from(b.buffer, b.byteOffset, b.length) };
    }
    default: {
      const b = randomBytes(n);
      return { value: new Uint8Array(b.buffer, b.byteOffset, b.length), bytes: Buffer.from(b) };
    }
  }
}

/** A random input: `{ input, parts, expect, getters, after }`. */
function randomInput() {
  const count = 1 + int(5);
  const parts = Array.from({ length: count }, randomPart);
  const single = count === 1 && chance(0.5) && parts[0].expect === undefined;
  if (single) return { input: parts[0].value, parts, getters: [], after: () => {} };
  const array = parts.map((p) => p.value);
  const getters = [];
  let expect;
  // Element getters: the first call's value is what the post reads.
  for (let i = 0; i < array.length; i++) {
    if (parts[i].expect === undefined && chance(0.2)) {
      const first = parts[i].value;
      const g = { calls: 0 };
      getters.push(g);
      Object.defineProperty(array, i, {
        enumerable: true,
        configurable: true,
        get() {
          g.calls++;
          return g.calls === 1 ? first : randomBytes(7);
        },
      });
    }
  }
  if (chance(0.05)) {
    delete array[int(array.length)]; // a hole
    expect = 'ERR_INVALID_ARG_TYPE';
  }
  let input = array;
  if (chance(0.04)) {
    input = new Proxy(array, {});
    expect = 'ERR_INVALID_ARG_TYPE';
  }
  // What the caller does to its Array once post() returned.
  const after = () => {
    switch (int(4)) {
      case 0:
        array.length = 0;
        break;
      case 1:
        for (let i = 0; i < array.length; i++) {
          Object.defineProperty(array, i, {
            value: pick(['x', Buffer.alloc(3), null]),
            writable: true,
            configurable: true,
          });
        }
        break;
      case 2:
        array.push(randomBytes(5));
        for (let i = 0; i < array.length; i += 2) delete array[i];
        break;
      default:
        break;
    }
  };
  return { input, parts, getters, after, expect };
}

/**
 * The error a post of `c` must throw: types are checked while the snapshot
 * is taken (so any non-binary wins), then readability, part by part.
 */
function expectedError(c) {
  if (c.expect !== undefined) return c.expect;
  if (c.parts.some((p) => p.expect === 'ERR_INVALID_ARG_TYPE')) return 'ERR_INVALID_ARG_TYPE';
  return c.parts.find((p) => p.expect !== undefined)?.expect;
}

/** A random input without an invalid part. */
function validInput() {
  for (;;) {
    const c = randomInput();
    if (expectedError(c) === undefined) return c;
  }
}

/** The digest of a case's parts with `kernel`. */
function digestOf(c, kernel) {
  const digest = crypto.createHash(kernel);
  for (const p of c.parts) digest.update(p.bytes);
  return digest.digest();
}

/**
 * One postMany() of random inputs on `pool`, packed or not: checks what it
 * throws, or returns the promise of its checked results.
 */
function batchCase({ pool, wrap }, stats, fail) {
  // Valid messages, and now and then one that may not be.
  const cases = Array.from({ length: 1 + int(pick([3, 40, 300])) }, validInput);
  if (chance(0.3)) cases[int(cases.length)] = randomInput();
  const kernel = pick(KERNELS);
  const packed = chance(0.5);
  const id = stats.cases++;
  const wanted = cases.map(expectedError);
  // Every message's type is checked before any is read.
  let first = wanted.findIndex((w) => w === 'ERR_INVALID_ARG_TYPE');
  if (first < 0) first = wanted.findIndex((w) => w !== undefined);
  let promise;
  try {
    promise = pool.postMany(
      cases.map((c) => wrap(c.input)),
      packed ? { kernel, packed } : { kernel },
    );
  } catch (err) {
    stats.threw++;
    if (first < 0) fail(`batch ${id}: threw ${err.code} for valid inputs: ${err.message}`);
    else if (err.code !== wanted[first] || !(err instanceof TypeError))
      fail(`batch ${id}: threw ${err.name} ${err.code}, wanted TypeError ${wanted[first]}`);
    else if (!err.message.includes(`[${first}]`))
      fail(`batch ${id}: the error names another message than [${first}]: ${err.message}`);
    return undefined;
  }
  if (first >= 0) fail(`batch ${id}: accepted an input with an invalid part (${wanted[first]})`);
  const want = cases.map((c) => digestOf(c, kernel));
  for (const c of cases) {
    for (const g of c.getters)
      if (g.calls !== 1) fail(`batch ${id}: a getter ran ${g.calls} times during postMany()`);
    c.after();
  }
  return promise.then(
    (results) => {
      stats.resolved++;
      const got = packed
        ? want.map((w, i) => results.subarray(i * w.length, (i + 1) * w.length).toString('hex'))
        : results;
      if (packed && results.length !== want.length * want[0].length)
        fail(`batch ${id}: ${results.length} packed bytes for ${want.length} digests`);
      want.forEach((w, i) => {
        if (got[i] !== w.toString('hex'))
          fail(`batch ${id}: result [${i}] ${got[i]}, wanted ${w.toString('hex')}`);
      });
    },
    (err) => fail(`batch ${id}: rejected with ${err.code}: ${err.message}`),
  );
}

/** Random lengths for `total` bytes: `{ lengths, expect, records }` (the records' byte ranges). */
function randomLengths(total) {
  if (chance(0.25)) {
    // One length for all: a divisor of the total, or not.
    const fixed = total === 0 ? 1 + int(64) : chance(0.8) ? pickDivisor(total) : 1 + int(total + 2);
    const count = total % fixed === 0 ? total / fixed : -1;
    const records =
      count < 0 ? [] : Array.from({ length: count }, (_, i) => [i * fixed, (i + 1) * fixed]);
    return { lengths: fixed, expect: count < 0 ? 'ERR_OUT_OF_RANGE' : undefined, records };
  }
  const lengths = [];
  let at = 0;
  // A huge Array now and then: a great many short or empty records.
  const count = chance(0.03) ? 50_000 + int(150_000) : int(300);
  for (let i = 0; i < count; i++) {
    const length = chance(0.3) ? 0 : int(Math.max(1, Math.min(200, total - at + 1)));
    if (at + length > total) break;
    lengths.push(length);
    at += length;
  }
  let expect;
  if (chance(0.1)) {
    lengths.push(total - at + 1 + int(10)); // past the end
    expect = 'ERR_OUT_OF_RANGE';
  } else if (chance(0.05)) {
    lengths[int(lengths.length + 1)] = pick([-1, 0.5, '3', null, 2 ** 32]);
    expect = 'typed';
  }
  const records = [];
  let from = 0;
  for (const length of lengths) records.push([from, (from += length)]);
  const typed = expect === undefined && chance(0.3);
  return { lengths: typed ? Uint32Array.from(lengths) : lengths, expect, records };
}

function pickDivisor(n) {
  const divisors = [];
  for (let d = 1; d <= Math.min(n, 4096); d++) if (n % d === 0) divisors.push(d);
  return pick(divisors);
}

/** One postRecords() of a random input cut into records: checks what it throws, or returns the checked promise. */
function recordsCase(pools, stats, fail) {
  const c = chance(0.9) ? validInput() : randomInput();
  const wanted = expectedError(c);
  const whole = wanted === undefined ? Buffer.concat(c.parts.map((p) => p.bytes)) : Buffer.alloc(0);
  const cuts = randomLengths(whole.length);
  const kernel = pick(KERNELS);
  const packed = chance(0.5);
  const { pool } = pick(pools.slice(0, 2));
  const id = stats.cases++;
  let promise;
  try {
    promise = pool.postRecords(c.input, cuts.lengths, packed ? { kernel, packed } : { kernel });
  } catch (err) {
    stats.threw++;
    // The binary's type first, then the lengths', then its readability,
    // then where the records end.
    const want =
      wanted === 'ERR_INVALID_ARG_TYPE' || cuts.expect !== 'typed'
        ? (wanted ?? cuts.expect)
        : 'typed';
    const ok =
      want === 'typed' ? /^ERR_(INVALID_ARG_TYPE|OUT_OF_RANGE)$/.test(err.code) : err.code === want;
    if (want === undefined)
      fail(`records ${id}: threw ${err.code} for valid records: ${err.message}`);
    else if (!ok) fail(`records ${id}: threw ${err.code}, wanted ${want}: ${err.message}`);
    return undefined;
  }
  if (wanted !== undefined || cuts.expect !== undefined)
    fail(`records ${id}: accepted ${wanted ?? cuts.expect} input or lengths`);
  for (const g of c.getters)
    if (g.calls !== 1) fail(`records ${id}: a getter ran ${g.calls} times during postRecords()`);
  const want = cuts.records.map(([from, to]) =>
    crypto.createHash(kernel).update(whole.subarray(from, to)).digest('hex'),
  );
  // What the caller does afterwards: changes its Array and lengths, or
  // detaches the binary (keeping the memory alive, as a caller must while
  // it is read).
  c.after();
  if (typeof cuts.lengths !== 'number' && chance(0.3)) cuts.lengths.fill(7);
  let moved;
  const buffer = ArrayBuffer.isView(c.input) ? c.input.buffer : c.input;
  if (types.isArrayBuffer(buffer) && chance(0.2))
    moved = structuredClone(buffer, { transfer: [buffer] });
  return promise.then(
    (results) => {
      stats.resolved++;
      const size = want.length === 0 ? 0 : want[0].length / 2;
      const got = packed
        ? want.map((_, i) => results.subarray(i * size, (i + 1) * size).toString('hex'))
        : results;
      if (results.length !== (packed ? want.length * size : want.length))
        fail(`records ${id}: ${results.length} results for ${want.length} records`);
      want.forEach((w, i) => {
        if (got[i] !== w) fail(`records ${id}: result [${i}] ${got[i]}, wanted ${w}`);
      });
      return moved;
    },
    (err) => {
      // Only a binary detached after the call may fail it, as post()'s would.
      if (moved === undefined || err.code !== 'ERR_INVALID_STATE' || !/"data"/.test(err.message))
        fail(`records ${id}: rejected with ${err.code}: ${err.message}`);
      return moved;
    },
  );
}

async function main() {
  const pools = [
    { pool: new Pool({ maxThreads: 2, encoding: 'hex' }), wrap: (x) => x },
    {
      pool: new Pool({ maxThreads: 2, encoding: 'hex', maxQueue: 4, queueFull: 'wait' }),
      wrap: (x) => ({ data: x }),
    },
    {
      pool: new Pool({ maxThreads: 1, encoding: 'hex', select: (m) => m.payload }),
      wrap: (x) => ({ payload: x }),
    },
  ];
  const deadline = Date.now() + SECONDS * 1000;
  const stats = { cases: 0, resolved: 0, threw: 0 };
  const inflight = new Set();
  const failures = [];
  const fail = (what) => {
    if (failures.length < 10) failures.push(what);
  };
  while (Date.now() < deadline && failures.length === 0) {
    if (chance(0.125)) {
      const settled = recordsCase(pools, stats, fail);
      if (settled !== undefined) {
        inflight.add(settled);
        settled.then(() => inflight.delete(settled));
      }
      if (inflight.size >= 64) await Promise.race(inflight);
      continue;
    }
    if (chance(0.25)) {
      const settled = batchCase(pick(pools), stats, fail);
      if (settled !== undefined) {
        inflight.add(settled);
        settled.then(() => inflight.delete(settled));
      }
      if (inflight.size >= 64) await Promise.race(inflight);
      continue;
    }
    const c = randomInput();
    const kernel = pick(KERNELS);
    const { pool, wrap } = pick(pools);
    const id = stats.cases++;
    const wanted = expectedError(c);
    let promise;
    try {
      promise = pool.post(wrap(c.input), { kernel });
    } catch (err) {
      stats.threw++;
      if (wanted === undefined)
        fail(`case ${id}: threw ${err.code} for a valid input: ${err.message}`);
      else if (err.code !== wanted || !(err instanceof TypeError))
        fail(`case ${id}: threw ${err.name} ${err.code}, wanted TypeError ${wanted}`);
      continue;
    }
    if (wanted !== undefined)
      fail(`case ${id}: accepted an input with an invalid part (${wanted})`);
    for (const g of c.getters)
      if (g.calls !== 1) fail(`case ${id}: a getter ran ${g.calls} times during post()`);
    const digest = crypto.createHash(kernel);
    for (const p of c.parts) digest.update(p.bytes);
    const want = digest.digest('hex');
    c.after();
    const settled = promise.then(
      ({ result }) => {
        stats.resolved++;
        if (result !== want) fail(`case ${id}: digest ${result}, wanted ${want}`);
      },
      (err) => fail(`case ${id}: rejected with ${err.code}: ${err.message}`),
    );
    inflight.add(settled);
    settled.then(() => inflight.delete(settled));
    for (const g of c.getters) if (g.calls !== 1) fail(`case ${id}: a getter ran ${g.calls} times`);
    if (chance(0.02)) gc();
    if (inflight.size >= 64) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  gc();
  for (const { pool } of pools) await pool.close();
  console.log(
    `input fuzz: ${stats.cases} cases, ${stats.resolved} resolved, ${stats.threw} threw; seed ${SEED}`,
  );
  if (failures.length > 0) {
    console.error(failures.join('\n'));
    console.error(`reproduce: node __test__/fuzz/input.js --seed ${SEED} --seconds ${SECONDS}`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
