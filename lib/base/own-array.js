'use strict';
// Arrays that never consult a prototype.
//
// Writing `a[i] = v` to an index an Array does not have yet, or reading an
// index it lacks, consults Array.prototype, where a caller may have put an
// accessor: it would then see, change or swallow the pool's own bookkeeping
// (or what native code reads). The Arrays made here never reach
// Array.prototype: their only prototype is OwnArray's, frozen, empty, with
// null behind it, so every index is read and written on the Array itself,
// whatever Array.prototype holds. They are still Arrays (`Array.isArray`,
// `length`, what native code reads as one) and as fast as plain ones; one
// handed to a caller gets Array.prototype back once it is filled
// (`asPlainArray`).
//
// (Earlier these were made with `Array.from({ length })`, which defines
// every index as an own property: ~120 ns per element, the largest cost of
// a postMany() of tiny tasks; then with a plain Array whose prototype was
// set to null, ~100-200 ns each on Node 24: a prototype change per Array.
// A subclass's instances come with their prototype, ~15 ns.)

const ArrayPrototype = Array.prototype;
const setPrototypeOf = Reflect.setPrototypeOf;

/** Array exotic objects whose prototype chain is one frozen, empty object. */
class OwnArray extends Array {
  // Its own constructor: a derived class's default one passes its
  // arguments on by spreading them, which on Node 20 runs the Array
  // iterator's `next`, a function any caller may replace.
  constructor(length) {
    super(length);
  }
}
setPrototypeOf(OwnArray.prototype, null);
// No `constructor` either: nothing reachable from one of these Arrays leads
// anywhere.
delete OwnArray.prototype.constructor;
Object.freeze(OwnArray.prototype);

/** An Array of `length` elements that never consults Array.prototype, `make(i)` each (undefined without `make`). */
function ownArray(length, make) {
  const array = new OwnArray(length);
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
