//! `lz4Compress` / `lz4Decompress`: the LZ4 frame format (the lz4 project's
//! `lz4_Frame_format.md`) as the `lz4` command-line tool writes and reads it,
//! over lz4_flex's block functions in safe Rust.
//!
//! The frames are written and parsed here, not by lz4_flex's frame module:
//! its decoder pulls from an `io::Read` and cannot wait for the next chunk,
//! and its encoder would copy every block once more. Parameters:
//! `blockSize` (65536, 262144, 1048576 or 4194304; default 4194304, the
//! CLI's `-B7`), `contentChecksum` (default true, as the CLI writes) and
//! `blockChecksum` (default false). Blocks are independent and the content
//! size is not written; a one-shot task shorter than its block size gets the
//! smallest block size that holds it, as the CLI does for a short file.
//!
//! The decoder is fed chunks of any size. It holds at most one block (4 MiB)
//! of input across chunks and, for linked blocks, the last 64 KiB of the
//! output, and sizes nothing from the frame's content size. It reads
//! concatenated frames and skips skippable ones, as the CLI does, and checks
//! every checksum and content size a frame carries. An input that stops
//! inside a frame is `Z_BUF_ERROR` ("unexpected end of file", as node:zlib
//! says for every format); a corrupt one, data after a frame included, is
//! `ERR_TIDEPOOL_CORRUPT_INPUT` with a short reason. Frames that need a
//! dictionary, and the legacy format, are refused as corrupt.

use std::ops::RangeInclusive;

use lz4_flex::block::{compress_into, decompress_into, decompress_into_with_dict, get_maximum_output_size, DecompressError};
use xxhash_rust::xxh32::{xxh32, Xxh32};

use super::codec::{truncated, update_all, CORRUPT};
use super::model::{Fed, Kernel, Transform};
use super::params::{ParamError, RawParams};
use super::{KernelError, RunContext, Sink};

/// A frame's magic number.
const MAGIC: u32 = 0x184D_2204;
/// Skippable frames' magic numbers: their content is skipped.
const SKIPPABLE: RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;
/// The legacy format's magic number (lz4 before frames), refused.
const LEGACY_MAGIC: u32 = 0x184C_2102;

/// The version in the top two bits of FLG, the descriptor's first byte.
const VERSION: u8 = 0b01;
/// FLG: every block decodes on its own (else a block may refer to the
/// previous 64 KiB of output).
const INDEPENDENT: u8 = 1 << 5;
/// FLG: each block is followed by the xxh32 of its bytes.
const BLOCK_CHECKSUM: u8 = 1 << 4;
/// FLG: the descriptor holds the content size (8 bytes).
const CONTENT_SIZE: u8 = 1 << 3;
/// FLG: the end mark is followed by the xxh32 of the content.
const CONTENT_CHECKSUM: u8 = 1 << 2;
const FLG_RESERVED: u8 = 1 << 1;
/// FLG: the descriptor holds a dictionary id (4 bytes); refused.
const DICT_ID: u8 = 1;
/// The reserved bits of BD, the descriptor's second byte (bits 4-6 are the
/// block maximum size's id).
const BD_RESERVED: u8 = 0x8F;

/// The block maximum sizes, by id from 4 to 7.
const BLOCK_SIZES: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];
/// A block's size word with this bit set: the block is stored as it is.
const STORED: u32 = 1 << 31;
/// How far back linked blocks may refer: the frame's last 64 KiB of output.
const WINDOW: usize = 64 * 1024;

fn corrupt(reason: &str) -> KernelError {
    KernelError::Format { code: CORRUPT, message: format!("LZ4 frame: {reason}") }
}

fn le32(bytes: &[u8]) -> u32 {
    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The descriptor's checksum byte: the second byte of its xxh32.
fn header_checksum(descriptor: &[u8]) -> u8 {
    (xxh32(descriptor, 0) >> 8) as u8
}

pub struct Lz4Compress;
pub static LZ4_COMPRESS: Lz4Compress = Lz4Compress;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lz4Params {
    block_size: usize,
    content_checksum: bool,
    block_checksum: bool,
}

impl Kernel for Lz4Compress {
    type Params = Lz4Params;
    type State = Lz4CompressState;

    fn name(&self) -> &'static str {
        "lz4Compress"
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<Lz4Params, ParamError> {
        raw.only(&["blockSize", "contentChecksum", "blockChecksum"])?;
        let block_size = match raw.integer("blockSize", i128::MIN..=i128::MAX)? {
            None => BLOCK_SIZES[3],
            // A number outside the four sizes is out of range (as Node calls
            // a zlib `strategy` of 5), so ERR_OUT_OF_RANGE.
            Some(n) => BLOCK_SIZES.iter().copied().find(|&s| s as i128 == n).ok_or_else(|| ParamError::Range {
                name: "blockSize",
                expected: "one of 65536, 262144, 1048576, 4194304".into(),
                got: n.to_string(),
            })?,
        };
        Ok(Lz4Params {
            block_size,
            content_checksum: raw.boolean("contentChecksum")?.unwrap_or(true),
            block_checksum: raw.boolean("blockChecksum")?.unwrap_or(false),
        })
    }

    fn start(&self, p: &Lz4Params, len_hint: Option<usize>) -> Result<Lz4CompressState, KernelError> {
        // A one-shot task knows its size: a shorter input than a block gets
        // the smallest block size that holds it, so a decoder needs less room.
        let block_size = match len_hint {
            Some(n) => BLOCK_SIZES.iter().copied().find(|&s| s >= n).map_or(p.block_size, |s| s.min(p.block_size)),
            None => p.block_size,
        };
        let id = BLOCK_SIZES.iter().position(|&s| s == block_size).unwrap_or(3) as u8 + 4;
        let mut flg = VERSION << 6 | INDEPENDENT;
        if p.block_checksum {
            flg |= BLOCK_CHECKSUM;
        }
        if p.content_checksum {
            flg |= CONTENT_CHECKSUM;
        }
        Ok(Lz4CompressState {
            descriptor: [flg, id << 4],
            block_size,
            block: Vec::new(),
            content: p.content_checksum.then(|| Xxh32::new(0)),
            scratch: Vec::new(),
            started: false,
            // LZ4 trades ratio for speed: text often ends up about half its size.
            reserve: len_hint.map(|n| n / 2 + 64),
        })
    }
}

pub struct Lz4CompressState {
    /// FLG and BD.
    descriptor: [u8; 2],
    block_size: usize,
    /// Input short of a whole block, waiting for the rest (never more than
    /// a block, in memory too).
    block: Vec<u8>,
    /// The running content checksum, when the frame has one.
    content: Option<Xxh32>,
    /// A block compressed aside when the sink's room is short of the worst
    /// case (near the output limit).
    scratch: Vec<u8>,
    /// The frame header has been written.
    started: bool,
    reserve: Option<usize>,
}

impl Lz4CompressState {
    /// Counts `bytes` of input as taken (the content checksum).
    fn took(&mut self, bytes: &[u8]) {
        if let Some(content) = &mut self.content {
            content.update(bytes);
        }
    }

    /// Writes the frame header before anything else.
    fn begin(&mut self, out: &mut Sink) -> Result<(), KernelError> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        if let Some(n) = self.reserve.take() {
            out.reserve(n);
        }
        let [m0, m1, m2, m3] = MAGIC.to_le_bytes();
        let [flg, bd] = self.descriptor;
        out.write(&[m0, m1, m2, m3, flg, bd, header_checksum(&self.descriptor)])
    }

    fn block_checksum(&self) -> bool {
        self.descriptor[0] & BLOCK_CHECKSUM != 0
    }
}

/// Appends `bytes` to the block being gathered, growing its memory
/// geometrically but never past `block_size`.
fn gather(block: &mut Vec<u8>, bytes: &[u8], block_size: usize) {
    let end = block.len() + bytes.len();
    if end > block.capacity() {
        let grown = end.max(block.capacity() * 2).min(block_size);
        block.reserve_exact(grown - block.len());
    }
    block.extend_from_slice(bytes);
}

/// Writes one block: its size word, its bytes (compressed, or stored as
/// they are when compressing does not make them smaller) and, with
/// `checksum`, their xxh32. Compresses straight into the sink's room; near
/// the limit, where the room is short of the worst case, into `scratch`
/// first, so the output is the same bytes until the sink refuses them.
fn write_block(data: &[u8], checksum: bool, out: &mut Sink, scratch: &mut Vec<u8>) -> Result<(), KernelError> {
    let need = 4 + get_maximum_output_size(data.len()) + if checksum { 4 } else { 0 };
    if let Ok(room) = out.unfilled(need) {
        if room.len() >= need {
            let n = frame_block(data, checksum, &mut room[..need])?;
            out.commit(n);
            return Ok(());
        }
    }
    scratch.resize(need, 0);
    let n = frame_block(data, checksum, scratch)?;
    out.write(&scratch[..n])
}

/// Lays one block out in `dst` (room for the worst case), returning its length.
fn frame_block(data: &[u8], checksum: bool, dst: &mut [u8]) -> Result<usize, KernelError> {
    let (word, body) = dst.split_at_mut(4);
    let packed = compress_into(data, body).map_err(|e| KernelError::InvalidInput(format!("lz4 refused a block: {e}")))?;
    let (len, size) = if packed < data.len() {
        (packed, packed as u32)
    } else {
        body[..data.len()].copy_from_slice(data);
        (data.len(), data.len() as u32 | STORED)
    };
    word.copy_from_slice(&size.to_le_bytes());
    if !checksum {
        return Ok(4 + len);
    }
    let sum = xxh32(&body[..len], 0);
    body[len..len + 4].copy_from_slice(&sum.to_le_bytes());
    Ok(4 + len + 4)
}

impl Transform for Lz4CompressState {
    fn update(&mut self, chunk: &[u8], out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        update_all(self, chunk, out, ctx)
    }

    /// Stops after a block written at the sink's pause point: a block is
    /// this format's unit of output (at most its maximum size, 4 MiB).
    fn update_until(&mut self, chunk: &[u8], out: &mut Sink, ctx: &RunContext<'_>) -> Result<Fed, KernelError> {
        self.begin(out)?;
        let checksum = self.block_checksum();
        let mut rest = chunk;
        if !self.block.is_empty() {
            let take = rest.len().min(self.block_size - self.block.len());
            gather(&mut self.block, &rest[..take], self.block_size);
            rest = &rest[take..];
            if self.block.len() == self.block_size {
                ctx.check()?;
                write_block(&self.block, checksum, out, &mut self.scratch)?;
                self.block.clear();
            }
        }
        // Whole blocks straight from the chunk, without a copy.
        while rest.len() >= self.block_size && !out.should_pause() {
            ctx.check()?;
            let (block, tail) = rest.split_at(self.block_size);
            write_block(block, checksum, out, &mut self.scratch)?;
            rest = tail;
        }
        if out.should_pause() && !rest.is_empty() {
            let taken = chunk.len() - rest.len();
            self.took(&chunk[..taken]);
            return Ok(Fed::Paused(taken));
        }
        gather(&mut self.block, rest, self.block_size);
        self.took(chunk);
        Ok(Fed::All)
    }

    fn finish(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        self.flush(1, out, ctx)?;
        // The end mark (a zero size word), then the content checksum.
        let mut end = [0u8; 8];
        let len = match &self.content {
            Some(content) => {
                end[4..].copy_from_slice(&content.digest().to_le_bytes());
                8
            }
            None => 4,
        };
        out.write(&end[..len])
    }

    /// Writes the block gathered so far (shorter than the block size, which
    /// the frame format allows): LZ4's one flush.
    fn flush(&mut self, _kind: u32, out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        self.begin(out)?;
        if !self.block.is_empty() {
            write_block(&self.block, self.block_checksum(), out, &mut self.scratch)?;
            self.block.clear();
        }
        Ok(())
    }
}

pub struct Lz4Decompress;
pub static LZ4_DECOMPRESS: Lz4Decompress = Lz4Decompress;

impl Kernel for Lz4Decompress {
    type Params = ();
    type State = Lz4DecompressState;

    fn name(&self) -> &'static str {
        "lz4Decompress"
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
            frame: Frame { flg: 0, block_max: 0, content_size: None, produced: 0, content: Xxh32::new(0), window: Vec::new() },
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
        *self = Frame { flg, block_max, content_size, produced: 0, content: Xxh32::new(0), window: std::mem::take(&mut self.window) };
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
                let decoded = if self.linked() { decompress_into_with_dict(data, room, self.dict()) } else { decompress_into(data, room) };
                match decoded {
                    Ok(n) => {
                        self.wrote(&room[..n]);
                        n
                    }
                    // The block does not fit what the limit leaves.
                    Err(DecompressError::OutputTooSmall { .. }) if cut => return Err(KernelError::TooLarge { limit }),
                    Err(e) => return Err(block_error(e)),
                }
            }
            // At the limit: only a block that decodes to nothing fits.
            Err(too_large @ KernelError::TooLarge { .. }) => match decompress_into_with_dict(data, &mut [], self.dict()) {
                Ok(_) => 0,
                Err(DecompressError::OutputTooSmall { .. }) => return Err(too_large),
                Err(e) => return Err(block_error(e)),
            },
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
                // 64 KiB for every block made frames of tiny linked blocks
                // cost ~40x their decoding time.
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
        DecompressError::OutputTooSmall { .. } => corrupt("a block decodes to more than the block maximum size"),
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
fn take<'a>(pending: &'a mut Vec<u8>, chunk: &'a [u8], at: &mut usize, n: usize) -> Option<&'a [u8]> {
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
                _ if *after_frame => return Err(corrupt("data after the end of the frame is not a frame")),
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
                let content_size = (len == 9).then(|| u64::from(le32(&bytes[..4])) | u64::from(le32(&bytes[4..8])) << 32);
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

impl Transform for Lz4DecompressState {
    fn update(&mut self, chunk: &[u8], out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        update_all(self, chunk, out, ctx)
    }

    /// Stops after a block decoded at the sink's pause point (the bytes
    /// gathered for the next one are kept, and count as taken).
    fn update_until(&mut self, chunk: &[u8], out: &mut Sink, ctx: &RunContext<'_>) -> Result<Fed, KernelError> {
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
                Stage::Block { size, .. } => size + if frame.flg & BLOCK_CHECKSUM != 0 { 4 } else { 0 },
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

    fn finish(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        if !self.seen_input || self.stage != Stage::Magic || !self.pending.is_empty() {
            return Err(truncated());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::input::Input;
    use crate::kernels::codec::testing::{check_pair, kernel, noise, run, run_with, text};
    use crate::kernels::params::RawValue;
    use crate::kernels::Params;

    /// `printf 'hello, tidepool\n' | lz4 -q` (lz4 CLI 1.9.4).
    const CLI_HELLO: &str = "04224d186440a71000008068656c6c6f2c2074696465706f6f6c0a000000002a9e39b0";

    /// `lz4 -q -BD -BX -B4 --content-size` (lz4 CLI 1.9.4) of `pattern(300)`:
    /// linked blocks, block checksums, the content size and the content
    /// checksum, five 64 KiB blocks (the later ones referring back to the
    /// earlier: 275 bytes each where independent blocks take over 1000).
    const CLI_LINKED: &[&str] = &[
        "04224d185c4000b00400000000004a0e020000ffec00010409101924314051647990a9c4e10526496e95bee91b4a7baee31f5893d0145598",
        "dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7ced65da56cf4fcc50d159de6af38315a43acd67039c3cd97d23c6701cc57527d68c44",
        "f9b57333f0b47a420cd3a1714317e8c09a76543416f5dbc3ad998777695d534b45413f3f41454b535d69778799adc3dbf5163454769ac0e8",
        "174371a1d30c427ab4f03373b5f9448cd62775c51c70c6237dd93c9c0367cd3aa41583f36ade59d150cc4fcf56da65ed7c0d9b30c25bf18e",
        "2dc96c11b35c07af5e0fbd7229dd985514d093581fe3ae7b4a1be9be956e492605e1c4a9907964514031241910090401fb00fffff40f0503",
        "fffff40ff106e80f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe050e10526496ee9f0c546130100000f0ff9fc0f0afa",
        "e80ffb00ffe40f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe450e10526496ec1382f70f70100000f0afeff",
        "f8ffd895bee91b4a7baee31f5893d0145598dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7ced65da56cf4fcc50d159de6af38315a4",
        "3acd67039c3cd97d23c6701cc57527d68c44f9b57333f0b47a420cd3a1714317e8c09a76543416f5dbc3ad998777695d534b45413f3f4145",
        "4b535d69778799adc3dbf5163454769ac0e8174371a1d30c427ab4f03373b5f9448cd62775c51c70c6237dd93c9c0367cd3aa41583f36ade",
        "59d150cc4fcf56da65ed7c0d9b30c25bf18e2dc96c11b35c07af5e0fbd7229dd985514d093581fe3ae7b4a1be9be956e492605e1c4a99079",
        "64514031241910090401f102fc0f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe450e10526496e6abad9d013",
        "0100000f0ffdfc0f05ffffe40ff601e80f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe450e10526496e8fa9",
        "c1c6c30000000f0ffdfc0f0afee80ffb00ffe40f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffff9450e10526496e810d82100000000098545646",
    ];

    /// `copies` times the same 1 KiB (in Python: `bytes(i * i % 251 for i in range(1024)) * copies`).
    fn pattern(copies: usize) -> Vec<u8> {
        (0..1024usize).map(|i| (i * i % 251) as u8).collect::<Vec<u8>>().repeat(copies)
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn cli_linked() -> Vec<u8> {
        unhex(&CLI_LINKED.concat())
    }

    fn compress(raw: Vec<(&'static str, RawValue<'static>)>, data: &[u8]) -> Vec<u8> {
        let p = kernel("lz4Compress").params(&RawParams::new(raw)).unwrap();
        run_with("lz4Compress", &p, Input::Owned(data.to_vec()), usize::MAX).unwrap()
    }

    /// Runs a state of `name` over `input` fed in pieces of `piece` bytes,
    /// each call with a fresh sink (as a stream's tasks have), joining the outputs.
    fn in_pieces(name: &str, input: &[u8], piece: usize) -> Result<Vec<u8>, KernelError> {
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let mut state = kernel(name).start(&Params::NONE, None)?;
        let mut all = Vec::new();
        for part in input.chunks(piece) {
            let mut out = Sink::new(usize::MAX);
            state.update(part, &mut out, &ctx)?;
            all.extend_from_slice(out.into_output().as_bytes());
        }
        let mut out = Sink::new(usize::MAX);
        state.finish(&mut out, &ctx)?;
        all.extend_from_slice(out.into_output().as_bytes());
        Ok(all)
    }

    /// A frame header with `flg`, `bd` and the optional fields `extra`, its checksum made right.
    fn header(flg: u8, bd: u8, extra: &[u8]) -> Vec<u8> {
        let descriptor = [&[flg, bd][..], extra].concat();
        [&MAGIC.to_le_bytes()[..], &descriptor, &[header_checksum(&descriptor)]].concat()
    }

    fn refused(input: &[u8], reason: &str) {
        let err = run("lz4Decompress", input).unwrap_err();
        assert!(matches!(&err, KernelError::Format { code: CORRUPT, message } if message.contains(reason)), "{reason}: {err:?}");
        assert_eq!(in_pieces("lz4Decompress", input, 3).unwrap_err(), err, "the same in pieces");
    }

    #[test]
    fn round_trips_limits_bombs_truncation_and_cancellation() {
        check_pair("lz4Compress", "lz4Decompress", 100);
    }

    #[test]
    fn reads_the_cli_s_frames_in_any_pieces() {
        assert_eq!(run("lz4Decompress", &unhex(CLI_HELLO)).unwrap(), b"hello, tidepool\n");
        let linked = cli_linked();
        assert_eq!(linked[4..6], [VERSION << 6 | BLOCK_CHECKSUM | CONTENT_SIZE | CONTENT_CHECKSUM, 4 << 4], "linked 64 KiB blocks");
        assert_eq!(run("lz4Decompress", &linked).unwrap(), pattern(300));
        for piece in [1, 3, 4, 7, 1000, 70_000] {
            assert_eq!(in_pieces("lz4Decompress", &linked, piece).unwrap(), pattern(300), "pieces of {piece}");
        }
    }

    #[test]
    fn our_frames_carry_the_cli_s_header() {
        // Checked by hand: `lz4 -d` (CLI 1.9.4) reads these frames back to
        // their input: text(5 MiB) with the defaults, `hello`, an empty input,
        // and 64 KiB blocks with block checksums and no content checksum.
        let data = text(5 << 20);
        let packed = run("lz4Compress", &data).unwrap();
        assert_eq!(packed[..4], MAGIC.to_le_bytes());
        let (flg, bd) = (packed[4], packed[5]);
        assert_eq!(flg >> 6, VERSION);
        assert_eq!(flg & !(VERSION << 6), INDEPENDENT | CONTENT_CHECKSUM, "independent blocks, a content checksum and nothing else");
        assert_eq!(bd, 7 << 4, "4 MiB blocks");
        assert_eq!(packed[6], header_checksum(&packed[4..6]));
        assert_eq!(run("lz4Decompress", &packed).unwrap(), data);
        // A one-shot input shorter than a block gets the smallest block size
        // that holds it; a stream, whose length is unknown, the one asked for.
        assert_eq!(run("lz4Compress", b"hello").unwrap()[5], 4 << 4);
        assert_eq!(run("lz4Compress", &data[..100_000]).unwrap()[5], 5 << 4);
        let streamed = in_pieces("lz4Compress", b"hello", 2).unwrap();
        assert_eq!(streamed[5], 7 << 4);
        assert_eq!(run("lz4Decompress", &streamed).unwrap(), b"hello");
        let empty = run("lz4Compress", b"").unwrap();
        assert_eq!(empty.len(), 7 + 4 + 4, "a header, the end mark and the checksum");
        assert_eq!(run("lz4Decompress", &empty).unwrap(), b"");

        let raw = vec![
            ("blockSize", RawValue::Number(65536.0)),
            ("blockChecksum", RawValue::Bool(true)),
            ("contentChecksum", RawValue::Bool(false)),
        ];
        let packed = compress(raw, &data[..300_000]);
        assert_eq!(packed[4..6], [VERSION << 6 | INDEPENDENT | BLOCK_CHECKSUM, 4 << 4]);
        assert_eq!(packed[packed.len() - 4..], [0; 4], "the end mark last: no content checksum");
        assert_eq!(run("lz4Decompress", &packed).unwrap(), &data[..300_000]);
        assert_eq!(in_pieces("lz4Decompress", &packed, 999).unwrap(), &data[..300_000]);
        // Noise is stored as it is, block by block.
        let stored = compress(vec![("blockSize", RawValue::Number(65536.0))], &noise(100_000));
        assert_eq!(le32(&stored[7..11]), STORED | 65536);
        assert_eq!(run("lz4Decompress", &stored).unwrap(), noise(100_000));
    }

    #[test]
    fn parameters_are_checked() {
        let lz4 = kernel("lz4Compress");
        for size in [1000.0, 0.0, -65536.0, 8388608.0] {
            let err = lz4.params(&RawParams::new(vec![("blockSize", RawValue::Number(size))])).unwrap_err();
            assert!(matches!(err, ParamError::Range { name: "blockSize", .. }), "{size}: {err}");
        }
        let err = lz4.params(&RawParams::new(vec![("contentChecksum", RawValue::Number(1.0))])).unwrap_err();
        assert!(matches!(err, ParamError::Type { name: "contentChecksum", .. }), "{err}");
        let err = lz4.params(&RawParams::new(vec![("level", RawValue::Number(1.0))])).unwrap_err();
        assert!(matches!(err, ParamError::Unknown { .. }), "{err}");
        assert!(kernel("lz4Decompress").params(&RawParams::new(vec![("blockSize", RawValue::Number(65536.0))])).is_err());
    }

    #[test]
    fn corrupt_frames_are_refused_with_a_reason() {
        let data = text(200_000);
        let raw = vec![("blockSize", RawValue::Number(65536.0)), ("blockChecksum", RawValue::Bool(true))];
        let good = compress(raw, &data);
        let flipped = |at: usize| {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            bad
        };
        refused(&flipped(6), "header checksum mismatch");
        refused(&flipped(20), "block checksum mismatch");
        refused(&flipped(good.len() - 1), "content checksum mismatch");
        refused(b"not an lz4 frame", "bad magic number");
        refused(&[run("lz4Compress", b"hello").unwrap(), b"garbage".to_vec()].concat(), "after the end of the frame");
        refused(&0x184C_2102u32.to_le_bytes(), "legacy");
        let flg = VERSION << 6 | INDEPENDENT;
        refused(&header(flg | DICT_ID, 4 << 4, &[1, 2, 3, 4]), "dictionary");
        refused(&header(flg | 1 << 7, 4 << 4, &[]), "version");
        refused(&header(flg | FLG_RESERVED, 4 << 4, &[]), "reserved");
        refused(&header(flg, 4 << 4 | 1, &[]), "reserved");
        refused(&header(flg, 3 << 4, &[]), "block maximum size");
        // A block size word past the block maximum, compressed or stored.
        refused(&[header(flg, 4 << 4, &[]), (65536u32 + 1).to_le_bytes().to_vec()].concat(), "larger than the block maximum");
        refused(&[header(flg, 4 << 4, &[]), (STORED | 65537).to_le_bytes().to_vec()].concat(), "larger than the block maximum");
        // A match reaching back before the output, with no block checksum to catch it first.
        let block = [0x10, b'a', 0x10, 0x00];
        refused(&[header(flg, 4 << 4, &[]), 4u32.to_le_bytes().to_vec(), block.to_vec(), vec![0; 4]].concat(), "corrupt block");
        // The content size of the CLI's frame, changed (and its header checksum made right).
        let cli = cli_linked();
        let mut size = cli[6..14].to_vec();
        size[0] ^= 1;
        refused(&[header(cli[4], cli[5], &size), cli[15..].to_vec()].concat(), "content size mismatch");
        // Any cut is an unexpected end, never a misread.
        for cut in [1, 4, 5, 6, 10, 15, 100, cli.len() - 1] {
            assert_eq!(run("lz4Decompress", &cli[..cut]), Err(truncated()), "cut at {cut}");
        }
    }

    #[test]
    fn concatenated_and_skippable_frames() {
        let skippable = |n: u8| [&0x184D_2A5Au32.to_le_bytes()[..], &u32::from(n).to_le_bytes(), &vec![n; n.into()]].concat();
        let input = [
            skippable(3),
            run("lz4Compress", b"hello ").unwrap(),
            skippable(0),
            compress(vec![("contentChecksum", RawValue::Bool(false))], b"world, "),
            cli_linked(),
            skippable(200),
        ]
        .concat();
        let expected = [&b"hello world, "[..], &pattern(300)].concat();
        assert_eq!(run("lz4Decompress", &input).unwrap(), expected);
        for piece in [1, 2, 5, 300] {
            assert_eq!(in_pieces("lz4Decompress", &input, piece).unwrap(), expected, "pieces of {piece}");
        }
        assert_eq!(run("lz4Decompress", &skippable(5)).unwrap(), b"", "a skippable frame alone");
        assert_eq!(run("lz4Decompress", &skippable(5)[..7]), Err(truncated()), "cut inside a skippable frame");
    }

    #[test]
    fn linked_blocks_at_the_output_limit() {
        let linked = cli_linked();
        let n = pattern(300).len();
        assert_eq!(run_with("lz4Decompress", &Params::NONE, Input::Owned(linked.clone()), n).unwrap(), pattern(300));
        assert_eq!(run_with("lz4Decompress", &Params::NONE, Input::Owned(linked), n - 1), Err(KernelError::TooLarge { limit: n - 1 }));
    }

    #[test]
    fn random_mutations_never_panic() {
        let raw = vec![("blockSize", RawValue::Number(65536.0)), ("contentChecksum", RawValue::Bool(false))];
        let frames = [cli_linked(), compress(raw, &text(150_000)), run("lz4Compress", &text(5000)).unwrap()];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |below: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % below as u64) as usize
        };
        let (mut ok, mut refused) = (0, 0);
        for i in 0..2000 {
            let mut m = frames[i % frames.len()].clone();
            for _ in 0..1 + next(3) {
                match next(3) {
                    0 => {
                        let at = next(m.len());
                        m[at] ^= 1 << next(8);
                    }
                    1 => m.truncate(next(m.len() + 1)),
                    _ => {
                        let at = next(m.len() + 1);
                        let bytes: Vec<u8> = (0..1 + next(8)).map(|_| next(256) as u8).collect();
                        m.splice(at..at, bytes);
                    }
                }
                if m.is_empty() {
                    m.push(0);
                }
            }
            let piece = 1 + next(4000);
            let outcome = catch_unwind(AssertUnwindSafe(|| (run("lz4Decompress", &m), in_pieces("lz4Decompress", &m, piece))));
            let Ok((whole, pieces)) = outcome else { panic!("mutation {i} panicked") };
            assert_eq!(whole, pieces, "mutation {i}: pieces of {piece} decode like the whole");
            if whole.is_ok() {
                ok += 1;
            } else {
                refused += 1;
            }
        }
        assert!(ok > 0 && refused > 1000, "{ok} decoded, {refused} refused");
    }
}
