'use strict';
// node:zlib's constants, and zstd's where this Node has none (node:zlib
// has them from Node 22.15 and 23.8; the values are zstd.h's).

const zlib = require('node:zlib');

const ZSTD = Object.freeze({
  ZSTD_e_continue: 0,
  ZSTD_e_flush: 1,
  ZSTD_e_end: 2,
  ZSTD_fast: 1,
  ZSTD_dfast: 2,
  ZSTD_greedy: 3,
  ZSTD_lazy: 4,
  ZSTD_lazy2: 5,
  ZSTD_btlazy2: 6,
  ZSTD_btopt: 7,
  ZSTD_btultra: 8,
  ZSTD_btultra2: 9,
  ZSTD_c_compressionLevel: 100,
  ZSTD_c_windowLog: 101,
  ZSTD_c_hashLog: 102,
  ZSTD_c_chainLog: 103,
  ZSTD_c_searchLog: 104,
  ZSTD_c_minMatch: 105,
  ZSTD_c_targetLength: 106,
  ZSTD_c_strategy: 107,
  ZSTD_c_enableLongDistanceMatching: 160,
  ZSTD_c_ldmHashLog: 161,
  ZSTD_c_ldmMinMatch: 162,
  ZSTD_c_ldmBucketSizeLog: 163,
  ZSTD_c_ldmHashRateLog: 164,
  ZSTD_c_contentSizeFlag: 200,
  ZSTD_c_checksumFlag: 201,
  ZSTD_c_dictIDFlag: 202,
  ZSTD_c_nbWorkers: 400,
  ZSTD_c_jobSize: 401,
  ZSTD_c_overlapLog: 402,
  ZSTD_d_windowLogMax: 100,
  ZSTD_CLEVEL_DEFAULT: 3,
});

const constants = Object.freeze({ ...ZSTD, ...zlib.constants });

/**
 * brotli's and zstd's parameters as node:zlib keys them (its constants),
 * by the names of the pool's kernels' parameters. The ones missing here
 * (most of zstd's, the zstd decoder's) are refused with
 * ERR_TIDEPOOL_ZLIB_UNSUPPORTED; the brotli decoder's ring buffer one is
 * taken and ignored (lib/zlib/options.js).
 */
const KEYED = Object.freeze({
  __proto__: null,
  brotliCompress: Object.freeze({
    __proto__: null,
    [constants.BROTLI_PARAM_MODE]: 'mode',
    [constants.BROTLI_PARAM_QUALITY]: 'quality',
    [constants.BROTLI_PARAM_LGWIN]: 'lgwin',
    [constants.BROTLI_PARAM_LGBLOCK]: 'lgblock',
    [constants.BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING]: 'disableLiteralContextModeling',
    [constants.BROTLI_PARAM_SIZE_HINT]: 'sizeHint',
    [constants.BROTLI_PARAM_NPOSTFIX]: 'npostfix',
    [constants.BROTLI_PARAM_NDIRECT]: 'ndirect',
    [constants.BROTLI_PARAM_LARGE_WINDOW]: 'largeWindow',
  }),
  brotliDecompress: Object.freeze({
    __proto__: null,
    [constants.BROTLI_DECODER_PARAM_LARGE_WINDOW]: 'largeWindow',
  }),
  zstdCompress: Object.freeze({
    __proto__: null,
    [constants.ZSTD_c_compressionLevel]: 'level',
    [constants.ZSTD_c_checksumFlag]: 'checksum',
  }),
});

module.exports = { constants, KEYED };
