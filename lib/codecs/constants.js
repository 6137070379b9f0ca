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
  // zstd_errors.h's ZSTD_ErrorCode: a zstd error's code and errno.
  ZSTD_error_no_error: 0,
  ZSTD_error_GENERIC: 1,
  ZSTD_error_prefix_unknown: 10,
  ZSTD_error_version_unsupported: 12,
  ZSTD_error_frameParameter_unsupported: 14,
  ZSTD_error_frameParameter_windowTooLarge: 16,
  ZSTD_error_corruption_detected: 20,
  ZSTD_error_checksum_wrong: 22,
  ZSTD_error_literals_headerWrong: 24,
  ZSTD_error_dictionary_corrupted: 30,
  ZSTD_error_dictionary_wrong: 32,
  ZSTD_error_dictionaryCreation_failed: 34,
  ZSTD_error_parameter_unsupported: 40,
  ZSTD_error_parameter_combination_unsupported: 41,
  ZSTD_error_parameter_outOfBound: 42,
  ZSTD_error_tableLog_tooLarge: 44,
  ZSTD_error_maxSymbolValue_tooLarge: 46,
  ZSTD_error_maxSymbolValue_tooSmall: 48,
  ZSTD_error_stabilityCondition_notRespected: 50,
  ZSTD_error_stage_wrong: 60,
  ZSTD_error_init_missing: 62,
  ZSTD_error_memory_allocation: 64,
  ZSTD_error_workSpace_tooSmall: 66,
  ZSTD_error_dstSize_tooSmall: 70,
  ZSTD_error_srcSize_wrong: 72,
  ZSTD_error_dstBuffer_null: 74,
  ZSTD_error_noForwardProgress_destFull: 80,
  ZSTD_error_noForwardProgress_inputEmpty: 82,
});

const constants = Object.freeze({ ...ZSTD, ...zlib.constants });

/**
 * brotli's and zstd's parameters as node:zlib keys them (its constants),
 * by the names of the pool's kernels' parameters. The ones missing here
 * (most of zstd's, the zstd decoder's) are refused with
 * ERR_TIDEPOOL_ZLIB_UNSUPPORTED; the brotli decoder's ring buffer one is
 * taken and ignored (lib/codecs/options.js).
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
