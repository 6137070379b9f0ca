// `import ... from '@tidepool-rs/pool/zlib'`: the CommonJS module
// (./index.js) with its names as ESM named exports. Node's detection of a
// CommonJS module's names reads only literal shapes, which this module's
// (made in loops, node:zlib's own names copied) is not; so they are
// listed here: every name node:zlib has on any Node line this package
// supports, and this module's own. A name this Node's node:zlib lacks is
// undefined here (docs/zlib.md); __test__/entry-exports.test.js checks the list
// against node:zlib, the CommonJS module and zlib.d.ts.

import { createRequire } from 'node:module';

// Required, not imported: every runtime (Deno's included, which reads a
// .js file outside node_modules as ESM) loads the very CommonJS module.
const require = createRequire(import.meta.url);
const zlib = require('./index.js');
const symbols = require('../symbols.js');

export default zlib;

export const {
  // The classes and their factories.
  Gzip,
  Gunzip,
  Deflate,
  Inflate,
  DeflateRaw,
  InflateRaw,
  Unzip,
  BrotliCompress,
  BrotliDecompress,
  ZstdCompress,
  ZstdDecompress,
  createGzip,
  createGunzip,
  createDeflate,
  createInflate,
  createDeflateRaw,
  createInflateRaw,
  createUnzip,
  createBrotliCompress,
  createBrotliDecompress,
  createZstdCompress,
  createZstdDecompress,
  // The async one-shots, on the pool.
  gzip,
  gunzip,
  deflate,
  inflate,
  deflateRaw,
  inflateRaw,
  unzip,
  brotliCompress,
  brotliDecompress,
  zstdCompress,
  zstdDecompress,
  // The synchronous ones, on the calling thread.
  gzipSync,
  gunzipSync,
  deflateSync,
  inflateSync,
  deflateRawSync,
  inflateRawSync,
  unzipSync,
  brotliCompressSync,
  brotliDecompressSync,
  zstdCompressSync,
  zstdDecompressSync,
  // node:zlib's own.
  constants,
  codes,
  crc32,
  // Node 26's zip archives (node:zlib's own).
  ZipBuffer,
  ZipEntry,
  ZipFile,
  createZipArchive,
  createZipArchiveSync,
  zipFiles,
  getMaxZipContentSize,
  setMaxZipContentSize,
  // The legacy constants @types/node declares as node:zlib's (ESM's node:zlib
  // has none of them; CommonJS's has all but the last six of these).
  Z_NO_FLUSH,
  Z_PARTIAL_FLUSH,
  Z_SYNC_FLUSH,
  Z_FULL_FLUSH,
  Z_FINISH,
  Z_BLOCK,
  Z_TREES,
  Z_OK,
  Z_STREAM_END,
  Z_NEED_DICT,
  Z_ERRNO,
  Z_STREAM_ERROR,
  Z_DATA_ERROR,
  Z_MEM_ERROR,
  Z_BUF_ERROR,
  Z_VERSION_ERROR,
  Z_NO_COMPRESSION,
  Z_BEST_SPEED,
  Z_BEST_COMPRESSION,
  Z_DEFAULT_COMPRESSION,
  Z_FILTERED,
  Z_HUFFMAN_ONLY,
  Z_RLE,
  Z_FIXED,
  Z_DEFAULT_STRATEGY,
  Z_BINARY,
  Z_TEXT,
  Z_ASCII,
  Z_UNKNOWN,
  Z_DEFLATED,
  // This module's.
  install,
  uninstall,
} = zlib;

/**
 * The pool this module's work runs on: a live binding, as the CommonJS
 * getter (the module's own pool, made here if not yet, or install()'s).
 */
export let pool = zlib.pool;
zlib[symbols.WATCH_POOL]((current) => {
  pool = current;
});
