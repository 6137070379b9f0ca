'use strict';
// Node's own zlib and crypto tests (test/parallel in nodejs/node), adapted:
// each file runs its checks against node:zlib / node:crypto (the control)
// and against a pool's streams through `poolZlib(pool)`, which makes the
// pool's streams from the options those tests pass to node:zlib's
// factories (only those: another option is a mistake in the adaptation).

const zlib = require('node:zlib');
const { Pool } = require('../..');

const FACTORIES = [
  'createGzip',
  'createGunzip',
  'createDeflate',
  'createInflate',
  'createDeflateRaw',
  'createInflateRaw',
  'createBrotliCompress',
  'createBrotliDecompress',
];

/** node:zlib's options of the adapted tests, as a pool stream takes them. */
function translate(options) {
  if (options === undefined) return undefined;
  const out = {};
  const params = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'level') params.level = value;
    else if (key === 'highWaterMark' || key === 'signal') out[key] = value;
    else throw new Error(`the adapter does not translate option ${key}`);
  }
  if (Object.keys(params).length !== 0) out.params = params;
  return out;
}

/** node:zlib's factories over `pool`'s streams, and node:zlib's constants. */
function poolZlib(pool) {
  const z = { constants: zlib.constants };
  for (const name of FACTORIES) z[name] = (options) => pool[name](translate(options));
  return z;
}

/**
 * Runs `check(z, who)` against node:zlib, then against a fresh pool's
 * streams (closed afterwards).
 */
async function both(check) {
  await check(zlib, 'node:zlib');
  const pool = new Pool();
  try {
    await check(poolZlib(pool), 'tidepool');
  } finally {
    await pool.close();
  }
}

module.exports = { both, poolZlib };
