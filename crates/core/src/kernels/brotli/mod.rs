//! `brotliCompress` / `brotliDecompress` (RFC 7932) with the reference C
//! library, as `node:zlib` has them.
//!
//! Parameters with Node's meaning and defaults: `quality` (0-11, default
//! 11), `lgwin` (10-24, default 22; up to 30 with `largeWindow`), `mode`
//! (0 generic, 1 text, 2 font) and `sizeHint` (the input's expected size; a
//! one-shot task gives its own). `largeWindow` is brotli's non-standard
//! large-window format (RFC 7932 allows 16 MiB windows; this, 1 GiB): a
//! decoder reads it only with `largeWindow` too, as node:zlib's. The
//! decoder's ring buffer grows with its output, so the output limit bounds
//! its memory whatever window a stream declares.
//! Errors as node:zlib gives them: a corrupt input has the code
//! `ERR_` + brotli's error name (say `ERR__ERROR_FORMAT_PADDING_1`) and
//! brotli's error number as `errno`; an input that stops inside the stream
//! is `Z_BUF_ERROR` ("unexpected end of file"). Data after the end of the
//! stream is ignored, as node:zlib ignores it.

use brotlic::decode::{DecodeError, DecoderInfo};
use brotlic::encode::BrotliOperation;
use brotlic::{
    BlockSize, BrotliDecoder, BrotliDecoderOptions, BrotliEncoder, BrotliEncoderOptions,
    CompressionMode, LargeWindowSize, Quality, WindowSize,
};

use super::codec::Codec;
use super::codec::{fed, pump, trailing_junk, truncated, Progress, Stop};
use super::model::{Fed, Kernel};
use super::params::{ParamError, RawParams};
use super::{Dialect, Facts, Family, KernelError, Packing, RunContext, Sink};

pub struct BrotliCompress;
pub static BROTLI_COMPRESS: BrotliCompress = BrotliCompress;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrotliParams {
    quality: u8,
    lgwin: u8,
    mode: u8,
    size_hint: Option<u32>,
    /// BROTLI_PARAM_LGBLOCK: the input block's base-2 log (None: brotli's choice).
    lgblock: Option<u8>,
    /// BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING.
    no_context_modeling: bool,
    /// BROTLI_PARAM_NPOSTFIX and BROTLI_PARAM_NDIRECT: the distance codes' shape.
    npostfix: Option<u32>,
    ndirect: Option<u32>,
    /// BROTLI_PARAM_LARGE_WINDOW: `lgwin` may pass 24.
    large_window: bool,
}

impl Kernel for BrotliCompress {
    type Params = BrotliParams;
    type State = BrotliCompressState;

    fn name(&self) -> &'static str {
        "brotliCompress"
    }

    fn facts(&self) -> Facts {
        // node:zlib's BROTLI_PARAM_* keys, brotli's own.
        Facts {
            packing: Packing::Sized,
            ..Facts::codec(
                Family::Brotli,
                Dialect {
                    names: &[],
                    keyed: &[
                        (0, "mode"),
                        (1, "quality"),
                        (2, "lgwin"),
                        (3, "lgblock"),
                        (4, "disableLiteralContextModeling"),
                        (5, "sizeHint"),
                        (6, "largeWindow"),
                        (7, "npostfix"),
                        (8, "ndirect"),
                    ],
                },
            )
        }
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<BrotliParams, ParamError> {
        raw.only(&[
            "quality",
            "lgwin",
            "mode",
            "sizeHint",
            "lgblock",
            "disableLiteralContextModeling",
            "npostfix",
            "ndirect",
            "largeWindow",
        ])?;
        let large_window = raw.boolean("largeWindow")?.unwrap_or(false);
        let max_lgwin = if large_window { 30 } else { 24 };
        let npostfix = raw.integer("npostfix", 0..=3)?.map(|n| n as u32);
        // brotli's rule: a multiple of 2^npostfix, at most 15 of them.
        let shift = npostfix.unwrap_or(0);
        let ndirect = raw.integer("ndirect", 0..=i128::from(15u32 << shift))?.map(|n| n as u32);
        if let Some(n) = ndirect.filter(|n| n % (1 << shift) != 0) {
            return Err(ParamError::Value {
                name: "ndirect",
                expected: format!("a multiple of {} (2 to the power of npostfix)", 1 << shift),
                got: n.to_string(),
            });
        }
        Ok(BrotliParams {
            quality: raw.integer("quality", 0..=11)?.unwrap_or(11) as u8,
            lgwin: raw.integer("lgwin", 10..=max_lgwin)?.unwrap_or(22) as u8,
            mode: raw.integer("mode", 0..=2)?.unwrap_or(0) as u8,
            size_hint: raw.integer("sizeHint", 0..=i128::from(u32::MAX))?.map(|n| n as u32),
            lgblock: match raw.integer("lgblock", 0..=24)? {
                // 0 is brotli's "choose".
                None | Some(0) => None,
                Some(n) if n >= 16 => Some(n as u8),
                Some(n) => {
                    return Err(ParamError::Range {
                        name: "lgblock",
                        expected: "0 or >= 16 and <= 24".into(),
                        got: n.to_string(),
                    })
                }
            },
            no_context_modeling: raw.integer("disableLiteralContextModeling", 0..=1)?.unwrap_or(0)
                == 1,
            npostfix,
            ndirect,
            large_window,
        })
    }

    fn state_bytes(&self, p: &BrotliParams) -> usize {
        // brotli's own estimate (BrotliEncoderEstimatePeakMemoryUsage) is
        // for one call over the whole input, 10x a stream's at quality 11.
        // A stream's peak, read off the process's memory on long inputs:
        // the ring buffer and hashers grow with the window, and the
        // qualities fall in three tiers (0-1 one pass, 2-9 hashers, 10-11
        // the binary tree and zopfli).
        let window = 1usize << p.lgwin.min(24);
        match p.quality {
            0 | 1 => 512 * 1024 + window / 32,
            2..=9 => window * 5 / 2,
            _ => window * 5,
        }
    }

    fn made_bytes(&self, _p: &BrotliParams) -> usize {
        // BrotliEncoderCreateInstance's own state: the ring buffer and the
        // hashers come with the first input, sized to it when it is the
        // whole (a one-shot task, `end(body)` on a fresh stream), which
        // lets them go before the step ends.
        8 * 1024
    }

    fn start(
        &self,
        p: &BrotliParams,
        len_hint: Option<usize>,
    ) -> Result<BrotliCompressState, KernelError> {
        let mode = match p.mode {
            0 => CompressionMode::Generic,
            1 => CompressionMode::Text,
            _ => CompressionMode::Font,
        };
        let mut options = BrotliEncoderOptions::new();
        // The ranges were checked in `params`, so these constructors succeed.
        options.quality(Quality::new(p.quality).map_err(|_| invalid("quality"))?).mode(mode);
        if p.large_window {
            // brotlic writes the large-window format only past 24 bits;
            // below, a standard stream, which a large-window decoder reads too.
            options.large_window_size(LargeWindowSize::new(p.lgwin).map_err(|_| invalid("lgwin"))?);
        } else {
            options.window_size(WindowSize::new(p.lgwin).map_err(|_| invalid("lgwin"))?);
        }
        if let Some(hint) = p.size_hint.or(len_hint.map(|n| n.min(u32::MAX as usize) as u32)) {
            options.size_hint(hint);
        }
        if let Some(bits) = p.lgblock {
            options.block_size(BlockSize::new(bits).map_err(|_| invalid("lgblock"))?);
        }
        if p.no_context_modeling {
            options.disable_context_modeling(true);
        }
        if let Some(n) = p.npostfix {
            options.postfix_bits(n);
        }
        if let Some(n) = p.ndirect {
            options.direct_distance_codes(n);
        }
        let encoder = options.build().map_err(|_| invalid("parameters"))?;
        Ok(BrotliCompressState { encoder, reserve: len_hint.map(|n| n / 4 + 64) })
    }
}

fn invalid(what: &str) -> KernelError {
    KernelError::InvalidInput(format!("brotli refused the {what}"))
}

pub struct BrotliCompressState {
    encoder: BrotliEncoder,
    reserve: Option<usize>,
}

impl BrotliCompressState {
    fn pump(
        &mut self,
        input: &[u8],
        op: BrotliOperation,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Stop, KernelError> {
        if let Some(n) = self.reserve.take() {
            out.reserve(n);
        }
        let encoder = &mut self.encoder;
        let finishing = op == BrotliOperation::Finish;
        let flushing = op == BrotliOperation::Flush;
        pump(out, ctx, input, finishing || flushing, |input, room| {
            let r = encoder.compress(input, room, op).map_err(|_| invalid("input"))?;
            // A flush is done when the input is taken and nothing waits to come out.
            let flushed = flushing && r.bytes_read == input.len() && !encoder.has_output();
            let ended = (finishing && encoder.is_finished()) || flushed;
            Ok(Progress { consumed: r.bytes_read, produced: r.bytes_written, ended })
        })
    }
}

impl Codec for BrotliCompressState {
    /// BROTLI_OPERATION_FLUSH, the one flush brotli has.
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        Ok(fed(self.pump(chunk, BrotliOperation::Process, out, ctx)?, 0))
    }

    // Called again after a pause, the encoder goes on with the same operation.
    fn finish_until(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        Ok(!matches!(self.pump(&[], BrotliOperation::Finish, out, ctx)?, Stop::Paused { .. }))
    }

    fn flush_until(
        &mut self,
        _kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        Ok(!matches!(self.pump(&[], BrotliOperation::Flush, out, ctx)?, Stop::Paused { .. }))
    }
}

pub struct BrotliDecompress;
pub static BROTLI_DECOMPRESS: BrotliDecompress = BrotliDecompress;

/// node:zlib's `finishFlush` for a brotli decoder: anything but
/// BROTLI_OPERATION_FINISH (2) makes an input cut short no error (undici
/// decodes responses so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrotliDecompressParams {
    truncated_ok: bool,
    /// BROTLI_DECODER_PARAM_LARGE_WINDOW: reads the large-window format.
    large_window: bool,
    /// Input after the stream's end is refused
    /// (ERR_TRAILING_JUNK_AFTER_STREAM_END), not ignored.
    reject_garbage: bool,
}

impl Kernel for BrotliDecompress {
    type Params = BrotliDecompressParams;
    type State = BrotliDecompressState;

    fn name(&self) -> &'static str {
        "brotliDecompress"
    }

    fn facts(&self) -> Facts {
        // BROTLI_DECODER_PARAM_LARGE_WINDOW (the ring buffer's key is taken
        // and ignored by lib/codecs/options.js).
        Facts::codec(
            Family::Brotli,
            Dialect { names: &["finishFlush"], keyed: &[(1, "largeWindow")] },
        )
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<BrotliDecompressParams, ParamError> {
        raw.only(&["finishFlush", "largeWindow", "rejectGarbage"])?;
        let finish_flush = raw.integer("finishFlush", 0..=3)?.unwrap_or(2);
        Ok(BrotliDecompressParams {
            truncated_ok: finish_flush != 2,
            large_window: raw.boolean("largeWindow")?.unwrap_or(false),
            reject_garbage: raw.boolean("rejectGarbage")?.unwrap_or(false),
        })
    }

    fn expands(&self) -> bool {
        true
    }

    fn state_bytes(&self, _p: &BrotliDecompressParams) -> usize {
        // The ring buffer is the window the stream declares, unknown until
        // its header: brotli's default window (BROTLI_DEFAULT_WINDOW, 22
        // bits), and about 40 KiB of tables.
        (1 << 22) + 40 * 1024
    }

    fn start(
        &self,
        p: &BrotliDecompressParams,
        _len_hint: Option<usize>,
    ) -> Result<BrotliDecompressState, KernelError> {
        let decoder = if p.large_window {
            BrotliDecoderOptions::new()
                .large_window_size(true)
                .build()
                .map_err(|_| invalid("largeWindow"))?
        } else {
            BrotliDecoder::new()
        };
        Ok(BrotliDecompressState {
            decoder,
            done: false,
            truncated_ok: p.truncated_ok,
            reject_garbage: p.reject_garbage,
        })
    }
}

pub struct BrotliDecompressState {
    decoder: BrotliDecoder,
    done: bool,
    truncated_ok: bool,
    reject_garbage: bool,
}

impl Codec for BrotliDecompressState {
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        if self.done {
            return match (chunk.is_empty(), self.reject_garbage) {
                (true, _) => Ok(Fed::All),
                (false, true) => Err(trailing_junk()),
                (false, false) => Ok(Fed::Ended(0)),
            };
        }
        let decoder = &mut self.decoder;
        let stop = pump(out, ctx, chunk, false, |input, room| {
            let r = decoder.decompress(input, room).map_err(decode_error)?;
            Ok(Progress {
                consumed: r.bytes_read,
                produced: r.bytes_written,
                ended: r.info == DecoderInfo::Finished,
            })
        })?;
        Ok(match stop {
            Stop::NeedsInput => Fed::All,
            Stop::Paused { at } => Fed::Paused(at),
            Stop::Ended { rest } => {
                self.done = true;
                if rest == chunk.len() {
                    Fed::All
                } else if self.reject_garbage {
                    return Err(trailing_junk());
                } else {
                    Fed::Ended(rest)
                }
            }
        })
    }

    fn end(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        if self.done || self.truncated_ok {
            Ok(())
        } else {
            Err(truncated())
        }
    }
}

/// brotli's decoder error names (decode.h), by error number: node:zlib
/// makes its error code from them.
const DECODE_ERRORS: &[(isize, &str)] = &[
    (-1, "ERR__ERROR_FORMAT_EXUBERANT_NIBBLE"),
    (-2, "ERR__ERROR_FORMAT_RESERVED"),
    (-3, "ERR__ERROR_FORMAT_EXUBERANT_META_NIBBLE"),
    (-4, "ERR__ERROR_FORMAT_SIMPLE_HUFFMAN_ALPHABET"),
    (-5, "ERR__ERROR_FORMAT_SIMPLE_HUFFMAN_SAME"),
    (-6, "ERR__ERROR_FORMAT_CL_SPACE"),
    (-7, "ERR__ERROR_FORMAT_HUFFMAN_SPACE"),
    (-8, "ERR__ERROR_FORMAT_CONTEXT_MAP_REPEAT"),
    (-9, "ERR__ERROR_FORMAT_BLOCK_LENGTH_1"),
    (-10, "ERR__ERROR_FORMAT_BLOCK_LENGTH_2"),
    (-11, "ERR__ERROR_FORMAT_TRANSFORM"),
    (-12, "ERR__ERROR_FORMAT_DICTIONARY"),
    (-13, "ERR__ERROR_FORMAT_WINDOW_BITS"),
    (-14, "ERR__ERROR_FORMAT_PADDING_1"),
    (-15, "ERR__ERROR_FORMAT_PADDING_2"),
    (-16, "ERR__ERROR_FORMAT_DISTANCE"),
    (-18, "ERR__ERROR_COMPOUND_DICTIONARY"),
    (-19, "ERR__ERROR_DICTIONARY_NOT_SET"),
    (-20, "ERR__ERROR_INVALID_ARGUMENTS"),
    (-21, "ERR__ERROR_ALLOC_CONTEXT_MODES"),
    (-22, "ERR__ERROR_ALLOC_TREE_GROUPS"),
    (-25, "ERR__ERROR_ALLOC_CONTEXT_MAP"),
    (-26, "ERR__ERROR_ALLOC_RING_BUFFER_1"),
    (-27, "ERR__ERROR_ALLOC_RING_BUFFER_2"),
    (-30, "ERR__ERROR_ALLOC_BLOCK_TYPE_TREES"),
    (-31, "ERR__ERROR_UNREACHABLE"),
];

fn decode_error(e: DecodeError) -> KernelError {
    let number = e as isize;
    let code = DECODE_ERRORS
        .iter()
        .find(|(n, _)| *n == number)
        .map_or("ERR_TIDEPOOL_CORRUPT_INPUT", |(_, name)| name);
    // node:zlib's words for every brotli decoding error.
    KernelError::Format { code, message: "Decompression failed".to_owned() }
}

/// The error number node:zlib gives a brotli error code as `errno`.
pub fn errno_of(code: &str) -> Option<i32> {
    DECODE_ERRORS.iter().find(|(_, name)| *name == code).map(|(n, _)| *n as i32)
}

#[cfg(test)]
mod tests;
