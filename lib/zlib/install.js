'use strict';
// install(): node:zlib's async one-shots and stream factories replaced, on
// node:zlib's own module object, by this module's, so that code which
// calls `zlib.createGzip()` or `zlib.gzip()` (compression middleware,
// ws...) runs on a tidepool without a change. ESM named imports follow
// (module.syncBuiltinESMExports). uninstall() puts node:zlib's back.
//
// Left alone: the *Sync functions (they run on the calling thread by
// definition), the classes (tar's minizlib and others drive their
// internals), constants, crc32. A function taken from node:zlib before
// install() (`const { createGzip } = require('zlib')` at load time) keeps
// node:zlib's: install first (`node --require @tidepool-rs/pool/zlib/register`).

const zlib = require('node:zlib');
const { syncBuiltinESMExports } = require('node:module');
const { invalidArgType, invalidArgValue, makeError, unknownOption } = require('../errors');
const { POOL_SHAPE } = require('../symbols');

/**
 * node:zlib's names install() replaces, where this Node's node:zlib has
 * them: node:zlib keeps its own set of names (no zstd before Node 22.15,
 * where its `*Sync` ones could not be added beside them).
 */
const ROUTED = Object.freeze([
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
]);

/** While installed: node:zlib's property descriptors (undefined where it had none) and the pool. */
let saved;
let pool;

/** The pool install() was given, or undefined. */
function installedPool() {
  return pool;
}

/**
 * Routes node:zlib's async work to `api` (this module's exports) for the
 * whole process, on `options.pool` or the module's default pool. Installing
 * again while installed is an error unless it changes nothing.
 */
function install(options, api) {
  let given;
  if (options !== undefined) {
    if (options === null || typeof options !== 'object')
      throw invalidArgType('options', 'of type object', options);
    const { Pool } = require('../pool');
    if (options instanceof Pool)
      throw invalidArgValue(
        'options',
        'is a Pool, not the options: pass { pool } (install({ pool }))',
      );
    for (const key in options) {
      if (Object.hasOwn(options, key) && key !== 'pool')
        throw unknownOption('options', key, ['pool'], undefined);
    }
    given = Object.hasOwn(options, 'pool') ? options.pool : undefined;
    if (given !== undefined) checkPool(given);
  }
  if (saved !== undefined) {
    if (given === pool) return;
    throw makeError(
      Error,
      'ERR_TIDEPOOL_ZLIB_INSTALLED',
      'node:zlib is already routed to another pool: uninstall() first',
    );
  }
  const routed = routable();
  saved = { __proto__: null };
  for (const name of routed) {
    saved[name] = Object.getOwnPropertyDescriptor(zlib, name);
    put(name, api[name]);
  }
  pool = given;
  syncBuiltinESMExports();
}

/** Puts node:zlib's own functions back; nothing when not installed. */
function uninstall() {
  if (saved === undefined) return;
  // All or none: node:zlib frozen since install() is a typed error, and
  // stays routed.
  for (const name in saved) {
    const own = Object.getOwnPropertyDescriptor(zlib, name);
    if (own !== undefined && !own.configurable && !own.writable) {
      throw makeError(
        Error,
        'ERR_TIDEPOOL_ZLIB_UNSUPPORTED',
        `uninstall() is not supported by @tidepool-rs/pool/zlib now: node:zlib's ${name} was frozen after install(), and cannot be put back`,
      );
    }
  }
  for (const name in saved) put(name, saved[name].value, saved[name]);
  saved = undefined;
  pool = undefined;
  syncBuiltinESMExports();
}

/**
 * The names of ROUTED this node:zlib has, once each is known to be
 * replaceable; else (Deno's node:zlib is frozen) a typed error, before
 * anything changed.
 */
function routable() {
  const names = [];
  for (const name of ROUTED) {
    const own = Object.getOwnPropertyDescriptor(zlib, name);
    if (own === undefined) continue;
    if (!own.configurable && !(own.writable && 'value' in own)) {
      throw makeError(
        Error,
        'ERR_TIDEPOOL_ZLIB_UNSUPPORTED',
        `install() is not supported by @tidepool-rs/pool/zlib on this runtime: node:zlib's ${name} cannot be replaced. Use require('@tidepool-rs/pool/zlib') in place of node:zlib`,
      );
    }
    names.push(name);
  }
  return names;
}

/** node:zlib's `name` made `value`: redefined, or where it may not be, assigned (writable). */
function put(name, value, descriptor) {
  const own = Object.getOwnPropertyDescriptor(zlib, name);
  if (own !== undefined && !own.configurable) zlib[name] = value;
  else
    Object.defineProperty(
      zlib,
      name,
      descriptor ?? { value, writable: true, enumerable: true, configurable: true },
    );
}

/** A pool install() can route to: an open Pool whose results are Buffers. */
function checkPool(given) {
  const { Pool } = require('../pool');
  if (!(given instanceof Pool)) throw invalidArgType('options.pool', 'an instance of Pool', given);
  if (given.closed)
    throw makeError(
      Error,
      'ERR_TIDEPOOL_CLOSED',
      'The pool is closed: install() needs an open one',
    );
  const shape = given[POOL_SHAPE];
  if (shape.encoding !== 'buffer' || shape.select) {
    throw invalidArgValue(
      'options.pool',
      `must take and give Buffers as node:zlib does (no select, encoding 'buffer'). Received a pool with ${shape.select ? 'a select function' : `encoding '${shape.encoding}'`}`,
    );
  }
}

module.exports = { install, uninstall, installedPool };
