//! Where a stream is between its chunks, and the walk that feeds a chunk's
//! input to the kernel's state from there.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{ChunkEnd, RESET};
use crate::input::{slice_parts, Input};
use crate::kernels::codec::OUTPUT_STEP;
use crate::kernels::{AnyKernel, Fed, KernelError, Params, RunContext, Sink, Transform, CHUNK};

/// The kernel's state and where the stream is.
pub(super) struct Position {
    /// Made by the first chunk.
    pub(super) transform: Option<Box<dyn Transform>>,
    /// Output bytes so far (the limit is the whole stream's).
    pub(super) produced: usize,
    /// The sequence number of the chunk that runs next.
    pub(super) next: u64,
    /// Bytes of that chunk's input taken so far.
    pub(super) fed: usize,
    /// That chunk's input is all taken; its flush or finish is under way.
    pub(super) ending: bool,
    /// The kernel's format ended: later input is not read.
    pub(super) ended: bool,
    /// The last call of the kernel stopped at the pause point: it is owed
    /// another, even when no input is left (a decoder may hold output for
    /// input it took).
    pub(super) owes: bool,
    /// Input bytes taken in all.
    pub(super) consumed: u64,
    /// The kernel takes a chunk's input in parts on several threads
    /// ([`Transform::allow_parts`]).
    pub(super) splits: bool,
    /// The kernel wrote output while taking input (before a flush or its
    /// finish): what a digest's stream refuses, whatever the chunking.
    pub(super) wrote_early: bool,
}

/// Why the walk over a chunk's input stopped early.
enum Halt {
    Paused,
    Ended,
    Failed(KernelError),
}

impl Position {
    /// Before the first chunk.
    pub(super) fn fresh() -> Position {
        Position {
            transform: None,
            produced: 0,
            next: 0,
            fed: 0,
            ending: false,
            ended: false,
            owes: false,
            consumed: 0,
            splits: false,
            wrote_early: false,
        }
    }

    /// Output the kernel's state has made already ([`Transform::pending`]).
    pub(super) fn pending(&self) -> usize {
        self.transform.as_deref().map_or(0, |t| t.pending())
    }

    /// Takes `input` from `fed` on, then runs `end`; true when it stopped
    /// early (the sink's pause point, or `yield_requested`). Moves `next` on
    /// once the chunk is done. `whole`: a stream's only chunk may run as a
    /// one-shot task (not a digest's, nor an inline run).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn advance(
        &mut self,
        kernel: &dyn AnyKernel,
        params: &Params,
        input: &Input,
        end: ChunkEnd,
        out: &mut Sink,
        ctx: &RunContext<'_>,
        yield_requested: Option<&AtomicBool>,
        whole: bool,
    ) -> Result<bool, KernelError> {
        if whole
            && self.transform.is_none()
            && end == ChunkEnd::Last
            && !kernel.expands()
            && input.len() <= out.before_pause().saturating_add(OUTPUT_STEP)
        {
            // A stream given its whole input at once (`end(body)` on a
            // fresh stream) is a one-shot task: the kernel's whole-input
            // ways (libdeflate, parts on several threads) apply. An encoder
            // makes about as much output as its input at most: within the
            // reader's room and one output step, as a step's would be.
            kernel.run(params, input, ctx, out)?;
            self.consumed += input.len() as u64;
            self.next += 1;
            self.fed = 0;
            return Ok(false);
        }
        if self.transform.is_none() {
            let mut state = kernel.start(params, None)?;
            self.splits = ctx.parallel().is_some() && state.allow_parts();
            self.transform = Some(state);
        }
        let Some(state) = self.transform.as_deref_mut() else { unreachable!("started above") };
        if !self.ending {
            if let (Some(parallel), true, false) = (ctx.parallel(), self.splits, self.ended) {
                let rest = slice_parts(&input.parts(), self.fed, usize::MAX);
                let taken = state.update_parts(&rest, out, ctx, parallel)?;
                self.fed += taken;
                self.consumed += taken as u64;
                // Their output is owed, even when no input is left.
                self.owes |= taken > 0;
            }
            if !self.ended {
                let (fed, consumed) = (&mut self.fed, &mut self.consumed);
                let walked =
                    walk(state, input, *fed, &mut self.owes, out, ctx, yield_requested, |n| {
                        *fed += n;
                        *consumed += n as u64;
                    });
                self.wrote_early |= !out.is_empty();
                match walked {
                    Ok(()) => {}
                    Err(Halt::Paused) => return Ok(true),
                    Err(Halt::Ended) => self.ended = true,
                    Err(Halt::Failed(e)) => return Err(e),
                }
            }
            self.ending = true;
        }
        // What the input made before any flush or finish: a digest makes none.
        self.wrote_early |= !out.is_empty();
        let done = match end {
            ChunkEnd::More => true,
            ChunkEnd::Flush(RESET) => {
                // As a new stream would: the kernel's state started over in
                // place, or made afresh.
                if !state.reset()? {
                    self.transform = Some(kernel.start(params, None)?);
                }
                self.ended = false;
                self.owes = false;
                true
            }
            // A decoder past its end holds nothing a flush could write.
            ChunkEnd::Flush(_) if self.ended => true,
            ChunkEnd::Flush(kind) => state.flush_until(kind, out, ctx)?,
            ChunkEnd::Last => state.finish_until(out, ctx)?,
        };
        if !done {
            return Ok(true);
        }
        self.next += 1;
        self.fed = 0;
        self.ending = false;
        Ok(false)
    }
}

/// Feeds `state` the bytes of `input` after the first `skip`, a piece of at
/// most [`CHUNK`] bytes at a time (cancellation and `yield_requested` are
/// looked at before each, and the sink's pause point); `took(n)` counts
/// what it takes. `owes`: the kernel stopped at its pause point last time
/// and is called again even when no input is left.
#[allow(clippy::too_many_arguments)]
fn walk(
    state: &mut dyn Transform,
    input: &Input,
    mut skip: usize,
    owes: &mut bool,
    out: &mut Sink,
    ctx: &RunContext<'_>,
    yield_requested: Option<&AtomicBool>,
    mut took: impl FnMut(usize),
) -> Result<(), Halt> {
    let mut feed = |state: &mut dyn Transform,
                    piece: &[u8],
                    owes: &mut bool,
                    out: &mut Sink|
     -> Result<usize, Halt> {
        if out.should_pause() || yield_requested.is_some_and(|y| y.load(Ordering::Relaxed)) {
            return Err(Halt::Paused);
        }
        ctx.check().map_err(Halt::Failed)?;
        let fed = state.update_until(piece, out, ctx).map_err(Halt::Failed)?;
        *owes = matches!(fed, Fed::Paused(_));
        match fed {
            Fed::All => {
                took(piece.len());
                Ok(piece.len())
            }
            Fed::Paused(n) => {
                took(n);
                Err(Halt::Paused)
            }
            Fed::Ended(n) => {
                took(n);
                Err(Halt::Ended)
            }
        }
    };
    input.for_each_part(|part| {
        if skip >= part.len() {
            skip -= part.len();
            return Ok(());
        }
        let mut part = &part[skip..];
        skip = 0;
        while !part.is_empty() {
            let n = feed(state, &part[..part.len().min(CHUNK)], owes, out)?;
            part = &part[n..];
        }
        Ok(())
    })?;
    // All input taken, but the kernel stopped with output still to write.
    while *owes {
        feed(state, &[], owes, out)?;
    }
    Ok(())
}
