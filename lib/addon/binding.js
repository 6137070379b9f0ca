'use strict';
// The native addon, and what Rust says about itself: the kernels (names in
// id order), the batch layout of the memory shared with it, the codes of a
// failed task, the defaults it decides. Nothing here is written twice.

const path = require('node:path');
const fs = require('node:fs');
const { OWN, platformName, prebuiltPackage } = require('./platform');
const { uncurryThis } = require('./intrinsics');
const { installer, missingAddonAdvice, rebuildCommand, BUILD_NEEDS } = require('./install-advice');

/**
 * The addon: ./tidepool.node when a build from source made one (the install
 * script builds only when no prebuilt package fits, or when asked to), else
 * this platform's prebuilt package at this version, else one error that
 * says which platform was looked for and the ways out.
 */
function loadBinding() {
  const root = path.join(__dirname, '..');
  const local = path.join(root, 'tidepool.node');
  if (fs.existsSync(local)) return require(local);
  const prebuilt = prebuiltPackage(root);
  if (prebuilt !== null) {
    try {
      return require(prebuilt.main);
    } catch (err) {
      const e = /** @type {NodeJS.ErrnoException} */ (
        new Error(
          `${OWN.name}: the prebuilt addon ${prebuilt.main} (package ${prebuilt.name}) did not load: ${err.message}. ` +
            `Reinstall it, or build from source: set TIDEPOOL_BUILD_FROM_SOURCE=1 and ${rebuildCommand(installer(root))}; ${BUILD_NEEDS}.`,
        )
      );
      e.code = 'ERR_TIDEPOOL_NOT_BUILT';
      e.cause = err;
      throw e;
    }
  }
  const e = /** @type {NodeJS.ErrnoException} */ (
    new Error(`${OWN.name}: no native addon for ${platformName()}. ${missingAddonAdvice(root)}`)
  );
  e.code = 'ERR_TIDEPOOL_NOT_BUILT';
  throw e;
}

/** @type {typeof import('../src/binding')} The addon, as napi-rs declares it (src/binding.d.ts). */
const binding = loadBinding();
// The longest Buffer this Node can make: a result past it is refused with
// ERR_BUFFER_TOO_LARGE before Node is asked for the Buffer.
binding.setBufferMaxLength(require('node:buffer').constants.MAX_LENGTH);

/**
 * Kernel names in id order (the id is the index): the built-ins, then the
 * kernels of libraries loaded with Pool.loadKernels() (by this realm or
 * another: the registry is the process's, see syncKernels). Only grows,
 * each new index defined as an own property (a caller's accessor on
 * Array.prototype is never consulted), the name -> id Map read and written
 * with Map's methods as they were at load.
 */
const KERNELS = [];
const KERNEL_IDS = new Map();
/** Kernels that read a 4-byte duration from their input. */
const MIN_INPUT_BYTES = [];
/** A frozen copy of KERNELS, made again when it grows. */
let kernelList = Object.freeze([]);

const mapGet = uncurryThis(Map.prototype.get);
const mapSet = uncurryThis(Map.prototype.set);
const ObjectDefineProperty = Object.defineProperty;
const ObjectFreeze = Object.freeze;
const ArrayFrom = Array.from;
const stringSplit = uncurryThis(String.prototype.split);

/** Defines `array[index] = value` as an own data property. */
function define(array, index, value) {
  ObjectDefineProperty(
    array,
    index,
    /** @type {PropertyDescriptor} */ ({
      __proto__: null,
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    }),
  );
}

/** The id of kernel `name`, or undefined. */
function kernelIdOf(name) {
  return mapGet(KERNEL_IDS, name);
}

/**
 * Catches up with the native registry (a library loaded here, or in another
 * worker thread of the process). Returns true when kernels were added.
 */
function syncKernels() {
  // One string, split with the engine's split (which defines its elements).
  const names = stringSplit(binding.kernelNames(), '\n');
  if (names.length === KERNELS.length) return false;
  for (let id = KERNELS.length; id < names.length; id++) {
    const name = names[id];
    define(KERNELS, id, name);
    mapSet(KERNEL_IDS, name, id);
    define(MIN_INPUT_BYTES, id, name === 'spin' || name === 'sleep' ? 4 : 0);
  }
  kernelList = ObjectFreeze(
    ArrayFrom(
      /** @type {ArrayLike<string>} */ ({ __proto__: null, length: KERNELS.length }),
      (_, i) => KERNELS[i],
    ),
  );
  return true;
}
syncKernels();

/** Every registered kernel's name, in id order (frozen). */
function kernelNames() {
  return kernelList;
}

// LARGE_CODE: an entry whose result is the next Buffer of the batch's array
// of large results rather than bytes in the slab.
const {
  capacity: BATCH_CAPACITY,
  slabBytes: SLAB_BYTES,
  largeCode: LARGE_CODE,
} = binding.batchLayout();
/** Why a task failed, as the native side numbers it (0 is success). */
const TASK_CODES = Object.freeze(binding.taskErrorCodes());

module.exports = {
  binding,
  KERNELS,
  kernelIdOf,
  MIN_INPUT_BYTES,
  syncKernels,
  kernelNames,
  BATCH_CAPACITY,
  SLAB_BYTES,
  LARGE_CODE,
  TASK_CODES,
};
