'use strict';
// What lib/zlib/ asks of a Pool beyond its public API, by symbol.

/**
 * `pool[OPEN_CODEC](kernel, params)`: `{ port, handle }` of a new codec
 * stream, as CodecStream's constructor takes them (for node:zlib's
 * classes, which are not CodecStream itself).
 */
const OPEN_CODEC = Symbol('tidepool.openCodec');

/**
 * `pool[POOL_SHAPE]`: `{ encoding, select }`, the pool's `encoding` and
 * whether it has its own `select` (the one-shots post a Buffer and need
 * one back).
 */
const POOL_SHAPE = Symbol('tidepool.shape');

/**
 * `zlibModule[WATCH_POOL](listener)`: ./index.mjs hears of each new pool
 * the module's `pool` gives, to keep its live `pool` binding.
 */
const WATCH_POOL = Symbol('tidepool.watchPool');

module.exports = { OPEN_CODEC, POOL_SHAPE, WATCH_POOL };
