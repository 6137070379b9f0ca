'use strict';
// The text the compression and gzip-stream rows compress: this
// repository's own sources, or the file TIDEPOOL_BENCH_CORPUS names, so
// that an A/B of two trees (bench/ab-rows.js) compresses the same bytes on
// both sides, whatever either tree's sources have become.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const SOURCES = [
  'lib/pool.js',
  'lib/engine/engine.js',
  'lib/engine/batches.js',
  'index.d.ts',
  'README.md',
  'src/native_pool.rs',
  'src/delivery.rs',
  'crates/core/src/pool/mod.rs',
  'crates/core/src/kernels/zlib/mod.rs',
];

/** The corpus's bytes. */
function sourceCorpus() {
  const file = process.env.TIDEPOOL_BENCH_CORPUS;
  if (file) return fs.readFileSync(file);
  return Buffer.concat(SOURCES.map((f) => fs.readFileSync(path.join(ROOT, f))));
}

module.exports = { sourceCorpus };
