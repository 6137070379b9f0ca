'use strict';
// Arrays that never consult a prototype.
//
// Writing `a[i] = v` to an index an Array does not have yet, or reading an
// index it lacks, consults Array.prototype, where a caller may have put an
// accessor: it would then see, change or swallow the pool's own bookkeeping
// (or what native code reads). The Arrays made here have no prototype at
// all, so every index is read and written on the Array itself, whatever
// Array.prototype holds. They are still Arrays (`Array.isArray`, `length`,
// what native code reads as one) and as fast as plain ones; one handed to a
// caller gets Array.prototype back once it is filled (`asPlainArray`).
//
// (Earlier these were made with `Array.from({ length })`, which defines
// every index as an own property: ~120 ns per element, the largest cost of
// a postMany() of tiny tasks.)

const ArrayCtor = Array;
const ArrayPrototype = Array.prototype;
const setPrototypeOf = Reflect.setPrototypeOf;

/** An Array of `length` elements without a prototype, `make(i)` each (undefined without `make`). */
function ownArray(length, make) {
  const array = new ArrayCtor(length);
  setPrototypeOf(array, null);
  if (make !== undefined) {
    for (let i = 0; i < length; i++) array[i] = make(i);
  }
  return array;
}

/** `array` copied into a longer one (its elements first, then undefined). */
function grown(array, length) {
  const bigger = ownArray(length);
  const old = array.length;
  for (let i = 0; i < old; i++) bigger[i] = array[i];
  return bigger;
}

/** An Array made here, every index filled, given Array.prototype for a caller. */
function asPlainArray(array) {
  setPrototypeOf(array, ArrayPrototype);
  return array;
}

module.exports = { ownArray, grown, asPlainArray };
