//! A one-shot `gzip`, `deflate` or `deflateRaw` of a large input in
//! blocks on several threads (`blocks.rs`): every block on whichever
//! thread is free, then the container of a one-thread run around them.
//!
//! The output differs from a one-thread run's in its bytes (each block
//! starts afresh, and a sync flush marks its end: a few bytes per block)
//! but not in what it decodes to. It depends only on the input and the
//! parameters, not on how many threads helped.

pub use super::blocks::BLOCK;
use super::blocks::{self, Check, Settings, WINDOW, Z_SYNC_FLUSH};
use super::{Format, Z_FINISH};
use crate::kernels::{write_parts, KernelError, Output, Parallel, PartResults, RunContext, Sink};

/// Inputs below this run whole: two blocks at least.
pub const MIN_SPLIT: usize = 2 * BLOCK;

/// The whole job: header, blocks, trailer into `out`.
pub(super) fn run(
    format: Format,
    settings: Settings,
    input: &[u8],
    ctx: &RunContext<'_>,
    out: &mut Sink,
    parallel: &dyn Parallel,
) -> Result<(), KernelError> {
    let blocks: Vec<&[u8]> = input.chunks(BLOCK).collect();
    let results = PartResults::new(blocks.len(), out.limit().saturating_sub(out.len()));
    let part = |i: usize| {
        let start = i * BLOCK;
        let last = i + 1 == blocks.len();
        let made = results.room().and_then(|room| {
            let mut deflate = settings.deflater(&input[start.saturating_sub(WINDOW)..start])?;
            let flush = if last { Z_FINISH as i32 } else { Z_SYNC_FLUSH };
            let made = blocks::compress(&mut deflate, &[blocks[i]], flush, room, ctx)?;
            results.count(made.as_bytes().len())?;
            Ok((made, Check::of(format, &[blocks[i]])))
        });
        results.set(i, made);
    };
    parallel.run_parts(blocks.len(), &part);
    let outputs: Vec<(Output, Check)> = results.into_results()?;
    let header = settings.header(format)?;
    let mut check = Check::new(format);
    for (_, block) in &outputs {
        check.join(block);
    }
    let trailer = check.trailer();
    let mut pieces = vec![&header[..]];
    pieces.extend(outputs.iter().map(|(o, _)| o.as_bytes()));
    pieces.push(&trailer);
    write_parts(out, &pieces, parallel)
}
