'use strict';
// `@tidepool-rs/pool/zlib`: node:zlib's API, its compression running on a
// tidepool instead of libuv's four shared threads. Streams are pool codec
// streams (./streams.js); the async one-shots are pool tasks
// (./one-shot.js); the *Sync functions are node:zlib's own (they run on
// the calling thread by definition); install() routes node:zlib itself
// here for the whole process (./install.js).

const zlib = require('node:zlib');
const { constants } = require('./constants');
const { CLASSES, setPoolSource } = require('./streams');
const { oneShot, endedEngine } = require('./one-shot');
const { install, uninstall, installedPool } = require('./install');

/** The pool of this process's zlib work when install() was given none. */
let defaultPool;

/** The pool new streams and one-shots run on: install()'s, or the default one. */
function currentPool() {
  const installed = installedPool();
  if (installed !== undefined) return installed;
  if (defaultPool === undefined || defaultPool.closed) {
    // Loaded here: index.js loads this module's siblings, not the reverse.
    const { Pool } = require('../pool');
    defaultPool = new Pool();
  }
  return defaultPool;
}
setPoolSource(currentPool);

/** node:zlib's names of the one-shots, by class. */
const ONE_SHOTS = Object.freeze({
  __proto__: null,
  gzip: 'Gzip',
  gunzip: 'Gunzip',
  deflate: 'Deflate',
  inflate: 'Inflate',
  deflateRaw: 'DeflateRaw',
  inflateRaw: 'InflateRaw',
  unzip: 'Unzip',
  brotliCompress: 'BrotliCompress',
  brotliDecompress: 'BrotliDecompress',
  zstdCompress: 'ZstdCompress',
  zstdDecompress: 'ZstdDecompress',
});

const api = { __proto__: null };
for (const name in CLASSES) {
  const Class = CLASSES[name];
  api[name] = Class;
  api[`create${name}`] = { [`create${name}`]: (options) => new Class(options) }[`create${name}`];
}
for (const name in ONE_SHOTS) {
  const Class = CLASSES[ONE_SHOTS[name]];
  api[name] = oneShot(name, ONE_SHOTS[name], Class, currentPool);
  // On the calling thread by definition: node:zlib's (zstd's from Node 22.15).
  const sync = zlib[`${name}Sync`];
  if (typeof sync === 'function') api[`${name}Sync`] = syncOf(`${name}Sync`, sync, Class);
}

/**
 * node:zlib's `*Sync` function `sync`, except that with `info: true` its
 * `engine` is this module's class (ended), as the async ones give it.
 */
function syncOf(name, sync, Class) {
  return {
    [name](buffer, options) {
      const result = sync(buffer, options);
      // `{ buffer, engine }` when node:zlib was asked for info.
      if (Buffer.isBuffer(result)) return result;
      return { buffer: result.buffer, engine: endedEngine(Class, options) };
    },
  }[name];
}

module.exports = {
  ...api,
  crc32: zlib.crc32,
  install: (options) => install(options, module.exports),
  uninstall,
  /** The pool this module's work runs on (to read its stats() or metrics). */
  get pool() {
    return currentPool();
  },
};
// As node:zlib's: read-only, and always the same objects.
Object.defineProperties(module.exports, {
  constants: { value: constants, enumerable: true, writable: false, configurable: false },
  codes: {
    value: /** @type {any} */ (zlib).codes,
    enumerable: true,
    writable: false,
    configurable: false,
  },
});
