//! The deflate family, named after `node:zlib`'s functions: `gzip` /
//! `gunzip`, `deflate` / `inflate` (the zlib format), `deflateRaw` /
//! `inflateRaw` and `unzip` (gzip or zlib, told by the header), on zlib-rs
//! (zlib's algorithms in safe Rust).
//!
//! The parameters are zlib's, with `node:zlib`'s names, ranges and
//! defaults. The decoders behave as Node's do at the edges: a gzip input may
//! hold several members (their outputs are joined), zero bytes after a
//! member are padding, other bytes must start another member; data after
//! the end of a zlib or raw stream is ignored; an input that ends before its
//! stream does is `Z_BUF_ERROR` ("unexpected end of file"), a corrupt one
//! `Z_DATA_ERROR`.
//!
//! A preset `dictionary` is zlib's, as Node sets it: a deflate or raw
//! encoder starts with it; a raw decoder too; a zlib-format decoder (inflate,
//! unzip) loads it when the stream asks for one, and a stream that asks
//! for one it was not given is `Z_NEED_DICT` ("Missing dictionary"; "Bad
//! dictionary" when the one given is not the one named).
//!
//! Output goes straight into the task's [`Sink`], whose limit
//! (`maxOutputBytes`) stops a decompression bomb as soon as it passes it:
//! memory stays near the limit.

use std::sync::Arc;

use zlib_rs::{Inflate, InflateError, InflateFlush, Status};

use deflater::{Deflater, Failure};

use super::codec::{fed, finish_all, flush_all, pump, update_all, Progress, Stop};
use super::model::{Fed, Kernel, Transform};
use super::params::{ParamError, RawParams};
use super::{KernelError, RunContext, Sink};

/// The container around the deflate stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// RFC 1952: header, deflate, CRC-32 and length.
    Gzip,
    /// RFC 1950: two-byte header, deflate, Adler-32.
    Zlib,
    /// RFC 1951 alone.
    Raw,
    /// Gzip or zlib, as the header says (decoding only: `unzip`).
    Auto,
}

impl Format {
    /// zlib's encoding of the format in `windowBits`.
    fn window_bits(self, bits: u8) -> i32 {
        match self {
            Format::Gzip => 16 + i32::from(bits),
            Format::Zlib => i32::from(bits),
            Format::Raw => -i32::from(bits),
            Format::Auto => 32 + i32::from(bits),
        }
    }
}

/// zlib's error codes as Node names them.
const Z_DATA_ERROR: &str = "Z_DATA_ERROR";
const Z_BUF_ERROR: &str = "Z_BUF_ERROR";
const Z_NEED_DICT: &str = "Z_NEED_DICT";
const Z_MEM_ERROR: &str = "Z_MEM_ERROR";
const Z_STREAM_ERROR: &str = "Z_STREAM_ERROR";

/// zlib's return code for each of the codes above (node:zlib's `errno`).
pub(super) fn errno_of(code: &str) -> Option<i32> {
    match code {
        Z_NEED_DICT => Some(2),
        Z_STREAM_ERROR => Some(-2),
        Z_DATA_ERROR => Some(-3),
        Z_MEM_ERROR => Some(-4),
        Z_BUF_ERROR => Some(-5),
        _ => None,
    }
}

/// The flush kind that stands for node:zlib's `reset()`: the codec starts
/// over (with its dictionary), as a new stream would, after the writes
/// before it. Above every zlib flush constant; the JS side writes it
/// (lib/codec-stream.js).
pub const RESET: u32 = 0x200;

/// The flush kind that stands for an empty write: node:zlib calls deflate
/// for it (Z_NO_FLUSH, no input), so a flush after it is not a repeat of
/// the one before and writes its empty block (ws counts on the four bytes
/// a sync flush ends with).
pub const EMPTY_WRITE: u32 = 0x300;

fn format_error(code: &'static str, message: &str) -> KernelError {
    KernelError::Format { code, message: message.to_owned() }
}

// ---- compression ----------------------------------------------------------

/// `gzip`, `deflate`, `deflateRaw`.
pub struct Compress {
    name: &'static str,
    format: Format,
}

pub static GZIP: Compress = Compress { name: "gzip", format: Format::Gzip };
pub static DEFLATE: Compress = Compress { name: "deflate", format: Format::Zlib };
pub static DEFLATE_RAW: Compress = Compress { name: "deflateRaw", format: Format::Raw };

/// zlib's deflate parameters, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressParams {
    level: i32,
    window_bits: u8,
    mem_level: i32,
    strategy: i32,
    dictionary: Option<Arc<[u8]>>,
    /// The flush the end is (node:zlib's `finishFlush`): Z_FINISH closes
    /// the stream; another kind leaves it open, flushed that way.
    finish_flush: i32,
}

const GZIP_PARAMS: &[&str] = &["level", "windowBits", "memLevel", "strategy", "finishFlush"];
/// A gzip stream has no preset dictionary (zlib refuses one).
const COMPRESS_PARAMS: &[&str] =
    &["level", "windowBits", "memLevel", "strategy", "finishFlush", "dictionary"];

impl Kernel for Compress {
    type Params = CompressParams;
    type State = CompressState;

    fn name(&self) -> &'static str {
        self.name
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<CompressParams, ParamError> {
        raw.only(if self.format == Format::Gzip { GZIP_PARAMS } else { COMPRESS_PARAMS })?;
        // Node's ranges and defaults (zlib.constants: Z_DEFAULT_COMPRESSION,
        // Z_DEFAULT_WINDOWBITS, Z_DEFAULT_MEMLEVEL, Z_DEFAULT_STRATEGY).
        // windowBits 8 is zlib's "9 in disguise"; Node refuses it for gzip.
        let min_bits = if self.format == Format::Gzip { 9 } else { 8 };
        // Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED.
        let strategy = raw.integer("strategy", 0..=4)?.unwrap_or(0) as i32;
        Ok(CompressParams {
            level: raw.integer("level", -1..=9)?.unwrap_or(-1) as i32,
            window_bits: raw.integer("windowBits", min_bits..=15)?.unwrap_or(15) as u8,
            mem_level: raw.integer("memLevel", 1..=9)?.unwrap_or(8) as i32,
            strategy,
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
            finish_flush: raw.integer("finishFlush", 0..=5)?.unwrap_or(Z_FINISH) as i32,
        })
    }

    fn start(
        &self,
        p: &CompressParams,
        len_hint: Option<usize>,
    ) -> Result<CompressState, KernelError> {
        // zlib turns a window of 8 into 9 for zlib streams; for raw ones
        // zlib-rs refuses 8, and Node passes 9 itself: so do we.
        let bits = if self.format == Format::Raw { p.window_bits.max(9) } else { p.window_bits };
        let mut deflate =
            Deflater::new(p.level, self.format.window_bits(bits), p.mem_level, p.strategy)
                .map_err(deflate_error)?;
        if let Some(dictionary) = &p.dictionary {
            deflate.set_dictionary(dictionary).map_err(deflate_error)?;
        }
        // Text compresses 3-10x, random data not at all: a quarter of the
        // input is one reservation for the common case, and the sink grows
        // (doubling) for the rest.
        Ok(CompressState {
            deflate,
            finish_flush: p.finish_flush,
            dictionary: p.dictionary.clone(),
            reserve: len_hint.map(|n| n / 4 + 64),
        })
    }
}

pub struct CompressState {
    deflate: Deflater,
    finish_flush: i32,
    /// Set again by a reset.
    dictionary: Option<Arc<[u8]>>,
    reserve: Option<usize>,
}

impl CompressState {
    /// Runs deflate over `input` with `flush` until it has taken all of it
    /// (and, for a flush or `Finish`, written all it holds: deflate says
    /// so by writing nothing more), or the sink's pause point.
    fn pump(
        &mut self,
        input: &[u8],
        flush: i32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Stop, KernelError> {
        if let Some(n) = self.reserve.take() {
            out.reserve(n);
        }
        let deflate = &mut self.deflate;
        pump(out, ctx, input, flush != Z_NO_FLUSH, |input, room| {
            let step = deflate.deflate(input, room, flush).map_err(deflate_error)?;
            Ok(Progress { consumed: step.consumed, produced: step.produced, ended: step.ended })
        })
    }

    /// node:zlib's params(): a sync flush, then the new level and strategy.
    fn params(
        &mut self,
        level: i32,
        strategy: i32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        if matches!(self.pump(&[], Z_SYNC_FLUSH, out, ctx)?, Stop::Paused { .. }) {
            return Ok(false);
        }
        // After the flush nothing is held back: no output is written.
        let room = out.unfilled(64)?;
        let produced = self.deflate.params(level, strategy, room).map_err(deflate_error)?;
        out.commit(produced);
        Ok(true)
    }
}

/// zlib's flush constants.
const Z_NO_FLUSH: i32 = 0;
const Z_SYNC_FLUSH: i32 = 2;

fn deflate_error(e: Failure) -> KernelError {
    match e.code {
        libz_rs_sys::Z_MEM_ERROR => format_error(Z_MEM_ERROR, "out of memory"),
        _ => format_error(Z_STREAM_ERROR, e.message.as_deref().unwrap_or("stream error")),
    }
}

/// zlib's flush constants as `node:zlib` passes them: Z_PARTIAL_FLUSH,
/// Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_BLOCK.
fn deflate_flush(kind: u32) -> Result<i32, KernelError> {
    match kind {
        1 | 2 | 3 | 5 => Ok(kind as i32),
        _ => Err(KernelError::InvalidInput(format!("no deflate flush of kind {kind}"))),
    }
}

/// node:zlib's `params(level, strategy)` as a flush kind (above zlib's,
/// below [`RESET`]): `PARAMS + (level + 1) * 8 + strategy`.
pub const PARAMS: u32 = 0x100;

/// The level and strategy a [`PARAMS`] kind carries, if it is one.
fn params_of(kind: u32) -> Option<(i32, i32)> {
    let code = kind.checked_sub(PARAMS)?;
    let (level, strategy) = ((code / 8) as i32 - 1, (code % 8) as i32);
    ((-1..=9).contains(&level) && (0..=4).contains(&strategy)).then_some((level, strategy))
}

impl Transform for CompressState {
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
        Ok(fed(self.pump(chunk, Z_NO_FLUSH, out, ctx)?, 0))
    }

    // Called again after a pause, deflate goes on with the same flush
    // (zlib's rule: the same flush value until it is done).
    fn finish_until(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        Ok(!matches!(self.pump(&[], self.finish_flush, out, ctx)?, Stop::Paused { .. }))
    }

    fn flush_until(
        &mut self,
        kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        if kind == RESET {
            self.deflate.reset().map_err(deflate_error)?;
            if let Some(dictionary) = &self.dictionary {
                self.deflate.set_dictionary(dictionary).map_err(deflate_error)?;
            }
            return Ok(true);
        }
        if let Some((level, strategy)) = params_of(kind) {
            return self.params(level, strategy, out, ctx);
        }
        if kind == EMPTY_WRITE {
            let room = out.unfilled(64)?;
            let step = self.deflate.deflate(&[], room, Z_NO_FLUSH).map_err(deflate_error)?;
            out.commit(step.produced);
            return Ok(true);
        }
        Ok(!matches!(self.pump(&[], deflate_flush(kind)?, out, ctx)?, Stop::Paused { .. }))
    }
}

// ---- decompression --------------------------------------------------------

/// `gunzip`, `inflate`, `inflateRaw`.
pub struct Decompress {
    name: &'static str,
    format: Format,
}

pub static GUNZIP: Decompress = Decompress { name: "gunzip", format: Format::Gzip };
pub static INFLATE: Decompress = Decompress { name: "inflate", format: Format::Zlib };
pub static INFLATE_RAW: Decompress = Decompress { name: "inflateRaw", format: Format::Raw };
pub static UNZIP: Decompress = Decompress { name: "unzip", format: Format::Auto };

/// The window size a decoder allows (0: the one the stream's header names),
/// the preset dictionary it may be asked for, and whether an input may stop
/// inside its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecompressParams {
    window_bits: u8,
    dictionary: Option<Arc<[u8]>>,
    truncated_ok: bool,
}

/// zlib's Z_FINISH: node:zlib's default `finishFlush`.
const Z_FINISH: i128 = 4;

impl Kernel for Decompress {
    type Params = DecompressParams;
    type State = DecompressState;

    fn name(&self) -> &'static str {
        self.name
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<DecompressParams, ParamError> {
        raw.only(&["windowBits", "dictionary", "finishFlush"])?;
        // 0 (take the header's) exists only where there is a header.
        let window_bits = match raw.integer("windowBits", 0..=15)? {
            None => 15,
            Some(0) if self.format != Format::Raw => 0,
            Some(bits) if bits >= 8 => bits as u8,
            Some(bits) => {
                let expected = if self.format == Format::Raw {
                    ">= 8 and <= 15"
                } else {
                    "0 or >= 8 and <= 15"
                };
                return Err(ParamError::Range {
                    name: "windowBits",
                    expected: expected.into(),
                    got: bits.to_string(),
                });
            }
        };
        // node:zlib's finishFlush: with anything but Z_FINISH, the end of the
        // input is a flush, and an input cut short is no error.
        let finish_flush = raw.integer("finishFlush", 0..=5)?.unwrap_or(Z_FINISH);
        Ok(DecompressParams {
            window_bits,
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
            truncated_ok: finish_flush != Z_FINISH,
        })
    }

    fn expands(&self) -> bool {
        true
    }

    fn start(
        &self,
        p: &DecompressParams,
        _len_hint: Option<usize>,
    ) -> Result<DecompressState, KernelError> {
        let mut inflate = new_inflate(self.format, p.window_bits);
        if let (Format::Raw, Some(dictionary)) = (self.format, &p.dictionary) {
            inflate.set_dictionary(dictionary).map_err(|e| inflate_error(&inflate, e))?;
        }
        Ok(DecompressState {
            inflate,
            origin: self.format,
            format: self.format,
            window_bits: p.window_bits,
            dictionary: p.dictionary.clone(),
            truncated_ok: p.truncated_ok,
            phase: Phase::InStream,
        })
    }
}

fn new_inflate(format: Format, window_bits: u8) -> Inflate {
    // zlib-rs takes the gzip flag in window_bits (16 + bits), like zlib. A
    // gzip header names no window size, so "the header's" (0) is the largest.
    match format {
        Format::Gzip => Inflate::new(true, 16 + if window_bits == 0 { 15 } else { window_bits }),
        Format::Zlib => Inflate::new(true, window_bits),
        Format::Raw => Inflate::new(false, window_bits),
        Format::Auto => Inflate::new(true, 32 + if window_bits == 0 { 15 } else { window_bits }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Inside a stream (or a gzip member): more input is needed.
    InStream,
    /// A gzip member has ended; what follows decides (another member, or padding).
    AfterMember,
    /// The stream has ended; the rest of the input is ignored.
    Done,
}

pub struct DecompressState {
    inflate: Inflate,
    /// The kernel's format, for a reset.
    origin: Format,
    /// `Auto` until the first byte tells gzip from zlib.
    format: Format,
    window_bits: u8,
    dictionary: Option<Arc<[u8]>>,
    truncated_ok: bool,
    phase: Phase,
}

impl DecompressState {
    /// Inflates `input` until it is taken, the stream ends (for a gzip
    /// input, its last member: a zero byte after a member, or a zlib or raw
    /// stream's end) or the sink's pause point.
    fn inflate_until(
        &mut self,
        input: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        let mut at = 0;
        loop {
            match self.phase {
                Phase::Done => {
                    return Ok(if at == input.len() { Fed::All } else { Fed::Ended(at) })
                }
                // Node's rule: after a gzip member, a zero byte ends the
                // input (padding); anything else must be another member.
                Phase::AfterMember => match input.get(at) {
                    None => return Ok(Fed::All),
                    Some(0) => {
                        self.phase = Phase::Done;
                        return Ok(Fed::Ended(at));
                    }
                    Some(_) => {
                        self.inflate = new_inflate(self.format, self.window_bits);
                        self.phase = Phase::InStream;
                    }
                },
                Phase::InStream => {}
            }
            // A gzip member starts with 0x1f, which no zlib header does.
            if let (Format::Auto, Some(&first)) = (self.format, input.get(at)) {
                self.format = if first == 0x1f { Format::Gzip } else { Format::Zlib };
            }
            let inflate = &mut self.inflate;
            let dictionary = self.dictionary.as_deref();
            let stop = pump(out, ctx, &input[at..], false, |input, room| {
                let (in_before, out_before) = (inflate.total_in(), inflate.total_out());
                let mut status = inflate.decompress(input, room, InflateFlush::NoFlush);
                // As zlib's users do: the dictionary is loaded when the
                // stream names one, and inflate goes on past the header.
                if let (Err(InflateError::NeedDict { .. }), Some(dictionary)) =
                    (&status, dictionary)
                {
                    if inflate.set_dictionary(dictionary).is_err() {
                        return Err(format_error(Z_NEED_DICT, "Bad dictionary"));
                    }
                    let taken = (inflate.total_in() - in_before) as usize;
                    status = inflate.decompress(&input[taken..], room, InflateFlush::NoFlush);
                }
                let status = status.map_err(|e| inflate_error(inflate, e))?;
                Ok(Progress {
                    consumed: (inflate.total_in() - in_before) as usize,
                    produced: (inflate.total_out() - out_before) as usize,
                    ended: status == Status::StreamEnd,
                })
            })?;
            match stop {
                Stop::NeedsInput => return Ok(Fed::All),
                Stop::Paused { at: took } => return Ok(Fed::Paused(at + took)),
                Stop::Ended { rest } => {
                    at += rest;
                    self.phase =
                        if self.format == Format::Gzip { Phase::AfterMember } else { Phase::Done };
                }
            }
        }
    }
}

/// The typed error of a failed inflate call, with zlib's own words for it
/// when it has them ("incorrect header check", ...).
fn inflate_error(inflate: &Inflate, e: InflateError) -> KernelError {
    let detail = inflate.error_message().unwrap_or(e.as_str());
    match e {
        InflateError::DataError => format_error(Z_DATA_ERROR, detail),
        InflateError::NeedDict { .. } => format_error(Z_NEED_DICT, "Missing dictionary"),
        InflateError::MemError => format_error(Z_MEM_ERROR, detail),
        InflateError::StreamError => format_error(Z_STREAM_ERROR, detail),
    }
}

impl Transform for DecompressState {
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
        self.inflate_until(chunk, out, ctx)
    }

    // A decoder holds nothing back for a flush; a reset starts it over.
    fn flush(
        &mut self,
        kind: u32,
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        if kind == RESET {
            self.format = self.origin;
            self.inflate = new_inflate(self.format, self.window_bits);
            if let (Format::Raw, Some(dictionary)) = (self.format, &self.dictionary) {
                let inflate = &mut self.inflate;
                inflate.set_dictionary(dictionary).map_err(|e| inflate_error(inflate, e))?;
            }
            self.phase = Phase::InStream;
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        match self.phase {
            // Node's words for an input that stops inside a stream.
            Phase::InStream if !self.truncated_ok => {
                Err(format_error(Z_BUF_ERROR, "unexpected end of file"))
            }
            Phase::InStream => Ok(()),
            Phase::AfterMember | Phase::Done => Ok(()),
        }
    }
}
mod deflater;
#[cfg(test)]
mod tests;
