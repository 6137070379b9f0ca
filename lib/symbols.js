'use strict';
// The package's private keys: what one part of lib/ asks of another's
// objects beyond their public API, by symbol, so that none of it is the
// public API and no folder imports another's file only to learn a name.

/**
 * `pool[METRICS_SOURCE]`: the counters @tidepool-rs/pool/metrics reads
 * (lib/pool.js gives them, lib/metrics.js reads them).
 */
const METRICS_SOURCE = Symbol('tidepool metrics source');

/**
 * `pool[OPEN_CODEC](kernel, params)`: `{ port, handle }` of a new codec
 * stream, as the codec stream's constructor takes them (for the drop-in's
 * node:zlib classes, lib/zlib/, which are not that constructor itself).
 */
const OPEN_CODEC = Symbol('tidepool.openCodec');

/**
 * `pool[ONE_SHOT](kernel, params, maxOutputBytes, data, signal)`: the
 * drop-in's one-shots' door into the pool's engine (as node:zlib's
 * zlibBuffer drives its engine): the Promise of the kernel's output bytes.
 */
const ONE_SHOT = Symbol('tidepool.oneShot');

/**
 * `pool[POOL_SHAPE]`: `{ encoding, select }`, the pool's `encoding` and
 * whether it has its own `select` (the drop-in's one-shots post a Buffer
 * and need one back).
 */
const POOL_SHAPE = Symbol('tidepool.shape');

/**
 * `zlibModule[WATCH_POOL](listener)`: lib/zlib/index.mjs hears of each new
 * pool the drop-in's `pool` gives, to keep its live `pool` binding.
 */
const WATCH_POOL = Symbol('tidepool.watchPool');

/** `stream[ABORT](err)`: what a stream's signal calls when it fires (lib/engine/aborts.js). */
const ABORT = Symbol('tidepool.abort');

/** `stream[WHEN_OVER](fn)`: `fn()` once the stream's tasks are over (finished or failed). */
const WHEN_OVER = Symbol('tidepool.whenOver');

module.exports = { METRICS_SOURCE, OPEN_CODEC, ONE_SHOT, POOL_SHAPE, WATCH_POOL, ABORT, WHEN_OVER };
