//! `zstdCompress` / `zstdDecompress`: Zstandard (RFC 8878) frames with the
//! reference C library, named as in Node 22's `node:zlib`.
//!
//! Parameters: `level` (zstd's range, negative levels included; default 3)
//! and `checksum` (a content checksum in the frame; default false), or
//! node:zlib's way, `parameters`: zstd's own `(key, value)` pairs as
//! node:zlib hands them to zstd (`ZSTD_c_*` and `ZSTD_d_*`, in key order),
//! refused where zstd refuses them. The encoder may be told the input's
//! size (`pledgedSrcSize`): a frame of another size then fails, as zstd
//! fails it.
//!
//! The decoder reads a frame, and the frames after it as node:zlib of the
//! Node it serves does (`frames`: all that follow, or only those in the
//! same piece of input); what is not a frame after one is ignored, or
//! refused with `rejectGarbage`. An input that stops inside a frame is
//! `Z_BUF_ERROR` ("unexpected end of file", as node:zlib says for every
//! format); zstd's errors have node:zlib's codes and numbers
//! (`ZSTD_error_corruption_detected`, errno 20) and zstd's words. A frame's
//! window is held in memory besides the output, so the decoder refuses (as
//! too large) frames whose window is past the power of two above the
//! output limit, and any over 128 MiB.
//!
//! `compress.rs` and `decompress.rs` are the two sides; this file what they
//! share: the errors and the parameters.

use zstd_safe::{CParameter, DParameter, Strategy};

use super::params::{ParamError, RawParams};
use super::KernelError;

mod compress;
mod decompress;
#[cfg(test)]
mod tests;

pub use compress::ZSTD_COMPRESS;
#[cfg(test)]
pub use compress::{ZSTD_BLOCK, ZSTD_MIN_SPLIT};
pub use decompress::ZSTD_DECOMPRESS;

/// zstd's error codes (zstd_errors.h) by number, as node:zlib names them;
/// a number not here is `ZSTD_error_GENERIC` there.
const ERRORS: &[(u32, &str)] = &[
    (1, "ZSTD_error_GENERIC"),
    (10, "ZSTD_error_prefix_unknown"),
    (12, "ZSTD_error_version_unsupported"),
    (14, "ZSTD_error_frameParameter_unsupported"),
    (16, "ZSTD_error_frameParameter_windowTooLarge"),
    (20, "ZSTD_error_corruption_detected"),
    (22, "ZSTD_error_checksum_wrong"),
    (24, "ZSTD_error_literals_headerWrong"),
    (30, "ZSTD_error_dictionary_corrupted"),
    (32, "ZSTD_error_dictionary_wrong"),
    (34, "ZSTD_error_dictionaryCreation_failed"),
    (40, "ZSTD_error_parameter_unsupported"),
    (41, "ZSTD_error_parameter_combination_unsupported"),
    (42, "ZSTD_error_parameter_outOfBound"),
    (44, "ZSTD_error_tableLog_tooLarge"),
    (46, "ZSTD_error_maxSymbolValue_tooLarge"),
    (48, "ZSTD_error_maxSymbolValue_tooSmall"),
    (50, "ZSTD_error_stabilityCondition_notRespected"),
    (60, "ZSTD_error_stage_wrong"),
    (62, "ZSTD_error_init_missing"),
    (64, "ZSTD_error_memory_allocation"),
    (66, "ZSTD_error_workSpace_tooSmall"),
    (70, "ZSTD_error_dstSize_tooSmall"),
    (72, "ZSTD_error_srcSize_wrong"),
    (74, "ZSTD_error_dstBuffer_null"),
    (80, "ZSTD_error_noForwardProgress_destFull"),
    (82, "ZSTD_error_noForwardProgress_inputEmpty"),
];

/// The number of a zstd function's error result (`ZSTD_getErrorCode`).
fn error_number(code: usize) -> u32 {
    code.wrapping_neg() as u32
}

/// The typed error of a zstd function's error result: node:zlib's code and
/// zstd's words (`ZSTD_getErrorString`).
fn zstd_error(code: usize) -> KernelError {
    let number = error_number(code);
    let name = ERRORS.iter().find(|(n, _)| *n == number).map_or("ZSTD_error_GENERIC", |e| e.1);
    KernelError::Format { code: name, message: zstd_safe::get_error_name(code).to_owned() }
}

/// The number node:zlib gives a zstd error code as `errno`.
pub fn errno_of(code: &str) -> Option<i32> {
    ERRORS.iter().find(|(_, name)| *name == code).map(|(n, _)| *n as i32)
}

/// zstd's `(key, value)` pairs of `parameters`: little-endian int32s, two
/// by two (node:zlib's keys and values, as it hands them to zstd).
fn pairs(raw: &RawParams<'_>) -> Result<Vec<(i32, i32)>, ParamError> {
    let Some(bytes) = raw.bytes("parameters")? else { return Ok(Vec::new()) };
    if bytes.len() % 8 != 0 {
        return Err(ParamError::Value {
            name: "parameters",
            expected: "int32 (key, value) pairs".into(),
            got: format!("{} bytes", bytes.len()),
        });
    }
    let int = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    Ok(bytes.chunks_exact(8).map(|p| (int(&p[..4]), int(&p[4..]))).collect())
}

/// What node:zlib's words are for a parameter zstd refuses (its binding's
/// `ERR_ZLIB_INITIALIZATION_FAILED`).
fn refused() -> ParamError {
    ParamError::Refused { message: "Setting parameter failed".into() }
}

/// The encoder's parameter `key` set to `value`, as `ZSTD_CCtx_setParameter`
/// takes it; None for what is taken and has no effect here: the workers'
/// parameters (the pool's threads are the parallelism; zstd clamps them,
/// and a build without its threads ignores them) and a strategy of 0
/// (zstd's "the level's").
fn c_parameter(key: i32, value: i32) -> Result<Option<CParameter>, ParamError> {
    let v = value as u32;
    Ok(Some(match key {
        100 => CParameter::CompressionLevel(value),
        101 => CParameter::WindowLog(v),
        102 => CParameter::HashLog(v),
        103 => CParameter::ChainLog(v),
        104 => CParameter::SearchLog(v),
        105 => CParameter::MinMatch(v),
        106 => CParameter::TargetLength(v),
        107 => match value {
            0 => return Ok(None),
            1 => CParameter::Strategy(Strategy::ZSTD_fast),
            2 => CParameter::Strategy(Strategy::ZSTD_dfast),
            3 => CParameter::Strategy(Strategy::ZSTD_greedy),
            4 => CParameter::Strategy(Strategy::ZSTD_lazy),
            5 => CParameter::Strategy(Strategy::ZSTD_lazy2),
            6 => CParameter::Strategy(Strategy::ZSTD_btlazy2),
            7 => CParameter::Strategy(Strategy::ZSTD_btopt),
            8 => CParameter::Strategy(Strategy::ZSTD_btultra),
            9 => CParameter::Strategy(Strategy::ZSTD_btultra2),
            _ => return Err(refused()),
        },
        130 => CParameter::TargetCBlockSize(v),
        160 => CParameter::EnableLongDistanceMatching(value != 0),
        161 => CParameter::LdmHashLog(v),
        162 => CParameter::LdmMinMatch(v),
        163 => CParameter::LdmBucketSizeLog(v),
        164 => CParameter::LdmHashRateLog(v),
        200 => CParameter::ContentSizeFlag(value != 0),
        201 => CParameter::ChecksumFlag(value != 0),
        202 => CParameter::DictIdFlag(value != 0),
        400..=402 => return Ok(None),
        _ => return Err(refused()),
    }))
}

/// The decoder's: its window limit (`ZSTD_d_windowLogMax`, 0 for zstd's
/// default), the one it has.
fn d_parameter(key: i32, value: i32) -> Result<DParameter, ParamError> {
    match key {
        100 => Ok(DParameter::WindowLogMax(value as u32)),
        _ => Err(refused()),
    }
}

/// The decoder's window limit of `parameters`: `Some(log)` for a window
/// limit given (0: zstd's default, 27), checked as zstd checks it.
fn window_log_given(raw: &RawParams<'_>) -> Result<Option<u32>, ParamError> {
    let mut log = None;
    let mut dctx = zstd_safe::DCtx::try_create().ok_or_else(refused)?;
    for (key, value) in pairs(raw)? {
        let parameter = d_parameter(key, value)?;
        dctx.set_parameter(parameter).map_err(|_| refused())?;
        log = Some(if value == 0 { DEFAULT_WINDOW_LOG } else { value as u32 });
    }
    Ok(log)
}

/// zstd's default window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT).
const DEFAULT_WINDOW_LOG: u32 = 27;
