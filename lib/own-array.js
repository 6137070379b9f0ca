'use strict';
// Arrays whose every index in use is an own data property.
//
// Writing `a[i] = v` to an index an Array does not have yet, or reading an
// index it lacks, consults Array.prototype, where a caller may have put an
// accessor: it would then see, change or swallow the pool's own bookkeeping
// (or what native code reads). Arrays made here are created with all their
// indices as own properties (`Array.from` defines them, it does not assign),
// and grown only by making a new one, so no read or write ever leaves them.

const ArrayFrom = Array.from;

/** An Array of `length` own elements, `make(i)` each (undefined without `make`). */
function ownArray(length, make) {
  return ArrayFrom({ __proto__: null, length }, make === undefined ? undefined : (_, i) => make(i));
}

/** `array` copied into a longer one (its elements first, then undefined). */
function grown(array, length) {
  return ArrayFrom({ __proto__: null, length }, (_, i) => (i < array.length ? array[i] : undefined));
}

module.exports = { ownArray, grown };
