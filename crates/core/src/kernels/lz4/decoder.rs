//! `lz4Decompress`: a push parser of concatenated frames, fed chunks of
//! any size, that decodes each block as soon as it is whole.

use lz4_flex::block::{decompress_into, decompress_into_with_dict, DecompressError};
use xxhash_rust::xxh32::{xxh32, Xxh32};

use super::format::{
    corrupt, header_checksum, le32, BD_RESERVED, BLOCK_CHECKSUM, BLOCK_SIZES, CONTENT_CHECKSUM,
    CONTENT_SIZE, DICT_ID, FLG_RESERVED, INDEPENDENT, LEGACY_MAGIC, MAGIC, SKIPPABLE, STORED,
    VERSION, WINDOW,
};
use crate::kernels::codec::truncated;
use crate::kernels::codec::Codec;
use crate::kernels::model::{Fed, Kernel};
use crate::kernels::params::{ParamError, RawParams};
use crate::kernels::{Dialect, Facts, Family};
use crate::kernels::{KernelError, RunContext, Sink};

pub struct Lz4Decompress;
pub static LZ4_DECOMPRESS: Lz4Decompress = Lz4Decompress;

impl Kernel for Lz4Decompress {
    type Params = ();
    type State = Lz4DecompressState;

    fn name(&self) -> &'static str {
        "lz4Decompress"
    }

    fn facts(&self) -> Facts {
        Facts::codec(Family::Lz4, Dialect::NONE)
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<(), ParamError> {
        raw.only(&[])
    }

    fn expands(&self) -> bool {
        true
    }

    fn start(&self, _p: &(), _len_hint: Option<usize>) -> Result<Lz4DecompressState, KernelError> {
        Ok(Lz4DecompressState {
            stage: Stage::Magic,
            pending: Vec::new(),
            frame: Frame {
                flg: 0,
                block_max: 0,
                content_size: None,
                produced: 0,
                content: Xxh32::new(0),
                window: Vec::new(),
            },
            seen_input: false,
            after_frame: false,
        })
    }
}

/// What the decoder waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// A frame's magic number (the input may end before it).
    Magic,
    /// FLG and BD.
    Flags,
    /// The rest of the descriptor: the content size if any, then the header
    /// checksum (`len` bytes).
    Descriptor { flg: u8, bd: u8, len: usize },
    /// A block's size word, or the end mark.
    BlockSize,
    /// A block's bytes, then its checksum when the frame has them.
    Block { size: usize, stored: bool },
    /// The content checksum after the end mark.
    ContentChecksum,
    /// A skippable frame's size word.
    SkipSize,
    /// What is left of a skippable frame.
    Skip { left: usize },
}

/// What the decoder knows of the frame it is in.
struct Frame {
    flg: u8,
    block_max: usize,
    content_size: Option<u64>,
    /// Output bytes of the frame so far.
    produced: u64,
    content: Xxh32,
    /// The frame's last 64 KiB of output when its blocks are linked: the
    /// sink of a later call (a stream's next task) no longer holds them.
    window: Vec<u8>,
}

impl Frame {
    fn begin(&mut self, flg: u8, block_max: usize, content_size: Option<u64>) {
        *self = Frame {
            flg,
            block_max,
            content_size,
            produced: 0,
            content: Xxh32::new(0),
            window: std::mem::take(&mut self.window),
        };
        self.window.clear();
        if flg & INDEPENDENT == 0 && self.window.capacity() < 2 * WINDOW {
            self.window.reserve_exact(2 * WINDOW);
        }
    }

    fn linked(&self) -> bool {
        self.flg & INDEPENDENT == 0
    }

    /// Decodes one block into `out`.
    fn decode(&mut self, data: &[u8], stored: bool, out: &mut Sink) -> Result<(), KernelError> {
        if stored {
            out.write(data)?;
            self.wrote(data);
            return Ok(());
        }
        // LZ4 writes at most 255 bytes per byte it reads, so a short block
        // needs less room than the block maximum (and a small output does
        // not make the sink reserve 4 MiB).
        let ask = self.block_max.min(data.len().saturating_mul(255));
        let limit = out.limit();
        let n = match out.unfilled(ask) {
            Ok(room) => {
                let fits = ask.min(room.len());
                let room = &mut room[..fits];
                let cut = room.len() < ask;
                let decoded = if self.linked() {
                    decompress_into_with_dict(data, room, self.dict())
                } else {
                    decompress_into(data, room)
                };
                match decoded {
                    Ok(n) => {
                        self.wrote(&room[..n]);
                        n
                    }
                    // The block does not fit what the limit leaves.
                    Err(DecompressError::OutputTooSmall { .. }) if cut => {
                        return Err(KernelError::TooLarge { limit })
                    }
                    Err(e) => return Err(block_error(e)),
                }
            }
            // At the limit: only a block that decodes to nothing fits.
            Err(too_large @ KernelError::TooLarge { .. }) => {
                match decompress_into_with_dict(data, &mut [], self.dict()) {
                    Ok(_) => 0,
                    Err(DecompressError::OutputTooSmall { .. }) => return Err(too_large),
                    Err(e) => return Err(block_error(e)),
                }
            }
            Err(other) => return Err(other),
        };
        out.commit(n);
        Ok(())
    }

    /// The dictionary of the next linked block: the last 64 KiB of output.
    fn dict(&self) -> &[u8] {
        &self.window[self.window.len().saturating_sub(WINDOW)..]
    }

    /// Accounts for output the frame wrote: its size, checksum and window.
    fn wrote(&mut self, bytes: &[u8]) {
        self.produced += bytes.len() as u64;
        if self.flg & CONTENT_CHECKSUM != 0 {
            self.content.update(bytes);
        }
        if self.linked() {
            if bytes.len() >= WINDOW {
                self.window.clear();
                self.window.extend_from_slice(&bytes[bytes.len() - WINDOW..]);
            } else {
                // Compacted only when it would pass twice the window: moving
                // 64 KiB for every block would cost frames of tiny linked
                // blocks many times their decoding time.
                if self.window.len() + bytes.len() > 2 * WINDOW {
                    let keep = WINDOW - bytes.len();
                    self.window.drain(..self.window.len() - keep);
                }
                self.window.extend_from_slice(bytes);
            }
        }
    }
}

fn block_error(e: DecompressError) -> KernelError {
    match e {
        // The room was the block maximum size.
        DecompressError::OutputTooSmall { .. } => {
            corrupt("a block decodes to more than the block maximum size")
        }
        e => corrupt(&format!("corrupt block ({e})")),
    }
}

pub struct Lz4DecompressState {
    stage: Stage,
    /// The bytes of a header, size word or block that began in an earlier
    /// chunk (at most a block and its checksum).
    pending: Vec<u8>,
    frame: Frame,
    seen_input: bool,
    /// A frame has ended: what follows must be another frame.
    after_frame: bool,
}

/// The next `n` bytes of the input: straight from `chunk` when it holds them
/// all (and nothing is pending), else gathered in `pending` across chunks;
/// `None` when the chunk ends first (what it had is kept in `pending`). The
/// caller clears `pending` once it has used the bytes.
fn take<'a>(
    pending: &'a mut Vec<u8>,
    chunk: &'a [u8],
    at: &mut usize,
    n: usize,
) -> Option<&'a [u8]> {
    if pending.is_empty() && chunk.len() - *at >= n {
        let bytes = &chunk[*at..*at + n];
        *at += n;
        return Some(bytes);
    }
    let got = (n - pending.len()).min(chunk.len() - *at);
    if got == 0 {
        return None;
    }
    if pending.capacity() < n {
        // Once, to the size needed (checked against the block maximum).
        pending.reserve_exact(n - pending.len());
    }
    pending.extend_from_slice(&chunk[*at..*at + got]);
    *at += got;
    (pending.len() == n).then_some(&pending[..])
}

impl Lz4DecompressState {
    /// Acts on the `bytes` the current stage waited for; returns the next stage.
    fn step(
        stage: Stage,
        bytes: &[u8],
        frame: &mut Frame,
        after_frame: &mut bool,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Stage, KernelError> {
        Ok(match stage {
            Stage::Magic => match le32(bytes) {
                MAGIC => Stage::Flags,
                m if SKIPPABLE.contains(&m) => Stage::SkipSize,
                LEGACY_MAGIC => return Err(corrupt("the legacy format is not supported")),
                _ if *after_frame => {
                    return Err(corrupt("data after the end of the frame is not a frame"))
                }
                _ => return Err(corrupt("bad magic number")),
            },
            Stage::Flags => {
                let (flg, bd) = (bytes[0], bytes[1]);
                if flg >> 6 != VERSION {
                    return Err(corrupt("unsupported version"));
                }
                if flg & FLG_RESERVED != 0 || bd & BD_RESERVED != 0 {
                    return Err(corrupt("reserved bits are set"));
                }
                if flg & DICT_ID != 0 {
                    return Err(corrupt("frames that need a dictionary are not supported"));
                }
                if bd >> 4 < 4 {
                    return Err(corrupt("bad block maximum size"));
                }
                Stage::Descriptor { flg, bd, len: if flg & CONTENT_SIZE != 0 { 9 } else { 1 } }
            }
            Stage::Descriptor { flg, bd, len } => {
                let mut descriptor = [flg, bd, 0, 0, 0, 0, 0, 0, 0, 0];
                descriptor[2..len + 1].copy_from_slice(&bytes[..len - 1]);
                if header_checksum(&descriptor[..len + 1]) != bytes[len - 1] {
                    return Err(corrupt("header checksum mismatch"));
                }
                let content_size = (len == 9)
                    .then(|| u64::from(le32(&bytes[..4])) | u64::from(le32(&bytes[4..8])) << 32);
                frame.begin(flg, BLOCK_SIZES[usize::from(bd >> 4) - 4], content_size);
                Stage::BlockSize
            }
            Stage::BlockSize => match le32(bytes) {
                0 => {
                    if frame.content_size.is_some_and(|n| n != frame.produced) {
                        return Err(corrupt("content size mismatch"));
                    }
                    if frame.flg & CONTENT_CHECKSUM != 0 {
                        Stage::ContentChecksum
                    } else {
                        *after_frame = true;
                        Stage::Magic
                    }
                }
                word => {
                    let size = (word & !STORED) as usize;
                    if size > frame.block_max {
                        return Err(corrupt("a block is larger than the block maximum size"));
                    }
                    Stage::Block { size, stored: word & STORED != 0 }
                }
            },
            Stage::Block { size, stored } => {
                ctx.check()?;
                let (data, sum) = bytes.split_at(size);
                if !sum.is_empty() && xxh32(data, 0) != le32(sum) {
                    return Err(corrupt("block checksum mismatch"));
                }
                frame.decode(data, stored, out)?;
                Stage::BlockSize
            }
            Stage::ContentChecksum => {
                if frame.content.digest() != le32(bytes) {
                    return Err(corrupt("content checksum mismatch"));
                }
                *after_frame = true;
                Stage::Magic
            }
            Stage::SkipSize => Stage::Skip { left: le32(bytes) as usize },
            Stage::Skip { .. } => unreachable!("skipped without taking bytes"),
        })
    }
}

impl Codec for Lz4DecompressState {
    /// Stops after a block decoded at the sink's pause point (the bytes
    /// gathered for the next one are kept, and count as taken).
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        self.seen_input |= !chunk.is_empty();
        let Lz4DecompressState { stage, pending, frame, after_frame, .. } = self;
        let mut at = 0;
        loop {
            let need = match *stage {
                Stage::Skip { left } => {
                    let n = left.min(chunk.len() - at);
                    at += n;
                    if n < left {
                        *stage = Stage::Skip { left: left - n };
                        return Ok(Fed::All);
                    }
                    *stage = Stage::Magic;
                    continue;
                }
                Stage::Magic | Stage::BlockSize | Stage::ContentChecksum | Stage::SkipSize => 4,
                Stage::Flags => 2,
                Stage::Descriptor { len, .. } => len,
                Stage::Block { size, .. } => {
                    size + if frame.flg & BLOCK_CHECKSUM != 0 { 4 } else { 0 }
                }
            };
            let Some(bytes) = take(pending, chunk, &mut at, need) else {
                return Ok(Fed::All);
            };
            *stage = Self::step(*stage, bytes, frame, after_frame, out, ctx)?;
            pending.clear();
            if out.should_pause() && at < chunk.len() {
                return Ok(Fed::Paused(at));
            }
        }
    }

    fn end(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        if !self.seen_input || self.stage != Stage::Magic || !self.pending.is_empty() {
            return Err(truncated());
        }
        Ok(())
    }
}
