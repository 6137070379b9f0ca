'use strict';
// postRecords()'s `lengths`, read once at the call: one length for every
// record, or each record's own (an Array or a Uint32Array), into the
// records' offsets. Where they must end (the binary's length) is known
// once the binary is checked: see fitRecords().

const { types } = require('node:util');
const { invalidArgType, outOfRange, makeError } = require('../errors');
const { isPlainArray } = require('../engine/binary');
const { getter } = require('../base/intrinsics');

const isUint32Array = types.isUint32Array;
/** A TypedArray's true length: an own or inherited `length` cannot lie to it. */
const typedArrayLength = getter(Reflect.getPrototypeOf(Uint8Array.prototype), 'length');
const Float64ArrayCtor = Float64Array;
const MAX_LENGTH = 2 ** 32 - 1;

/**
 * The records' lengths as given: `fixed`, every record's length (0: they
 * have lengths of their own), or `offsets`, record `i` from `offsets[i]`
 * to `offsets[i + 1]` (`count + 1` of them).
 */
class Lengths {
  constructor(fixed, offsets, count) {
    this.fixed = fixed;
    this.offsets = offsets;
    this.count = count;
  }
}

/** Reads `lengths` (user code may run: an Array's getters, each once). */
function recordLengths(lengths) {
  if (typeof lengths === 'number') {
    if (!Number.isInteger(lengths) || lengths < 1 || lengths > MAX_LENGTH)
      throw outOfRange('lengths', `an integer >= 1 and <= ${MAX_LENGTH}`, lengths);
    return new Lengths(lengths, undefined, -1);
  }
  const typed = isUint32Array(lengths);
  if (!typed && !isPlainArray(lengths)) {
    throw invalidArgType(
      'lengths',
      'of type number or an instance of Array or Uint32Array',
      lengths,
    );
  }
  const count = typed ? typedArrayLength(lengths) : lengths.length;
  let offsets;
  try {
    offsets = new Float64ArrayCtor(count + 1);
  } catch {
    throw makeError(
      RangeError,
      'ERR_MEMORY_ALLOCATION_FAILED',
      `Failed to allocate the offsets of ${count} records`,
    );
  }
  let at = 0;
  for (let i = 0; i < count; i++) {
    const length = lengths[i];
    if (!typed) {
      if (typeof length !== 'number')
        throw invalidArgType(`lengths[${i}]`, 'of type number', length);
      if (!Number.isInteger(length) || length < 0 || length > MAX_LENGTH)
        throw outOfRange(`lengths[${i}]`, `an integer >= 0 and <= ${MAX_LENGTH}`, length);
    }
    at += length;
    offsets[i + 1] = at;
  }
  return new Lengths(0, offsets, count);
}

/**
 * How many records `lengths` cuts a binary of `bytes` bytes into. Throws
 * when the last fixed-length record would be short (never dropped) or a
 * record would end past the binary, naming the first that would.
 * @param {Lengths} lengths
 */
function fitRecords(lengths, bytes) {
  const fixed = lengths.fixed;
  if (fixed !== 0) {
    if (bytes % fixed !== 0) {
      throw outOfRange(
        'data',
        `a whole number of ${fixed}-byte records (a short last record is not dropped)`,
        `${bytes} bytes: ${Math.floor(bytes / fixed)} records and ${bytes % fixed} bytes`,
      );
    }
    return bytes / fixed;
  }
  const offsets = lengths.offsets;
  const count = lengths.count;
  if (offsets[count] <= bytes) return count;
  // The first record past the end: offsets ascend.
  let low = 0;
  let high = count - 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (offsets[mid + 1] > bytes) high = mid;
    else low = mid + 1;
  }
  throw outOfRange(
    `lengths[${low}]`,
    `a length that ends within the data's ${bytes} bytes`,
    `${offsets[low + 1] - offsets[low]} (bytes ${offsets[low]} to ${offsets[low + 1]})`,
  );
}

/**
 * Every one of `count` records within what a task of the kernel takes
 * (`bounds`: the engine's boundsOf(), its least length and maxInputBytes),
 * the first one outside named.
 * @param {Lengths} lengths
 * @param {import('../engine/binary').Bounds} bounds
 */
function checkRecordBounds(lengths, count, bounds) {
  const { min, max } = bounds;
  if (min === 0 && max === Infinity) return;
  const check = (name, length) => {
    if (length < min) throw outOfRange(name, bounds.least, length);
    if (length > max) throw outOfRange(name, `at most maxInputBytes (${max})`, length);
  };
  if (lengths.fixed !== 0) {
    if (count > 0) check('lengths', lengths.fixed);
    return;
  }
  const offsets = lengths.offsets;
  for (let i = 0; i < count; i++) check(`lengths[${i}]`, offsets[i + 1] - offsets[i]);
}

module.exports = { recordLengths, fitRecords, checkRecordBounds, Lengths };
