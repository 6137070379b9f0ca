'use strict';
// `@tidepool-rs/pool/zlib`: node:zlib's API, its compression running on a
// tidepool instead of libuv's four shared threads. Streams are pool codec
// streams (./streams.js); the async one-shots are pool tasks
// (./one-shot.js); the *Sync functions are node:zlib's own (they run on
// the calling thread by definition); install() routes node:zlib itself
// here for the whole process (../dropin/routing.js).

const zlib = require('node:zlib');
const { constants } = require('../codecs/constants');
const { CLASSES, setPoolSource } = require('./streams');
const { oneShot } = require('./one-shot');
const { nodeSync, hereSync } = require('./sync');
const { Routing } = require('../dropin/routing');
const { PoolSource } = require('../dropin/pool-source');
const { dropInExports } = require('../dropin/exports');

/**
 * node:zlib's names install() replaces. Left alone: the *Sync functions
 * (they run on the calling thread by definition), the classes (tar's
 * minizlib and others drive their internals), constants, crc32.
 */
const routing = new Routing({
  target: zlib,
  label: 'node:zlib',
  entry: '@tidepool-rs/pool/zlib',
  family: 'ZLIB',
  names: [
    'createGzip',
    'createGunzip',
    'createDeflate',
    'createInflate',
    'createDeflateRaw',
    'createInflateRaw',
    'createUnzip',
    'createBrotliCompress',
    'createBrotliDecompress',
    'createZstdCompress',
    'createZstdDecompress',
    'gzip',
    'gunzip',
    'deflate',
    'inflate',
    'deflateRaw',
    'inflateRaw',
    'unzip',
    'brotliCompress',
    'brotliDecompress',
    'zstdCompress',
    'zstdDecompress',
  ],
});
const pools = new PoolSource(routing);
const currentPool = () => pools.current();
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
  const sync = zlib[`${name}Sync`];
  api[`${name}Sync`] =
    typeof sync === 'function'
      ? nodeSync(`${name}Sync`, sync, Class)
      : hereSync(`${name}Sync`, ONE_SHOTS[name], Class);
}

module.exports = dropInExports(api, routing, pools);
// As node:zlib's: read-only, and always the same objects (node:zlib's
// own, with zstd's added where this Node has none: lib/codecs/constants.js).
Object.defineProperty(module.exports, 'constants', {
  value: constants,
  enumerable: true,
  writable: false,
  configurable: false,
});
// crc32: node:zlib's, except that -0 is 0 before it sees it: Node 20 and
// 22's binding aborts the process on -0 (fixed in 24.22 and 26.12, where
// -0 is 0 already: no difference there).
const nodeCrc32 = zlib.crc32;
if (typeof nodeCrc32 === 'function') {
  Object.defineProperty(module.exports, 'crc32', {
    ...Object.getOwnPropertyDescriptor(zlib, 'crc32'),
    value: function crc32(data, value = 0) {
      return nodeCrc32(data, value === 0 ? 0 : value);
    },
  });
}
// Everything else node:zlib has on this Node is node:zlib's own, as it
// has it: `codes`, `crc32`, the legacy `Z_*` names (not enumerable), and
// what a newer Node adds (Node 26's zip archives).
for (const name of Reflect.ownKeys(zlib)) {
  if (!Object.hasOwn(module.exports, name))
    Object.defineProperty(module.exports, name, Object.getOwnPropertyDescriptor(zlib, name));
}
