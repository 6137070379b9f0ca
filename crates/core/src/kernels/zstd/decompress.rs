//! The decoder, `zstdDecompress`: zstd's streaming API, frame by frame, so
//! that what follows a frame is read as the caller's node:zlib reads it.

use std::sync::Arc;

use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};

use super::{window_log_given, zstd_error};
use crate::kernels::codec::Codec;
use crate::kernels::codec::{fed, pump_in, trailing_junk, truncated, Progress, Rooms, Stop};
use crate::kernels::model::{Fed, Kernel};
use crate::kernels::params::{ParamError, RawParams};
use crate::kernels::{Dialect, Facts, Family};
use crate::kernels::{KernelError, RunContext, Sink};

pub struct ZstdDecompress;
pub static ZSTD_DECOMPRESS: ZstdDecompress = ZstdDecompress;

/// What the decoder makes of the input after a frame (`trailing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trailing {
    /// More frames, whatever follows: what is not one is corrupt (the zstd
    /// CLI's reading; the pool's own default).
    Frames,
    /// node:zlib of Node 22: a frame's end in a piece of input ends the
    /// input (its zstd is called once per write); at the end of a piece,
    /// the next piece starts a frame.
    FirstInPiece,
    /// node:zlib of Node 24+: more frames, each told by its magic number
    /// (whose first bytes may end a piece: it waits for the rest); anything
    /// else ends the input.
    Magic,
}

/// node:zlib's `finishFlush` for a zstd decoder: anything but ZSTD_e_end
/// (2) makes an input cut short no error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZstdDecompressParams {
    truncated_ok: bool,
    /// The dictionary the frames were made with.
    dictionary: Option<Arc<[u8]>>,
    /// A window limit given (`ZSTD_d_windowLogMax`), as a base-2 log.
    window_log: Option<u32>,
    trailing: Trailing,
    /// What the input ends with after its frames is refused
    /// (ERR_TRAILING_JUNK_AFTER_STREAM_END), not ignored.
    reject_garbage: bool,
    /// node:zlib's output buffer (`chunkSize`): zstd is given its rooms,
    /// as a frame is read whole (without the window check) when the room
    /// holds it.
    chunk_size: Option<usize>,
}

/// The window of a frame made at zstd's default level, for a decoder's
/// state size before it has read one.
const DEFAULT_WINDOW: usize = 1 << 21;

impl Kernel for ZstdDecompress {
    type Params = ZstdDecompressParams;
    type State = ZstdDecompressState;

    fn name(&self) -> &'static str {
        "zstdDecompress"
    }

    fn facts(&self) -> Facts {
        Facts::codec(Family::Zstd, Dialect { names: &["finishFlush", "dictionary"], keyed: &[] })
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<ZstdDecompressParams, ParamError> {
        raw.only(&[
            "finishFlush",
            "dictionary",
            "parameters",
            "trailing",
            "rejectGarbage",
            "chunkSize",
        ])?;
        let finish_flush = raw.integer("finishFlush", 0..=2)?.unwrap_or(2);
        let trailing = match raw.integer("trailing", 0..=2)?.unwrap_or(0) {
            0 => Trailing::Frames,
            1 => Trailing::FirstInPiece,
            _ => Trailing::Magic,
        };
        Ok(ZstdDecompressParams {
            truncated_ok: finish_flush != 2,
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
            window_log: window_log_given(raw)?,
            trailing,
            reject_garbage: raw.boolean("rejectGarbage")?.unwrap_or(false),
            chunk_size: raw.integer("chunkSize", 64..=i128::from(u32::MAX))?.map(|n| n as usize),
        })
    }

    fn expands(&self) -> bool {
        true
    }

    fn state_bytes(&self, p: &ZstdDecompressParams) -> usize {
        // The window is the frame's, unknown until its header: that of a
        // frame of zstd's default level (3), 2 MiB, or the limit given.
        let window = p.window_log.map_or(DEFAULT_WINDOW, |log| DEFAULT_WINDOW.min(1 << log));
        // SAFETY: a pure function of a size; it reads no memory of ours.
        let state = unsafe { zstd_safe::zstd_sys::ZSTD_estimateDStreamSize(window) };
        state + p.dictionary.as_ref().map_or(0, |d| d.len())
    }

    fn start(
        &self,
        p: &ZstdDecompressParams,
        len_hint: Option<usize>,
    ) -> Result<ZstdDecompressState, KernelError> {
        let mut dctx = DCtx::try_create().ok_or_else(|| KernelError::Format {
            code: "ZSTD_error_memory_allocation",
            message: "Allocation error : not enough memory".into(),
        })?;
        if let Some(dictionary) = &p.dictionary {
            dctx.load_dictionary(dictionary).map_err(zstd_error)?;
        }
        Ok(ZstdDecompressState {
            dctx,
            p: p.clone(),
            seen_input: false,
            between_frames: true,
            frames: 0,
            ended_in_piece: false,
            // A one-shot task's input is one write to node:zlib.
            one_piece: len_hint.is_some(),
            ignoring: false,
            held: Vec::new(),
            window: None,
            total: 0,
        })
    }
}

pub struct ZstdDecompressState {
    dctx: DCtx<'static>,
    p: ZstdDecompressParams,
    seen_input: bool,
    /// The last call ended a frame (or none has begun): the input may end here.
    between_frames: bool,
    /// Frames ended so far (skippable ones too).
    frames: u64,
    /// The last frame ended inside the piece of input being read.
    ended_in_piece: bool,
    /// The whole input is one piece (a one-shot task's, read in chunks).
    one_piece: bool,
    /// The input after the last frame is not read (node:zlib ends there).
    ignoring: bool,
    /// The first bytes of a magic number after a frame, at the end of a
    /// piece (Trailing::Magic): zstd is handed them once the rest shows a
    /// frame follows.
    held: Vec<u8>,
    /// The window limit set (once, from the output limit and the one
    /// given), and whether it is the output limit's.
    window: Option<(u32, bool)>,
    /// Output bytes so far (where node:zlib's output buffer is).
    total: u64,
}

/// The largest window zstd's decoder accepts for an output limit: the
/// smallest power of two that holds the limit (a frame of that much content
/// may need it), within zstd's 1 KiB..128 MiB. A frame needs its window in
/// memory besides the output, so a task holds at most its limit plus twice
/// that (zstd sizes the buffer to the content when the frame says it).
pub(super) fn window_log_max(limit: usize) -> u32 {
    let ceil_log2 = usize::BITS - (limit.max(2) - 1).leading_zeros();
    ceil_log2.clamp(10, 27)
}

/// True if `head` (1 to 4 bytes) is the start of a zstd frame's magic
/// number or a skippable frame's (zstd.h's ZSTD_MAGICNUMBER,
/// ZSTD_MAGIC_SKIPPABLE_START: 0x184D2A50 to 0x184D2A5F), little-endian.
fn magic_prefix(head: &[u8]) -> bool {
    const FRAME: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
    const SKIPPABLE: [u8; 3] = [0x2A, 0x4D, 0x18];
    head == &FRAME[..head.len()]
        || (head[0] & 0xF0 == 0x50 && head[1..] == SKIPPABLE[..head.len() - 1])
}

/// What comes of the input after a frame.
enum After {
    /// It is read (another frame, or no frame has ended).
    Read,
    /// The piece ends inside what may be a magic number: held, all taken.
    Wait,
    /// It is not read: node:zlib's input ends here.
    Stop,
}

impl ZstdDecompressState {
    /// What comes of `rest`, the input after the last frame's end, as
    /// node:zlib of the line `trailing` names reads it; an error to refuse
    /// it (`rejectGarbage`).
    fn after_frame(&mut self, rest: &[u8]) -> Result<After, KernelError> {
        if self.frames == 0 || !self.between_frames || rest.is_empty() {
            return Ok(After::Read);
        }
        let more = match self.p.trailing {
            Trailing::Frames => true,
            Trailing::FirstInPiece => !self.ended_in_piece,
            Trailing::Magic => {
                let mut head = std::mem::take(&mut self.held);
                let taken = rest.len().min(4 - head.len());
                let held = head.len();
                head.extend_from_slice(&rest[..taken]);
                if magic_prefix(&head) && head.len() < 4 {
                    self.held = head;
                    return Ok(After::Wait);
                }
                let more = magic_prefix(&head);
                if more && held > 0 {
                    // A frame starts with the bytes held from the last
                    // piece: zstd gets them first (it buffers a header).
                    let mut src = InBuffer::around(&head[..held]);
                    let mut dst = OutBuffer::around(&mut [][..]);
                    self.dctx.decompress_stream(&mut dst, &mut src).map_err(zstd_error)?;
                    self.between_frames = false;
                }
                more
            }
        };
        if more {
            Ok(After::Read)
        } else if self.p.reject_garbage {
            Err(trailing_junk())
        } else {
            Ok(After::Stop)
        }
    }

    /// Sets the window limit once: the output limit's (see
    /// [`window_log_max`]) or, when smaller, the one given.
    fn cap_window(&mut self, limit: usize) -> Result<(), KernelError> {
        if self.window.is_none() {
            // The output limit's is the binding one only where smaller
            // than zstd's own default (or the one given): then a frame past
            // it is too large; past zstd's, it is zstd's error.
            let ours = window_log_max(limit);
            let theirs = self.p.window_log.unwrap_or(super::DEFAULT_WINDOW_LOG);
            let window = if theirs <= ours { (theirs, false) } else { (ours, true) };
            self.dctx.set_parameter(DParameter::WindowLogMax(window.0)).map_err(zstd_error)?;
            self.window = Some(window);
        }
        Ok(())
    }
}

impl Codec for ZstdDecompressState {
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        if self.ignoring {
            return Ok(if chunk.is_empty() { Fed::All } else { Fed::Ended(0) });
        }
        self.cap_window(out.limit())?;
        self.seen_input |= !chunk.is_empty();
        // A new piece of input: a frame that ended in the last one ended at its end.
        if !self.one_piece {
            self.ended_in_piece = false;
        }
        let limit = out.limit();
        let ours = self.window.is_some_and(|(_, ours)| ours);
        let mut at = 0;
        loop {
            match self.after_frame(&chunk[at..])? {
                After::Read => {}
                After::Wait => return Ok(Fed::All),
                After::Stop => {
                    self.ignoring = true;
                    return Ok(Fed::Ended(at));
                }
            }
            let (dctx, between) = (&mut self.dctx, &mut self.between_frames);
            let rooms = self.p.chunk_size.map(|size| Rooms { size, total: &mut self.total });
            let stop = pump_in(out, ctx, &chunk[at..], false, rooms, |input, room| {
                let mut src = InBuffer::around(input);
                let mut dst = OutBuffer::around(room);
                let hint = dctx.decompress_stream(&mut dst, &mut src).map_err(|code| {
                    // A window larger than the output limit allows: refused
                    // as too large (its output would likely be, and its
                    // memory is); larger than the limit given, zstd's error.
                    if ours && super::error_number(code) == 16 {
                        KernelError::TooLarge { limit }
                    } else {
                        zstd_error(code)
                    }
                })?;
                let moved = src.pos() > 0 || dst.pos() > 0;
                if moved {
                    // 0: a frame just ended (the next input, if any, starts another).
                    *between = hint == 0;
                }
                Ok(Progress { consumed: src.pos(), produced: dst.pos(), ended: moved && hint == 0 })
            })?;
            match stop {
                Stop::Ended { rest } => {
                    self.frames += 1;
                    at += rest;
                    self.ended_in_piece = self.one_piece || at < chunk.len();
                }
                other => return Ok(fed(other, at)),
            }
        }
    }

    fn end(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        if (!self.seen_input || !self.between_frames) && !self.p.truncated_ok {
            return Err(truncated());
        }
        // The input ended inside what could have been a next frame's magic
        // number: no frame followed, so those bytes were junk after the end.
        if !self.held.is_empty() && self.p.reject_garbage {
            return Err(trailing_junk());
        }
        Ok(())
    }
}
