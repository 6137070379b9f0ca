//! `brotliCompress` / `brotliDecompress` (RFC 7932) with the reference C
//! library, as `node:zlib` has them.
//!
//! Parameters with Node's meaning and defaults: `quality` (0-11, default
//! 11), `lgwin` (10-24, default 22), `mode` (0 generic, 1 text, 2 font) and
//! `sizeHint` (the input's expected size; a one-shot task gives its own).
//! Errors as node:zlib gives them: a corrupt input has the code
//! `ERR_` + brotli's error name (say `ERR__ERROR_FORMAT_PADDING_1`) and
//! brotli's error number as `errno`; an input that stops inside the stream
//! is `Z_BUF_ERROR` ("unexpected end of file"). Data after the end of the
//! stream is ignored, as node:zlib ignores it.

use brotlic::decode::{DecodeError, DecoderInfo};
use brotlic::encode::BrotliOperation;
use brotlic::{
    BrotliDecoder, BrotliEncoder, BrotliEncoderOptions, CompressionMode, Quality, WindowSize,
};

use super::codec::{fed, finish_all, flush_all, pump, truncated, update_all, Progress, Stop};
use super::model::{Fed, Kernel, Transform};
use super::params::{ParamError, RawParams};
use super::{KernelError, RunContext, Sink};

pub struct BrotliCompress;
pub static BROTLI_COMPRESS: BrotliCompress = BrotliCompress;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrotliParams {
    quality: u8,
    lgwin: u8,
    mode: u8,
    size_hint: Option<u32>,
}

impl Kernel for BrotliCompress {
    type Params = BrotliParams;
    type State = BrotliCompressState;

    fn name(&self) -> &'static str {
        "brotliCompress"
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<BrotliParams, ParamError> {
        raw.only(&["quality", "lgwin", "mode", "sizeHint"])?;
        Ok(BrotliParams {
            quality: raw.integer("quality", 0..=11)?.unwrap_or(11) as u8,
            lgwin: raw.integer("lgwin", 10..=24)?.unwrap_or(22) as u8,
            mode: raw.integer("mode", 0..=2)?.unwrap_or(0) as u8,
            size_hint: raw.integer("sizeHint", 0..=i128::from(u32::MAX))?.map(|n| n as u32),
        })
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
        options
            .quality(Quality::new(p.quality).map_err(|_| invalid("quality"))?)
            .window_size(WindowSize::new(p.lgwin).map_err(|_| invalid("lgwin"))?)
            .mode(mode);
        if let Some(hint) = p.size_hint.or(len_hint.map(|n| n.min(u32::MAX as usize) as u32)) {
            options.size_hint(hint);
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

impl Transform for BrotliCompressState {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        update_all(self, chunk, out, ctx)
    }

    fn finish(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        finish_all(self, out, ctx)
    }

    /// BROTLI_OPERATION_FLUSH, the one flush brotli has.
    fn flush(
        &mut self,
        kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        flush_all(self, kind, out, ctx)
    }

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

impl Kernel for BrotliDecompress {
    type Params = ();
    type State = BrotliDecompressState;

    fn name(&self) -> &'static str {
        "brotliDecompress"
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<(), ParamError> {
        raw.only(&[])
    }

    fn expands(&self) -> bool {
        true
    }

    fn start(
        &self,
        _p: &(),
        _len_hint: Option<usize>,
    ) -> Result<BrotliDecompressState, KernelError> {
        Ok(BrotliDecompressState { decoder: BrotliDecoder::new(), done: false })
    }
}

pub struct BrotliDecompressState {
    decoder: BrotliDecoder,
    done: bool,
}

impl Transform for BrotliDecompressState {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        update_all(self, chunk, out, ctx)
    }

    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        if self.done {
            return Ok(if chunk.is_empty() { Fed::All } else { Fed::Ended(0) });
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
                } else {
                    Fed::Ended(rest)
                }
            }
        })
    }

    fn finish(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        if self.done {
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
mod tests {
    use super::*;
    use crate::input::Input;
    use crate::kernels::codec::testing::{check_pair, params, run, run_with, text};

    #[test]
    fn round_trips_limits_bombs_truncation_and_cancellation() {
        check_pair("brotliCompress", "brotliDecompress", 1000);
    }

    #[test]
    fn quality_window_and_mode_reach_brotli() {
        let data = text(200_000);
        let q1 = run_with(
            "brotliCompress",
            &params("brotliCompress", &[("quality", 1.0)]),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        let q11 = run("brotliCompress", &data).unwrap();
        assert!(q11.len() < q1.len(), "{} vs {}", q11.len(), q1.len());
        for p in [[("lgwin", 10.0)], [("mode", 1.0)], [("sizeHint", 1000.0)]] {
            let packed = run_with(
                "brotliCompress",
                &params("brotliCompress", &p),
                Input::Owned(data.clone()),
                usize::MAX,
            )
            .unwrap();
            assert_eq!(run("brotliDecompress", &packed).unwrap(), data, "{p:?}");
        }
    }

    #[test]
    fn corrupt_input_has_node_s_code_and_data_after_the_stream_is_ignored() {
        let err = run("brotliDecompress", b"garbage!!").unwrap_err();
        assert_eq!(
            err,
            KernelError::Format {
                code: "ERR__ERROR_FORMAT_PADDING_1",
                message: "Decompression failed".into()
            }
        );
        assert_eq!(errno_of("ERR__ERROR_FORMAT_PADDING_1"), Some(-14));
        let tail = [run("brotliCompress", b"hello").unwrap(), b"xyz".to_vec()].concat();
        assert_eq!(run("brotliDecompress", &tail).unwrap(), b"hello");
    }
}
