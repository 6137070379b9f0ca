//! A one-shot `gzip`, `deflate` or `deflateRaw` of a large input in
//! blocks on several threads, as pigz does: each block is a raw deflate
//! stream primed with the window of input before it as its dictionary and
//! ended on a byte boundary with a sync flush, the last one finished; the
//! blocks back to back are one deflate stream that any inflater reads, in
//! the container of a one-thread run (its header, and a checksum combined
//! from the blocks' own).
//!
//! The output differs from a one-thread run's in its bytes (each block
//! starts afresh, and a sync flush marks its end: a few bytes per block)
//! but not in what it decodes to. It depends only on the input and the
//! parameters, not on how many threads helped.

use super::compress::{deflate_error, CompressParams, Z_SYNC_FLUSH};
use super::deflater::Deflater;
use super::{Format, Z_FINISH};
use crate::kernels::codec::{pump, Progress};
use crate::kernels::{write_parts, KernelError, Output, Parallel, PartResults, RunContext, Sink};

/// Bytes of input per block: 128 blocks for 128 MiB, enough for any pool
/// to share out, and large enough that a block's fresh start and sync
/// flush cost well under 1 % of its output.
pub const BLOCK: usize = 1 << 20;
/// Inputs below this run whole: two blocks at least.
pub const MIN_SPLIT: usize = 2 * BLOCK;

/// The whole job: header, blocks, trailer into `out`.
pub(super) fn run(
    format: Format,
    p: &CompressParams,
    bits: u8,
    input: &[u8],
    ctx: &RunContext<'_>,
    out: &mut Sink,
    parallel: &dyn Parallel,
) -> Result<(), KernelError> {
    let blocks: Vec<&[u8]> = input.chunks(BLOCK).collect();
    let window = 1usize << bits;
    let results = PartResults::new(blocks.len(), out.limit().saturating_sub(out.len()));
    let part = |i: usize| {
        let start = i * BLOCK;
        let dictionary = (i > 0).then(|| &input[start.saturating_sub(window)..start]);
        let last = i + 1 == blocks.len();
        let made = results.room().and_then(|room| {
            let made = block(format, p, bits, dictionary, blocks[i], last, room, ctx)?;
            results.count(made.0.as_bytes().len())?;
            Ok(made)
        });
        results.set(i, made);
    };
    parallel.run_parts(blocks.len(), &part);
    let outputs = results.into_results()?;
    let (header, trailer) = container(format, p, bits, input, &outputs)?;
    let mut pieces = vec![&header[..]];
    pieces.extend(outputs.iter().map(|(o, _)| o.as_bytes()));
    pieces.push(&trailer);
    write_parts(out, &pieces, parallel)
}

/// One block: raw deflate, primed with `dictionary`, ended with a sync
/// flush or (the last) finished, of at most `limit` bytes; with the
/// block's checksum (CRC-32 for gzip, Adler-32 for zlib, none for raw).
#[allow(clippy::too_many_arguments)]
fn block(
    format: Format,
    p: &CompressParams,
    bits: u8,
    dictionary: Option<&[u8]>,
    data: &[u8],
    last: bool,
    limit: usize,
    ctx: &RunContext<'_>,
) -> Result<(Output, u32), KernelError> {
    ctx.check()?;
    let mut deflate =
        Deflater::new(p.level, Format::Raw.window_bits(bits), p.mem_level, p.strategy)
            .map_err(deflate_error)?;
    if let Some(dictionary) = dictionary {
        deflate.set_dictionary(dictionary).map_err(deflate_error)?;
    }
    let mut sink = Sink::new(limit);
    // Deflate's bound for a block that does not compress (noise): one
    // reservation, no regrowth copies; what is not written is not touched.
    sink.reserve(data.len() + data.len() / 1000 + 64);
    let flush = if last { Z_FINISH as i32 } else { Z_SYNC_FLUSH };
    pump(&mut sink, ctx, data, true, |input, room| {
        let step = deflate.deflate(input, room, flush).map_err(deflate_error)?;
        Ok(Progress { consumed: step.consumed, produced: step.produced, ended: step.ended })
    })?;
    let checksum = match format {
        Format::Gzip => crc32fast::hash(data),
        Format::Zlib => zlib_rs::adler32::adler32(1, data),
        _ => 0,
    };
    Ok((sink.into_output(), checksum))
}

/// The header a one-thread run writes (taken from deflating nothing with
/// the same parameters), and the trailer of the whole input.
fn container(
    format: Format,
    p: &CompressParams,
    bits: u8,
    input: &[u8],
    outputs: &[(Output, u32)],
) -> Result<(Vec<u8>, Vec<u8>), KernelError> {
    let header_len = match format {
        Format::Gzip => 10,
        Format::Zlib => 2,
        _ => return Ok((Vec::new(), Vec::new())),
    };
    let mut deflate = Deflater::new(p.level, format.window_bits(bits), p.mem_level, p.strategy)
        .map_err(deflate_error)?;
    let mut empty = [0u8; 64];
    let step = deflate.deflate(&[], &mut empty, Z_FINISH as i32).map_err(deflate_error)?;
    let header = empty[..header_len.min(step.produced)].to_vec();
    let trailer = match format {
        Format::Gzip => {
            let mut crc = crc32fast::Hasher::new();
            let mut at = 0;
            for (_, block_crc) in outputs {
                let len = BLOCK.min(input.len() - at);
                crc.combine(&crc32fast::Hasher::new_with_initial_len(*block_crc, len as u64));
                at += len;
            }
            let mut t = crc.finalize().to_le_bytes().to_vec();
            t.extend_from_slice(&(input.len() as u32).to_le_bytes());
            t
        }
        _ => {
            let mut adler = 1u32;
            let mut at = 0;
            for (_, block_adler) in outputs {
                let len = BLOCK.min(input.len() - at);
                adler = zlib_rs::adler32::adler32_combine(adler, *block_adler, len as u64);
                at += len;
            }
            adler.to_be_bytes().to_vec()
        }
    };
    Ok((header, trailer))
}
