'use strict';
// The native addon, and what Rust says about itself: the kernel table (each
// kernel's name, kind, codec family, least input, in id order), the batch
// layout of the memory shared with it, the codes of a failed task, the
// numbers of a codec stream's controls, the defaults it decides. Nothing
// here is written twice, and no file of lib/ lists kernels by name.

const path = require('node:path');
const fs = require('node:fs');
const { OWN, platformName, prebuiltPackage } = require('./platform');
const { uncurryThis } = require('../base/intrinsics');
const { mapGet, mapSet } = require('../base/collections');
const { installer, missingAddonAdvice, rebuildCommand, BUILD_NEEDS } = require('./install-advice');

/**
 * The addon: ./tidepool.node when a build from source made one (the install
 * script builds only when no prebuilt package fits, or when asked to), else
 * this platform's prebuilt package at this version, else one error that
 * says which platform was looked for and the ways out.
 */
function loadBinding() {
  const root = path.join(__dirname, '..', '..');
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

/** @type {typeof import('../../src/binding')} The addon, as napi-rs declares it (src/binding.d.ts). */
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
/** The fewest input bytes a task of each kernel takes (4 for those that read a duration). */
const MIN_INPUT_BYTES = [];
/**
 * What Rust says of each kernel besides its name and least input (the
 * core's kernels/facts.rs), by id: `{ kind: 'hash' | 'codec' | 'test' |
 * 'other', family: 'deflate' | 'brotli' | 'zstd' | 'lz4' | '', inBlocks,
 * flushKinds, defaultFlush, zlibNames, keyed, packing }`, frozen.
 * `zlibNames`: the node:zlib options a codec stream takes beside
 * `params`; `keyed`: the parameter each node:zlib constant key of
 * `params` stands for, by the key as a string; `packing`: whether a
 * batch's small inputs may share a task, '' (no), 'equal' (outputs of one
 * length) or 'sized' (each output's length told after them).
 */
const KERNEL_FACTS = [];
/** A frozen copy of KERNELS, made again when it grows. */
let kernelList = Object.freeze([]);

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
  const lines = stringSplit(binding.kernelTable(), '\n');
  if (lines.length === KERNELS.length) return false;
  for (let id = KERNELS.length; id < lines.length; id++) {
    // name, kind, family, least input, in blocks, flush kinds, default
    // flush, node:zlib names, keyed names, packing (indexed: destructuring
    // would call Array.prototype's iterator).
    const fields = stringSplit(lines[id], '\t');
    const name = fields[0];
    define(KERNELS, id, name);
    mapSet(KERNEL_IDS, name, id);
    define(MIN_INPUT_BYTES, id, +fields[3]);
    const flushKinds = [];
    if (fields[5] !== '') {
      const kinds = stringSplit(fields[5], ',');
      for (let i = 0; i < kinds.length; i++) define(flushKinds, i, +kinds[i]);
    }
    const zlibNames = fields[7] === '' ? [] : stringSplit(fields[7], ',');
    const keyed = { __proto__: null };
    if (fields[8] !== '') {
      const pairs = stringSplit(fields[8], ',');
      for (let i = 0; i < pairs.length; i++) {
        const pair = stringSplit(pairs[i], '=');
        keyed[pair[0]] = pair[1];
      }
    }
    define(
      KERNEL_FACTS,
      id,
      ObjectFreeze({
        __proto__: null,
        kind: fields[1],
        family: fields[2],
        inBlocks: fields[4] === '1',
        flushKinds: ObjectFreeze(flushKinds),
        defaultFlush: +fields[6],
        zlibNames: ObjectFreeze(zlibNames),
        keyed: ObjectFreeze(keyed),
        packing: fields[9],
      }),
    );
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

/** The facts of kernel `name` (see KERNEL_FACTS), or undefined for no such kernel. */
function factsOf(name) {
  const id = mapGet(KERNEL_IDS, name);
  return id === undefined ? undefined : KERNEL_FACTS[id];
}

/** The built-in hash kernels' names, in id order (what createHash() names in its error). */
function hashNames() {
  const out = [];
  for (let id = 0; id < KERNELS.length; id++)
    if (KERNEL_FACTS[id].kind === 'hash') define(out, out.length, KERNELS[id]);
  return out;
}

/** The flush kinds a codec stream's controls travel as (Rust's stream::RESET...). */
const STREAM_CONTROLS = ObjectFreeze(binding.streamControls());

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
  KERNEL_FACTS,
  factsOf,
  hashNames,
  syncKernels,
  kernelNames,
  STREAM_CONTROLS,
  BATCH_CAPACITY,
  SLAB_BYTES,
  LARGE_CODE,
  TASK_CODES,
};
