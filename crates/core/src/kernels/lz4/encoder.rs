//! `lz4Compress`: input gathered into blocks of the frame's block size,
//! each compressed straight into the sink (or stored when that is no
//! smaller), between the frame header and the end mark.

use lz4_flex::block::{compress_into, get_maximum_output_size};
use xxhash_rust::xxh32::{xxh32, Xxh32};

use super::format::{
    header_checksum, BLOCK_CHECKSUM, BLOCK_SIZES, CONTENT_CHECKSUM, INDEPENDENT, MAGIC, STORED,
    VERSION,
};
use crate::kernels::codec::Codec;
use crate::kernels::model::{Fed, Kernel};
use crate::kernels::params::{ParamError, RawParams};
use crate::kernels::{Dialect, Facts, Family, Packing};
use crate::kernels::{KernelError, RunContext, Sink};

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

    fn facts(&self) -> Facts {
        Facts { packing: Packing::Sized, ..Facts::codec(Family::Lz4, Dialect::NONE) }
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<Lz4Params, ParamError> {
        raw.only(&["blockSize", "contentChecksum", "blockChecksum"])?;
        let block_size = match raw.integer("blockSize", i128::MIN..=i128::MAX)? {
            None => BLOCK_SIZES[3],
            // A number outside the four sizes is out of range (as Node calls
            // a zlib `strategy` of 5), so ERR_OUT_OF_RANGE.
            Some(n) => BLOCK_SIZES.iter().copied().find(|&s| s as i128 == n).ok_or_else(|| {
                ParamError::Range {
                    name: "blockSize",
                    expected: "one of 65536, 262144, 1048576, 4194304".into(),
                    got: n.to_string(),
                }
            })?,
        };
        Ok(Lz4Params {
            block_size,
            content_checksum: raw.boolean("contentChecksum")?.unwrap_or(true),
            block_checksum: raw.boolean("blockChecksum")?.unwrap_or(false),
        })
    }

    fn start(
        &self,
        p: &Lz4Params,
        len_hint: Option<usize>,
    ) -> Result<Lz4CompressState, KernelError> {
        // A one-shot task knows its size: a shorter input than a block gets
        // the smallest block size that holds it, so a decoder needs less room.
        let block_size = match len_hint {
            Some(n) => BLOCK_SIZES
                .iter()
                .copied()
                .find(|&s| s >= n)
                .map_or(p.block_size, |s| s.min(p.block_size)),
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
fn write_block(
    data: &[u8],
    checksum: bool,
    out: &mut Sink,
    scratch: &mut Vec<u8>,
) -> Result<(), KernelError> {
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
    let packed = compress_into(data, body)
        .map_err(|e| KernelError::InvalidInput(format!("lz4 refused a block: {e}")))?;
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

impl Codec for Lz4CompressState {
    /// Stops after a block written at the sink's pause point: a block is
    /// this format's unit of output (at most its maximum size, 4 MiB).
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
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

    fn end(&mut self, out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        self.write_gathered(out)?;
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

    /// LZ4's one flush: [`write_gathered`](Lz4CompressState::write_gathered).
    fn flush_until(
        &mut self,
        _kind: u32,
        out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        self.write_gathered(out).map(|()| true)
    }
}

impl Lz4CompressState {
    /// Writes the block gathered so far (shorter than the block size, which
    /// the frame format allows).
    fn write_gathered(&mut self, out: &mut Sink) -> Result<(), KernelError> {
        self.begin(out)?;
        if !self.block.is_empty() {
            write_block(&self.block, self.block_checksum(), out, &mut self.scratch)?;
            self.block.clear();
        }
        Ok(())
    }
}
