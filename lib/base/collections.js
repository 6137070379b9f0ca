'use strict';
// Map and Set operations as they were when tidepool loaded
// (lib/base/intrinsics.js states the threat model): the engine's own Maps
// and Sets decide which Watch a post joins, which handle a stream runs
// with and which algorithm a name means, so a replaced
// `Map.prototype.get` or Set iterator must not change them.

const { uncurryThis, getter } = require('./intrinsics');
const { ownArray } = require('./own-array');

// The constructors too: an operation of load time refuses a Map or Set
// made by a class that replaced the global later.
const NativeMap = Map;
const NativeSet = Set;
/** A new, empty Map of load time. */
const newMap = () => new NativeMap();
/** A new, empty Set of load time. */
const newSet = () => new NativeSet();

const mapGet = uncurryThis(Map.prototype.get);
const mapSet = uncurryThis(Map.prototype.set);
const mapHas = uncurryThis(Map.prototype.has);
const mapDelete = uncurryThis(Map.prototype.delete);
const mapClear = uncurryThis(Map.prototype.clear);
const mapSize = /** @type {(map: Map<unknown, unknown>) => number} */ (
  getter(Map.prototype, 'size')
);
const setAdd = uncurryThis(Set.prototype.add);
const setHas = uncurryThis(Set.prototype.has);
const setDelete = uncurryThis(Set.prototype.delete);
const setClear = uncurryThis(Set.prototype.clear);
const setSize = /** @type {(set: Set<unknown>) => number} */ (getter(Set.prototype, 'size'));
const setValues = uncurryThis(Set.prototype.values);
const setIteratorNext = uncurryThis(Object.getPrototypeOf(new Set().values()).next);

/**
 * The elements of `set`, in insertion order, in an Array that never
 * consults Array.prototype (own-array.js), read with the Set iterator of
 * load time.
 * @template T
 * @param {Set<T>} set
 * @returns {T[]}
 */
function setToArray(set) {
  const out = ownArray(0);
  const iterator = setValues(set);
  for (;;) {
    const step = setIteratorNext(iterator);
    if (step.done) return out;
    out[out.length] = step.value;
  }
}

module.exports = {
  newMap,
  newSet,
  mapGet,
  mapSet,
  mapHas,
  mapDelete,
  mapClear,
  mapSize,
  setAdd,
  setHas,
  setDelete,
  setClear,
  setSize,
  setToArray,
};
