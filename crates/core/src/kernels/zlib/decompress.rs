//! The decoders: `gunzip`, `inflate`, `inflateRaw` and `unzip`, on
//! zlib-rs's safe `Inflate`.

use std::sync::Arc;

use zlib_rs::{Inflate, InflateError, InflateFlush, Status};

use super::{
    format_error, Format, Z_BUF_ERROR, Z_DATA_ERROR, Z_FINISH, Z_MEM_ERROR, Z_NEED_DICT,
    Z_STREAM_ERROR,
};
use crate::kernels::codec::Codec;
use crate::kernels::codec::{pump_in, trailing_junk, Progress, Rooms, Stop};
use crate::kernels::model::{Fed, Kernel};
use crate::kernels::params::{ParamError, RawParams};
use crate::kernels::{Dialect, Facts, Family};
use crate::kernels::{KernelError, RunContext, Sink};

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
/// the preset dictionary it may be asked for, whether an input may stop
/// inside its stream, and what it does with input after its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecompressParams {
    window_bits: u8,
    dictionary: Option<Arc<[u8]>>,
    truncated_ok: bool,
    garbage: Garbage,
    /// node:zlib's output buffer (`chunkSize`): zlib-rs is given its rooms,
    /// as zlib's window check counts the output of the call it is in (a
    /// window smaller than the stream's refuses a distance or not by it).
    chunk_size: Option<usize>,
}

/// Input after the end of the stream (`rejectGarbage`): node:zlib ignores
/// it, or, told to (`rejectGarbageAfterEnd`), refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Garbage {
    /// Ignored (after a gzip member: a zero byte; else, another member).
    Ignored,
    /// Refused, once the members of a gzip input are read (node:zlib of
    /// Node 22, whose stream refuses what its zlib left).
    RefusedAfterMembers,
    /// Refused, whatever follows a stream, a gzip member too (Node 24+).
    Refused,
}

impl Kernel for Decompress {
    type Params = DecompressParams;
    type State = DecompressState;

    fn name(&self) -> &'static str {
        self.name
    }

    fn facts(&self) -> Facts {
        Facts::codec(
            Family::Deflate,
            Dialect { names: &["windowBits", "dictionary", "finishFlush"], keyed: &[] },
        )
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<DecompressParams, ParamError> {
        raw.only(&["windowBits", "dictionary", "finishFlush", "rejectGarbage", "chunkSize"])?;
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
        let garbage = match raw.integer("rejectGarbage", 0..=2)?.unwrap_or(0) {
            0 => Garbage::Ignored,
            1 => Garbage::RefusedAfterMembers,
            _ => Garbage::Refused,
        };
        Ok(DecompressParams {
            window_bits,
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
            truncated_ok: finish_flush != Z_FINISH,
            garbage,
            chunk_size: raw.integer("chunkSize", 64..=i128::from(u32::MAX))?.map(|n| n as usize),
        })
    }

    fn expands(&self) -> bool {
        true
    }

    /// `gunzip` of one whole member with libdeflate (`libdeflate.rs`), with
    /// the defaults (window, no dictionary, a finished stream); whatever
    /// it does not take runs through zlib-rs.
    fn run_contiguous(
        &self,
        p: &DecompressParams,
        input: &[u8],
        ctx: &RunContext<'_>,
        out: &mut Sink,
    ) -> Option<Result<(), KernelError>> {
        let plain = self.format == Format::Gzip
            && matches!(p.window_bits, 0 | 15)
            && p.dictionary.is_none()
            && !p.truncated_ok
            && p.garbage == Garbage::Ignored;
        if !plain {
            return None;
        }
        if let Err(e) = ctx.check() {
            return Some(Err(e));
        }
        super::libdeflate::gunzip(input, out).then_some(Ok(()))
    }

    fn state_bytes(&self, p: &DecompressParams) -> usize {
        // zlib.h: inflate's window, and about 7 KiB of state and tables.
        let bits = if p.window_bits == 0 { 15 } else { u32::from(p.window_bits.min(15)) };
        (1 << bits) + 7 * 1024
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
            format: self.format,
            detects: self.format == Format::Auto,
            window_bits: p.window_bits,
            dictionary: p.dictionary.clone(),
            truncated_ok: p.truncated_ok,
            garbage: p.garbage,
            chunk_size: p.chunk_size,
            total: 0,
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
    /// `Auto` until the first byte tells gzip from zlib.
    format: Format,
    /// `unzip`: the members after a gzip member are gzip or zlib, as their
    /// header says (node:zlib resets a zlib that detects the format).
    detects: bool,
    window_bits: u8,
    dictionary: Option<Arc<[u8]>>,
    truncated_ok: bool,
    garbage: Garbage,
    chunk_size: Option<usize>,
    /// Output bytes so far (where node:zlib's output buffer is).
    total: u64,
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
                Phase::Done if at == input.len() => return Ok(Fed::All),
                Phase::Done if self.garbage != Garbage::Ignored => return Err(trailing_junk()),
                Phase::Done => return Ok(Fed::Ended(at)),
                Phase::AfterMember if at == input.len() => return Ok(Fed::All),
                Phase::AfterMember if self.garbage == Garbage::Refused => {
                    return Err(trailing_junk())
                }
                // Node's rule: after a gzip member, a zero byte ends the
                // input (padding); anything else must be another member.
                Phase::AfterMember if input[at] == 0 => {
                    self.phase = Phase::Done;
                    continue;
                }
                Phase::AfterMember => {
                    let format = if self.detects { Format::Auto } else { self.format };
                    self.inflate = new_inflate(format, self.window_bits);
                    self.phase = Phase::InStream;
                }
                Phase::InStream => {}
            }
            // A gzip member starts with 0x1f, which no zlib header does;
            // after one, whatever follows is read as further members.
            if let (Format::Auto, Some(&first)) = (self.format, input.get(at)) {
                self.format = if first == 0x1f { Format::Gzip } else { Format::Zlib };
            }
            let inflate = &mut self.inflate;
            let dictionary = self.dictionary.as_deref();
            let rooms = self.chunk_size.map(|size| Rooms { size, total: &mut self.total });
            let stop = pump_in(out, ctx, &input[at..], false, rooms, |input, room| {
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

impl Codec for DecompressState {
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        self.inflate_until(chunk, out, ctx)
    }

    fn end(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
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
