'use strict';
// node:zlib's `*Sync` one-shots. They run on the calling thread by
// definition: node:zlib's own where this Node has them; where it has none
// (zstd's before Node 22.15), the pool's kernel run here, on this thread,
// with node:zlib's options, limits and errors, so that this module has
// zstd's whole set of names on every Node.

const { binding } = require('../addon/binding');
const { isDetachedBinary } = require('../engine/binary');
const { kernelId } = require('../args/task-options');
const { paramsHandle } = require('../args/params');
const { inlineError } = require('../engine/wire');
const { readOptions, initError } = require('../codecs/options');
const { inputOf, endedEngine, zlibError } = require('./one-shot');

/**
 * node:zlib's `*Sync` function `sync`, except that with `info: true` its
 * `engine` is this module's class (ended), as the async ones give it.
 */
function nodeSync(name, sync, Class) {
  return {
    [name](buffer, options) {
      const result = sync(buffer, options);
      // `{ buffer, engine }` when node:zlib was asked for info.
      if (Buffer.isBuffer(result)) return result;
      return { buffer: result.buffer, engine: endedEngine(Class, options) };
    },
  }[name];
}

/** `name` (of class `className`, `Class`) run here by the pool's kernel: node:zlib's has none. */
function hereSync(name, className, Class) {
  return {
    [name](buffer, options) {
      const o = readOptions(className, options);
      // As node:zlib's *Sync, which reads a detached view as empty.
      const given = inputOf(buffer);
      const data = isDetachedBinary(given) ? Buffer.alloc(0) : given;
      const kernel = kernelId(o.kernel, 'kernel');
      let params;
      try {
        if (o.params !== undefined) params = paramsHandle(kernel, o.params, 'options.params', true);
      } catch (err) {
        throw initError(err, o.kernel);
      }
      const result = binding.runHere(kernel, params, data, o.maxOutputLength);
      if (typeof result === 'string') throw zlibError(inlineError(result), o.maxOutputGiven);
      return o.info ? { buffer: result, engine: endedEngine(Class, options) } : result;
    },
  }[name];
}

module.exports = { nodeSync, hereSync };
