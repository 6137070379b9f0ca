'use strict';
// What a post reads, decided when post() is called.
//
// Rust threads read a task's binaries in place, long after post() returned,
// so the caller's objects must not be consulted again: `snapshot` reads an
// Array of binaries exactly once (element getters run once, holes and
// non-binaries throw) into an Array of our own that the pool keeps
// reachable until the task settles, so nothing the caller does to its array
// afterwards changes what is hashed or frees what is read.
//
// An input is asked about once in each of three phases, each with one name:
// - `snapshot(value, name)`, when the call is made (user code may run: an
//   Array's getters);
// - `checkInput(data, name, bounds)`, right before native code reads it
//   (no user code runs): with the engine's own getters (an own `byteLength`
//   property on a Buffer cannot lie to it), every binary can be read in
//   place (not detached, not backed by a resizable ArrayBuffer) and the
//   whole is within `bounds`;
// - `refusalOf(err, name)`, when native code refused it after all (a
//   binary detached between the check and the read): the refusal says
//   where, and this gives post()'s own error for that place.
//
// Every function, constructor and getter used here is captured when this
// module loads, so code that later replaces `ArrayBuffer.isView`,
// `Array.isArray`, `Uint8Array`, `WeakRef` or a prototype getter cannot
// change what is checked.

const { types } = require('node:util');
const {
  invalidArgType,
  invalidArgValue,
  invalidState,
  outOfRange,
  describe,
  label,
} = require('../errors');
const { ownArray } = require('../base/own-array');
const { uncurryThis, getter } = require('../base/intrinsics');

const { isAnyArrayBuffer, isSharedArrayBuffer, isProxy } = types;
const isView = ArrayBuffer.isView;
const Uint8ArrayCtor = Uint8Array;
const WeakRefCtor = WeakRef;
const isArray = Array.isArray;
const getPrototypeOf = Reflect.getPrototypeOf;
const deref = uncurryThis(WeakRef.prototype.deref);

const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
/** The TypedArray's type name, `undefined` for anything that is not a TypedArray. */
const typedArrayTag = getter(TypedArrayPrototype, Symbol.toStringTag);
const typedArrayBuffer = getter(TypedArrayPrototype, 'buffer');
const typedArrayByteLength = getter(TypedArrayPrototype, 'byteLength');
const typedArrayByteOffset = getter(TypedArrayPrototype, 'byteOffset');
const dataViewBuffer = getter(DataView.prototype, 'buffer');
const dataViewByteOffset = getter(DataView.prototype, 'byteOffset');
const dataViewByteLength = getter(DataView.prototype, 'byteLength');
const arrayBufferByteLength = getter(ArrayBuffer.prototype, 'byteLength');
// Missing on older engines (resizable buffers came with V8 11.1, `detached`
// with 11.4): there, no ArrayBuffer is resizable and detachment is found
// the old way.
const arrayBufferResizable = getter(ArrayBuffer.prototype, 'resizable');
const arrayBufferDetached = getter(ArrayBuffer.prototype, 'detached');

const BINARY = 'a Buffer, TypedArray, DataView, ArrayBuffer or SharedArrayBuffer';
const BINARY_TYPES = `${BINARY}, or an Array of those`;

/**
 * How a rejected value is described; a Proxy and a string say what to pass
 * instead (a string's bytes depend on an encoding the caller has not said).
 */
function received(value) {
  if (isProxy(value))
    return 'a Proxy (binaries are read in place, not through a Proxy: pass its target)';
  if (typeof value === 'string') {
    return `${describe(value)}: pass Buffer.from(string) for its UTF-8 bytes (createHash(kernel).update(string) hashes text)`;
  }
  return describe(value);
}

/** A binary as it will be handed to native code (a SharedArrayBuffer through a view of it). */
function asReadable(value) {
  return isSharedArrayBuffer(value) ? new Uint8ArrayCtor(value) : value;
}

/**
 * What a post reads: `value` itself if it is one binary, or a new Array with
 * each element of the Array `value` read exactly once. Throws
 * `ERR_INVALID_ARG_TYPE` for anything else (a Proxy included).
 */
function snapshot(value, name) {
  // A TypedArray (a Buffer) first: the common case, and the cheapest test.
  if (typedArrayTag(value) !== undefined || isView(value)) return value;
  if (isAnyArrayBuffer(value)) return asReadable(value);
  if (!isArray(value) || isProxy(value))
    throw invalidArgType(name, BINARY_TYPES, value, received(value));
  // Own elements only (see own-array.js): native code reads this Array, and
  // no accessor on Array.prototype may stand between it and the binaries.
  return ownArray(value.length, (i) => {
    const part = value[i];
    if (isView(part)) return part;
    if (isAnyArrayBuffer(part)) return asReadable(part);
    throw invalidArgType(place(name, i), BINARY, part, received(part));
  });
}

/** True for an Array that is not a Proxy (one whose reads are its own). */
function isPlainArray(value) {
  return isArray(value) && !isProxy(value);
}

/** True if `value` is something `snapshot` accepts at the top level. */
function isBinaryInput(value) {
  return (
    typedArrayTag(value) !== undefined || isView(value) || isAnyArrayBuffer(value) || isArray(value)
  );
}

/**
 * The SharedArrayBuffer of the last shared view checked, held weakly. The
 * ArrayBuffer `resizable` getter is exact but refuses a SharedArrayBuffer
 * with an exception (~10 µs); every cheap way to tell the two apart first
 * (the prototype, `constructor`) either costs as much as the rest of the
 * check on every post or can be faked. Posts of views of one shared buffer
 * pay the exception once.
 */
let lastShared;

/** Resizable non-shared memory can shrink under a running task. */
function isResizable(buffer) {
  if (arrayBufferResizable === undefined) return false;
  if (lastShared !== undefined && deref(lastShared) === buffer) return false;
  try {
    return arrayBufferResizable(buffer);
  } catch {
    // Only a SharedArrayBuffer gets here (`buffer` came from an engine
    // getter): it can only grow.
    lastShared = new WeakRefCtor(buffer);
    return false;
  }
}

function isDetached(buffer) {
  if (isSharedArrayBuffer(buffer)) return false;
  if (arrayBufferDetached !== undefined) return arrayBufferDetached(buffer);
  if (arrayBufferByteLength(buffer) !== 0) return false;
  try {
    new Uint8ArrayCtor(buffer);
    return false;
  } catch {
    return true;
  }
}

const DETACHED =
  'is backed by a detached ArrayBuffer (transferred or detached before the post), so there is nothing to read';
const RESIZABLE =
  'is backed by a resizable ArrayBuffer, which could shrink while a thread reads it: ' +
  'pass a copy (Buffer.from(view)) or a fixed-length ArrayBuffer';

/** How errors name a binary: `name`, or `name[index]` inside an Array. */
function place(name, index) {
  return index < 0 ? name : `${label(name)}[${index}]`;
}

function refuseResizable(buffer, name, index) {
  if (isResizable(buffer)) throw invalidArgValue(place(name, index), RESIZABLE);
}

/**
 * Byte length of one binary of a snapshot, after checking it can be read in
 * place. `index` is its place in an Array (-1: not in one).
 */
function readableLength(value, name, index) {
  if (typedArrayTag(value) !== undefined) {
    const buffer = typedArrayBuffer(value);
    refuseResizable(buffer, name, index);
    const length = typedArrayByteLength(value);
    if (length === 0 && isDetached(buffer)) throw invalidState(place(name, index), DETACHED);
    return length;
  }
  if (isView(value)) {
    const buffer = dataViewBuffer(value);
    refuseResizable(buffer, name, index);
    if (isDetached(buffer)) throw invalidState(place(name, index), DETACHED);
    return dataViewByteLength(value);
  }
  // An ArrayBuffer (snapshot wrapped SharedArrayBuffers in a view).
  refuseResizable(value, name, index);
  const length = arrayBufferByteLength(value);
  if (length === 0 && isDetached(value)) throw invalidState(place(name, index), DETACHED);
  return length;
}

/** Total byte length of a snapshot, each binary checked to be readable in place. */
function readableBytes(data, name) {
  if (!isArray(data)) return readableLength(data, name, -1);
  let total = 0;
  for (let i = 0; i < data.length; i++) total += readableLength(data[i], name, i);
  return total;
}

/**
 * What checkInput asks of an input besides being readable in place: at
 * least `min` bytes (`least` says so in the error), at most `max` (the
 * pool's maxInputBytes), and whether the caller wants the byte length
 * (`measure`).
 */
class Bounds {
  constructor(min, least, max, measure) {
    this.min = min;
    this.least = least;
    this.max = max;
    this.measure = measure;
  }
}

/** Any length, measured: a stream's writes, a one-shot's `buffer`, a file's path. */
const ANY_LENGTH = new Bounds(0, '', Infinity, true);

/**
 * The check of a snapshot right before native code reads it. Returns its
 * byte length, or -1 when it was not measured: a lone TypedArray with no
 * bounds to meet and no length wanted is checked only for what native
 * code cannot see (resizability); native code reads the true length as it
 * takes the input and refuses a detached binary there (see refusalOf), so
 * a post pays two engine getters here instead of four.
 *
 * Throws `ERR_INVALID_STATE` (TypeError) for a detached binary,
 * `ERR_INVALID_ARG_VALUE` for one over a resizable ArrayBuffer, and
 * `ERR_OUT_OF_RANGE` for a length outside `bounds`.
 * @param {Bounds} bounds
 */
function checkInput(data, name, bounds) {
  if (
    !bounds.measure &&
    bounds.min === 0 &&
    bounds.max === Infinity &&
    typedArrayTag(data) !== undefined
  ) {
    refuseResizable(typedArrayBuffer(data), name, -1);
    return -1;
  }
  const bytes = readableBytes(data, name);
  if (bytes < bounds.min) throw outOfRange(name, bounds.least, `${bytes} bytes`);
  if (bytes > bounds.max)
    throw outOfRange(name, `at most maxInputBytes (${bounds.max}) bytes`, `${bytes} bytes`);
  return bytes;
}

/**
 * The error a native refusal of an input stands for. A detached binary
 * (the refusal's `part` says where in an Array: -1, not in one) gets the
 * error checkInput gives, named by `name`; any other refusal is itself.
 */
function refusalOf(err, name) {
  if (err === null || typeof err !== 'object' || err.code !== 'ERR_INVALID_STATE') return err;
  const part = err.part;
  return invalidState(place(name, typeof part === 'number' ? part : -1), DETACHED);
}

/** The byte length of a TypedArray or DataView, read with the engine's getters; -1 for anything else. */
function viewByteLength(value) {
  if (typedArrayTag(value) !== undefined) return typedArrayByteLength(value);
  if (isView(value)) return dataViewByteLength(value);
  return -1;
}

/**
 * A fixed-length Uint8Array over exactly the bytes one binary of a
 * checked snapshot has now, read with the engine's getters: a view that
 * tracks a growable SharedArrayBuffer's length stops growing with it.
 */
function fixedBytes(value) {
  if (typedArrayTag(value) !== undefined) {
    return new Uint8ArrayCtor(
      typedArrayBuffer(value),
      typedArrayByteOffset(value),
      typedArrayByteLength(value),
    );
  }
  if (isView(value)) {
    return new Uint8ArrayCtor(
      dataViewBuffer(value),
      dataViewByteOffset(value),
      dataViewByteLength(value),
    );
  }
  return new Uint8ArrayCtor(value, 0, arrayBufferByteLength(value));
}

/** True for a TypedArray, DataView or ArrayBuffer whose memory is detached. */
function isDetachedBinary(value) {
  if (typedArrayTag(value) !== undefined) return isDetached(typedArrayBuffer(value));
  if (isView(value)) return isDetached(dataViewBuffer(value));
  if (isAnyArrayBuffer(value)) return isDetached(value);
  return false;
}

module.exports = {
  snapshot,
  checkInput,
  refusalOf,
  Bounds,
  ANY_LENGTH,
  viewByteLength,
  fixedBytes,
  isResizable,
  isDetachedBinary,
  isBinaryInput,
  isPlainArray,
  received,
  BINARY_TYPES,
};
