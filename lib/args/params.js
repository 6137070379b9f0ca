'use strict';
// Kernel parameters (`params` of new Pool() and post()): read off the user's
// object once, handed to the kernel's own check in Rust, which either makes
// an opaque handle the task carries or says which parameter it refuses and
// why; the refusal becomes Node's error here, where the value is at hand.

const { binding, KERNELS } = require('../addon/binding');
const { types } = require('node:util');
const { describe, invalidArgType, invalidState, makeError, outOfRange } = require('../errors');
const { isDetachedBinary } = require('../engine/binary');
const { ownArray } = require('../base/own-array');
const { keyedName } = require('../codecs/pool-options');
const { mapGet, mapSet, mapClear, mapSize } = require('../base/collections');

/** makeParams(kernel, names, values, once) (src/wire/args.rs MakeParamsArgs): a handle, or the refusal `[kind, name, expected]`. */
const makeParams =
  /** @type {(kernel: number, names: string[], values: unknown[], once: boolean) => unknown} */ (
    binding.paramsMaker()
  );
const hasOwn = Object.hasOwn;
const isArray = Array.isArray;
const isSharedArrayBuffer = types.isSharedArrayBuffer;
const objectIs = Object.is;

/**
 * Shared handles of parameter sets made only of numbers and booleans, by
 * kernel and set: a server that makes a zlib stream per response asks for
 * the same few sets again and again, and a handle serves any number of
 * tasks. Sets with a binary or a string (a key) are never kept here.
 */
const sharedHandles = new Map();
const SHARED_HANDLES_MOST = 256;

/** Per kernel id: true when it runs without parameters, else its refusal of none. */
// Prototype-free (lib/base/own-array.js): a kernel not asked yet is a hole,
// which no accessor on Array.prototype may answer for.
const defaultsOk = ownArray(0);

/**
 * A handle for `params` (checked by `kernel`), or throws Node's error naming
 * `${where}.${name}`. `once`: the handle serves one task (its key is let go
 * of when that task is queued); otherwise it is shared (a pool's default).
 */
function paramsHandle(kernel, params, where, once) {
  if (params === null || typeof params !== 'object' || isArray(params)) {
    throw invalidArgType(where, 'of type object', params);
  }
  const names = [];
  const values = [];
  // Own enumerable string keys (as every option is read, lib/args/options.js:
  // what Object.prototype holds is neither a parameter nor refused), each
  // value read once; `undefined` means "not given", as for every other
  // option.
  for (const name in params) {
    if (!hasOwn(params, name)) continue;
    let value = params[name];
    if (value === undefined) continue;
    // The native side reads a SharedArrayBuffer through a view, as it
    // reads an input.
    if (isSharedArrayBuffer(value)) value = new Uint8Array(value);
    // node:zlib's keyed brotli and zstd parameters, by their names here
    // (its flags are numbers).
    const known = keyedName(KERNELS[kernel], name);
    if (known !== name && known === 'checksum' && typeof value === 'number') value = value !== 0;
    else if (known !== name && typeof value === 'boolean') value = Number(value);
    names[names.length] = known;
    values[values.length] = value;
  }
  // After every getter has run: a binary one of them detached is refused
  // as Node refuses a detached input.
  for (let i = 0; i < values.length; i++) {
    if (isDetachedBinary(values[i]))
      throw invalidState(`${where}.${names[i]}`, 'is backed by a detached ArrayBuffer');
  }
  const key = once ? undefined : keyOf(kernel, names, values);
  if (key !== undefined) {
    const handle = mapGet(sharedHandles, key);
    if (handle !== undefined) return handle;
  }
  const made = makeParams(kernel, names, values, once);
  if (isArray(made)) {
    let i = 0;
    while (i < names.length && names[i] !== made[1]) i++;
    throw paramsError(made, kernel, where, i === names.length ? undefined : values[i]);
  }
  if (key !== undefined) {
    if (mapSize(sharedHandles) === SHARED_HANDLES_MOST) mapClear(sharedHandles);
    mapSet(sharedHandles, key, made);
  }
  return made;
}

/** The key of a set of numbers and booleans in sharedHandles, or undefined for any other set. */
function keyOf(kernel, names, values) {
  let key = `${kernel}`;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const type = typeof value;
    if (type !== 'number' && type !== 'boolean') return undefined;
    // Each name after its length: a name may hold any character, and no
    // set may pass for another. -0 is not 0 to a kernel that refuses it;
    // the type tells true from 1.
    const name = names[i];
    key += `\0${name.length}:${name}\0${type[0]}${objectIs(value, -0) ? '-0' : value}`;
  }
  return key;
}

/** Throws unless `kernel` can run without parameters (hmac needs a key). */
function checkDefaults(kernel, where) {
  let ok = defaultsOk[kernel];
  if (ok === undefined) {
    const made = makeParams(kernel, [], [], true);
    ok = defaultsOk[kernel] = isArray(made) ? made : true;
  }
  if (ok !== true) throw paramsError(ok, kernel, where, undefined);
}

/**
 * Node's error for the kernel's refusal `[kind, name, expected]` of `value`.
 * @param {any[]} refusal
 */
function paramsError(refusal, kernel, where, value) {
  const [kind, name, expected] = refusal;
  const path = `${where}.${name}`;
  switch (kind) {
    case 'unknown':
      return makeError(
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        expected === ''
          ? `The property '${path}' is not a parameter: kernel '${KERNELS[kernel]}' takes none`
          : `The property '${path}' is not a parameter of kernel '${KERNELS[kernel]}'. Its parameters: ${expected}`,
      );
    case 'range':
      return outOfRange(path, expected, typeof value === 'bigint' ? `${value}n` : value);
    case 'value':
      return makeError(
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        `The property '${path}' must be ${expected}. Received ${describe(value)}`,
      );
    case 'refused':
      // A loaded kernel's own check, past its schema's: its words.
      return makeError(
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        `The property '${where}' was refused by kernel '${KERNELS[kernel]}': ${expected}`,
      );
    case 'missing':
      return makeError(
        TypeError,
        'ERR_INVALID_ARG_TYPE',
        `The "${path}" property is required by kernel '${KERNELS[kernel]}': ${expected}. Received undefined`,
      );
    default:
      return invalidArgType(path, expected, value);
  }
}

module.exports = { paramsHandle, checkDefaults };
