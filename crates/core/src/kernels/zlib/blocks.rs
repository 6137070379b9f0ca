//! What a deflate output cut into blocks is made of, for the one-shot
//! split (`parallel.rs`, blocks of [`BLOCK`]) and the stream in blocks
//! (`block_stream.rs`, smaller ones) alike.
//!
//! Each block is a raw deflate stream of its own, primed with the
//! [`WINDOW`] of input before it as its dictionary and ended on a byte
//! boundary with a sync flush (the last one finished), as pigz does: back
//! to back the blocks are one deflate stream, and any block can be
//! compressed on any thread once its input is there. Around them is the
//! container a one-thread run writes: its header, and a trailer whose
//! checksum is combined from the blocks' own.

use super::deflater::{deflate_error, pump_deflate, Deflater};
use super::{Format, Z_FINISH};
use crate::kernels::{KernelError, Output, RunContext, Sink};

/// Bytes of input per block: 128 blocks for 128 MiB, enough for any pool
/// to share out, and large enough that a block's fresh start and sync
/// flush cost well under 1 % of its output.
pub const BLOCK: usize = 1 << 20;
/// The dictionary a block is primed with: deflate's largest window.
pub(super) const WINDOW: usize = 32 * 1024;

/// zlib's flush constants used here.
pub(super) const Z_NO_FLUSH: i32 = 0;
pub(super) const Z_SYNC_FLUSH: i32 = 2;
pub(super) const Z_FULL_FLUSH: i32 = 3;

/// The deflate parameters a block is compressed with.
#[derive(Debug, Clone, Copy)]
pub(super) struct Settings {
    pub level: i32,
    pub mem_level: i32,
    pub strategy: i32,
}

impl Settings {
    /// A raw deflater for a block (window 15), primed with `dictionary`.
    pub fn deflater(&self, dictionary: &[u8]) -> Result<Deflater, KernelError> {
        let mut deflate =
            Deflater::new(self.level, Format::Raw.window_bits(15), self.mem_level, self.strategy)
                .map_err(deflate_error)?;
        if !dictionary.is_empty() {
            deflate.set_dictionary(dictionary).map_err(deflate_error)?;
        }
        Ok(deflate)
    }

    /// The header a one-thread run of `format` starts with (taken from
    /// deflating nothing with these parameters: gzip's extra flags and
    /// zlib's level bits follow the level); empty for raw deflate.
    pub fn header(&self, format: Format) -> Result<Vec<u8>, KernelError> {
        let len = match format {
            Format::Gzip => 10,
            Format::Zlib => 2,
            _ => return Ok(Vec::new()),
        };
        let mut deflate =
            Deflater::new(self.level, format.window_bits(15), self.mem_level, self.strategy)
                .map_err(deflate_error)?;
        let mut empty = [0u8; 64];
        let step = deflate.deflate(&[], &mut empty, Z_FINISH as i32).map_err(deflate_error)?;
        Ok(empty[..len.min(step.produced)].to_vec())
    }
}

/// The checksum of the input so far, as `format`'s trailer holds it:
/// CRC-32 for gzip, Adler-32 for zlib, none for raw deflate.
#[derive(Clone)]
pub(super) struct Check {
    format: Format,
    crc: crc32fast::Hasher,
    adler: u32,
    /// Input bytes in all (gzip's trailer holds them modulo 2^32).
    len: u64,
}

impl Check {
    pub fn new(format: Format) -> Check {
        Check { format, crc: crc32fast::Hasher::new(), adler: 1, len: 0 }
    }

    /// The checksum of `pieces` alone, to [`join`](Check::join) later.
    pub fn of(format: Format, pieces: &[&[u8]]) -> Check {
        let mut check = Check::new(format);
        for piece in pieces {
            check.update(piece);
        }
        check
    }

    pub fn update(&mut self, bytes: &[u8]) {
        match self.format {
            Format::Gzip => self.crc.update(bytes),
            Format::Zlib => self.adler = zlib_rs::adler32::adler32(self.adler, bytes),
            _ => {}
        }
        self.len += bytes.len() as u64;
    }

    /// Appends the input `next` checked, as if its bytes had been
    /// [`update`](Check::update)d here.
    pub fn join(&mut self, next: &Check) {
        match self.format {
            Format::Gzip => self.crc.combine(&next.crc),
            Format::Zlib => {
                self.adler = zlib_rs::adler32::adler32_combine(self.adler, next.adler, next.len)
            }
            _ => {}
        }
        self.len += next.len;
    }

    /// The trailer of everything checked.
    pub fn trailer(&self) -> Vec<u8> {
        match self.format {
            Format::Gzip => {
                let mut t = self.crc.clone().finalize().to_le_bytes().to_vec();
                t.extend_from_slice(&(self.len as u32).to_le_bytes());
                t
            }
            Format::Zlib => self.adler.to_be_bytes().to_vec(),
            _ => Vec::new(),
        }
    }
}

/// Deflates `pieces` (one stretch of input, in order) with `deflate`,
/// ending with `flush` (`Z_SYNC_FLUSH`, `Z_FINISH`, or `Z_NO_FLUSH` for a
/// block left open), into an output of its own of at most `limit` bytes.
pub(super) fn compress(
    deflate: &mut Deflater,
    pieces: &[&[u8]],
    flush: i32,
    limit: usize,
    ctx: &RunContext<'_>,
) -> Result<Output, KernelError> {
    ctx.check()?;
    let mut sink = Sink::new(limit);
    // Deflate's bound for input that does not compress (noise): one
    // reservation, no regrowth copies; what is not written is not touched.
    let len: usize = pieces.iter().map(|p| p.len()).sum();
    sink.reserve(len + len / 1000 + 64);
    // No input still flushes (or finishes) what the deflater holds.
    let pieces: &[&[u8]] = if pieces.is_empty() { &[&[]] } else { pieces };
    let last = pieces.len() - 1;
    for (i, piece) in pieces.iter().enumerate() {
        let flush = if i == last { flush } else { Z_NO_FLUSH };
        pump_deflate(deflate, piece, flush, &mut sink, ctx)?;
    }
    Ok(sink.into_output())
}
