'use strict';
// The native addon, and what Rust says about itself: the kernels (names in
// id order), the batch layout of the memory shared with it, the codes of a
// failed task, the defaults it decides. Nothing here is written twice.

const path = require('node:path');

function loadBinding() {
  const file = path.join(__dirname, '..', 'tidepool.node');
  try {
    return require(file);
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') {
      const e = new Error(`tidepool: the native addon ${file} is missing. Build it with \`npm run build\` (needs cargo).`);
      e.code = 'ERR_TIDEPOOL_NOT_BUILT';
      e.cause = err;
      throw e;
    }
    throw err;
  }
}

const binding = loadBinding();

/** Kernel names in id order (the id is the index). */
const KERNELS = Object.freeze(binding.kernelNames());
const KERNEL_IDS = new Map(KERNELS.map((name, id) => [name, id]));
/** Kernels that read a 4-byte duration from their input. */
const MIN_INPUT_BYTES = KERNELS.map((name) => (name === 'spin' || name === 'sleep' ? 4 : 0));
// LARGE_CODE: an entry whose result is the next Buffer of the batch's array
// of large results rather than bytes in the slab.
const { capacity: BATCH_CAPACITY, slabBytes: SLAB_BYTES, largeCode: LARGE_CODE } = binding.batchLayout();
/** Why a task failed, as the native side numbers it (0 is success). */
const TASK_CODES = Object.freeze(binding.taskErrorCodes());

module.exports = { binding, KERNELS, KERNEL_IDS, MIN_INPUT_BYTES, BATCH_CAPACITY, SLAB_BYTES, LARGE_CODE, TASK_CODES };
