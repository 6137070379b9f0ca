'use strict';
// Objects that never consult a prototype, for options read as own
// properties and handed on (a Transform's options, a codec's params).
//
// A `{ __proto__: null }` object is a dictionary to V8: a hash table made,
// grown and enumerated per object, which a stream per response pays for
// per response. An OwnRecord's only prototype is a frozen, empty object
// with null behind it, so a name it lacks reads as undefined whatever
// Object.prototype holds, while its properties live in V8's fast mode,
// each shape shared by the records filled in the same order.

/** Records whose prototype chain is one frozen, empty object. */
class OwnRecord {}
Reflect.setPrototypeOf(OwnRecord.prototype, null);
delete OwnRecord.prototype.constructor;
Object.freeze(OwnRecord.prototype);

/** A new, empty record. @returns {any} */
function ownRecord() {
  return new OwnRecord();
}

module.exports = { ownRecord };
