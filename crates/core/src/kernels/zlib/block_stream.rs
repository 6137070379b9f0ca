//! A `gzip`, `deflate` or `deflateRaw` stream in blocks (`blocks.rs`):
//! `createGzip()` and the others on a pool whose threads may split work.
//!
//! The stream cuts its input every [`STREAM_BLOCK`] bytes, counted from
//! its start (or its last `reset()`), wherever its writes begin and end.
//! A block stays open (the `open` deflater) until input past its end
//! arrives or the stream ends; a flush or `params()` goes to the open
//! block, as `node:zlib` sends them to its one deflate stream. Stream
//! blocks are smaller than a one-shot task's: a stream's task holds only
//! what was written while the one before it ran, often one write of
//! 64 KiB to 1 MiB, and a block is the grain threads share.
//!
//! When a task's input reaches past the open block, the open block's part
//! of it, the blocks it completes and the one it opens are compressed at
//! once, each on whichever pool thread is idle ([`BlockStream::take`]).
//! Their output waits in `pending` and goes out at the reader's pace,
//! ahead of anything later: besides its task's input, a stream holds up
//! to about as much again (each block's room is deflate's bound for its
//! input, reserved at once so noise is not copied as it grows).
//!
//! The container is written here: the header a one-thread run writes, and
//! a trailer whose checksum is joined from the blocks' own. As with a
//! stream in one piece, the bytes depend on how the writes reach the
//! deflater (zlib-rs's output depends on where its calls cut the input);
//! what they decode to does not.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::blocks::{self, Check, Settings, WINDOW, Z_FULL_FLUSH, Z_NO_FLUSH, Z_SYNC_FLUSH};
use super::deflater::{deflate_error, pump_deflate, Deflater};
use super::{Format, Z_FINISH};
use crate::input::slice_parts;
use crate::kernels::codec::{fed, Stop, OUTPUT_STEP};
use crate::kernels::{Fed, KernelError, Output, Parallel, PartResults, RunContext, Sink};

/// Bytes of input per block of a stream: four per 1 MiB write.
pub(crate) const STREAM_BLOCK: usize = 256 * 1024;
const BLOCK: u64 = STREAM_BLOCK as u64;
/// The whole blocks a step takes per thread of the pool, at most: the 2 MiB
/// a producer's writes queue by default (lib/args/task-options.js) are one job
/// on two threads, not two jobs with a wait and a round trip between them.
const BLOCKS_PER_THREAD: u64 = 4;

pub(super) struct BlockStream {
    format: Format,
    /// The level and strategy of the last `params()`, for blocks to come.
    settings: Settings,
    /// The open block's deflater; `None` only while a [`take`](Self::take)
    /// has it.
    open: Option<Deflater>,
    /// Input bytes since the stream (or its last reset) began.
    at: u64,
    /// No block's dictionary reaches before this offset: the start, or the
    /// last full flush (after which a reader may start decoding afresh).
    history_from: u64,
    /// The input before `at`, back to `history_from` and at most the last
    /// [`WINDOW`] bytes of it (up to twice that before it is trimmed).
    window: Vec<u8>,
    check: Check,
    /// A new stream's header is still to be written.
    header_due: bool,
    /// Blocks' output not yet written, and how much of the first was.
    pending: VecDeque<Output>,
    pending_at: usize,
}

/// Where a stream in blocks takes `n` bytes: the open block's part, then
/// whole blocks, then the part of the block they open.
struct Segment {
    from: usize,
    to: usize,
    /// Its start in the stream.
    start: u64,
}

impl BlockStream {
    pub fn new(format: Format, settings: Settings) -> Result<BlockStream, KernelError> {
        Ok(BlockStream {
            format,
            settings,
            open: Some(settings.deflater(&[])?),
            at: 0,
            history_from: 0,
            window: Vec::new(),
            check: Check::new(format),
            header_due: true,
            pending: VecDeque::new(),
            pending_at: 0,
        })
    }

    /// The end (in the stream) of the block the next byte of input goes to
    /// unless it starts a new one: the open block's.
    fn open_end(&self) -> u64 {
        if self.at == 0 {
            BLOCK
        } else {
            (self.at - 1) / BLOCK * BLOCK + BLOCK
        }
    }

    fn open(&mut self) -> Result<&mut Deflater, KernelError> {
        self.open
            .as_mut()
            .ok_or_else(|| KernelError::InvalidInput("a block stream lost its deflater".into()))
    }

    /// Writes what blocks made and the reader has not had, up to the
    /// sink's pause point; true once none is left. A block's output that
    /// fits an empty sink becomes its output as it is, without a copy; a
    /// sink that has output already and [stops between
    /// pieces](Sink::stops_between_pieces) stops before the next block's
    /// (false), for the next step to take it so.
    fn drain(&mut self, out: &mut Sink) -> Result<bool, KernelError> {
        while let Some(front) = self.pending.front() {
            if out.should_pause() {
                return Ok(false);
            }
            if self.pending_at == 0 && front.is_spilled() {
                if !out.is_empty() {
                    if out.stops_between_pieces() {
                        return Ok(false);
                    }
                } else if let Some(whole) = self.pending.pop_front() {
                    match out.adopt(whole) {
                        Ok(()) => continue,
                        // Past the pause point: copied up to it, below.
                        Err(whole) => self.pending.push_front(whole),
                    }
                }
            }
            let Some(front) = self.pending.front() else { break };
            let bytes = &front.as_bytes()[self.pending_at..];
            // Made already: it stops at the pause point exactly.
            let n = bytes.len().min(OUTPUT_STEP).min(out.before_pause());
            out.write(&bytes[..n])?;
            self.pending_at += n;
            if self.pending_at == front.as_bytes().len() {
                self.pending.pop_front();
                self.pending_at = 0;
            }
        }
        Ok(true)
    }

    /// Output the blocks made that the reader has not had.
    pub fn pending(&self) -> usize {
        self.pending.iter().map(|p| p.as_bytes().len()).sum::<usize>() - self.pending_at
    }

    /// Drains, then writes a new stream's header if it is due: what every
    /// call does before its own output. False while output is pending.
    fn ready(&mut self, out: &mut Sink) -> Result<bool, KernelError> {
        if !self.drain(out)? {
            return Ok(false);
        }
        if self.header_due {
            out.write(&self.settings.header(self.format)?)?;
            self.header_due = false;
        }
        Ok(true)
    }

    /// Counts `bytes` as taken: the checksum, the window, the offset.
    fn took(&mut self, bytes: &[u8]) {
        self.check.update(bytes);
        self.remember(bytes);
        self.at += bytes.len() as u64;
    }

    fn remember(&mut self, bytes: &[u8]) {
        let keep = (self.at + bytes.len() as u64 - self.history_from).min(WINDOW as u64) as usize;
        if bytes.len() >= keep {
            self.window.clear();
            self.window.extend_from_slice(&bytes[bytes.len() - keep..]);
            return;
        }
        self.window.extend_from_slice(bytes);
        // Trimmed once it is twice the window: a memmove of 32 KiB per
        // 32 KiB taken at most, however small the writes.
        if self.window.len() > 2 * WINDOW {
            self.window.drain(..self.window.len() - WINDOW);
        }
    }

    /// `update_until` for the serial path: a chunk within the open block
    /// goes to its deflater at the reader's pace; one that reaches past it
    /// is taken as blocks, on this thread.
    pub fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        let had_pending = !self.pending.is_empty();
        if !self.ready(out)? {
            return Ok(Fed::Paused(0));
        }
        if had_pending {
            // Blocks' output is all written: the rest of the task's input
            // goes to the next step's update_parts, on idle threads again;
            // with none left, the call is done (the open deflater's last
            // call had no flush either, so one more would change nothing).
            return Ok(if chunk.is_empty() { Fed::All } else { Fed::Paused(0) });
        }
        if chunk.len() as u64 > self.open_end() - self.at {
            let limit = out.limit().saturating_sub(out.len());
            self.take(&[chunk], limit, ctx, None)?;
            return Ok(if self.drain(out)? { Fed::All } else { Fed::Paused(chunk.len()) });
        }
        let stop = pump_deflate(self.open()?, chunk, Z_NO_FLUSH, out, ctx)?;
        let taken = match stop {
            Stop::Paused { at } => at,
            _ => chunk.len(),
        };
        self.took(&chunk[..taken]);
        Ok(fed(stop, 0))
    }

    /// Takes the start of `rest` (a task's input not yet taken) as blocks
    /// on `parallel`'s idle threads, when it reaches past the open block
    /// and no output is pending: up to [`BLOCKS_PER_THREAD`] blocks per
    /// thread past the open one, so that the thread running the task is
    /// back within about ten milliseconds, whatever the size of the write
    /// (queued tasks and other streams wait for it). Returns the bytes
    /// taken.
    pub fn update_parts(
        &mut self,
        rest: &[&[u8]],
        out: &mut Sink,
        ctx: &RunContext<'_>,
        parallel: &dyn Parallel,
    ) -> Result<usize, KernelError> {
        let len: u64 = rest.iter().map(|r| r.len() as u64).sum();
        let open_end = self.open_end();
        if !self.pending.is_empty() || len <= open_end - self.at {
            return Ok(0);
        }
        let most = open_end + BLOCKS_PER_THREAD * parallel.width() as u64 * BLOCK;
        let take = (len.min(most - self.at)) as usize;
        let limit = out.limit().saturating_sub(out.len());
        self.take(&slice_parts(rest, 0, take), limit, ctx, Some(parallel))?;
        Ok(take)
    }

    /// Takes all of `rest`, which reaches past the open block: the open
    /// block's part, ended with a sync flush; every whole block after it,
    /// each with a fresh deflater primed with the window before it, ended
    /// likewise; and the start of the last block, whose deflater becomes
    /// the open one. Each on `parallel` (or in turn on this thread); the
    /// output, at most `limit` bytes, is pending.
    fn take(
        &mut self,
        rest: &[&[u8]],
        limit: usize,
        ctx: &RunContext<'_>,
        parallel: Option<&dyn Parallel>,
    ) -> Result<(), KernelError> {
        let len: usize = rest.iter().map(|r| r.len()).sum();
        let end = self.at + len as u64;
        let mut segments = Vec::new();
        let mut start = self.at;
        let mut cut = self.open_end();
        while cut < end {
            segments.push(Segment {
                from: (start - self.at) as usize,
                to: (cut - self.at) as usize,
                start,
            });
            start = cut;
            cut += BLOCK;
        }
        segments.push(Segment { from: (start - self.at) as usize, to: len, start });
        let mut header = Vec::new();
        if self.header_due {
            header = self.settings.header(self.format)?;
            self.header_due = false;
        }
        let first = Mutex::new(self.open.take());
        let last = segments.len() - 1;
        let results = PartResults::new(segments.len(), limit.saturating_sub(header.len()));
        let (format, settings) = (self.format, self.settings);
        let before = Before { window: &self.window, at: self.at, history_from: self.history_from };
        let part = |i: usize| {
            let segment = &segments[i];
            let made = results.room().and_then(|room| {
                let pieces = slice_parts(rest, segment.from, segment.to);
                let mut deflate = if i == 0 {
                    first.lock().unwrap_or_else(|e| e.into_inner()).take().ok_or_else(|| {
                        KernelError::InvalidInput("a block stream lost its deflater".into())
                    })?
                } else {
                    settings.deflater(&before.dictionary(rest, segment.start))?
                };
                let flush = if i == last { Z_NO_FLUSH } else { Z_SYNC_FLUSH };
                let made = blocks::compress(&mut deflate, &pieces, flush, room, ctx)?;
                results.count(made.as_bytes().len())?;
                Ok((made, Check::of(format, &pieces), (i == last).then_some(deflate)))
            });
            results.set(i, made);
        };
        match parallel {
            Some(parallel) => parallel.run_parts(segments.len(), &part),
            None => (0..segments.len()).for_each(part),
        }
        let made = results.into_results()?;
        if !header.is_empty() {
            self.pending.push_back(Output::from_slice(&header));
        }
        for (output, check, deflate) in made {
            self.pending.push_back(output);
            self.check.join(&check);
            if deflate.is_some() {
                self.open = deflate;
            }
        }
        for piece in rest {
            self.remember(piece);
            self.at += piece.len() as u64;
        }
        Ok(())
    }

    /// A flush of zlib's `kind` of the open block; a full flush also keeps
    /// later blocks' dictionaries from reaching before it. False when it
    /// stopped at the pause point: call again with the same kind.
    pub fn flush(
        &mut self,
        kind: i32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        if !self.ready(out)? || self.pump_open(kind, out, ctx)? {
            return Ok(false);
        }
        if kind == Z_FULL_FLUSH {
            self.history_from = self.at;
            self.window.clear();
        }
        Ok(true)
    }

    /// node:zlib's `params()`: a sync flush, then the level and strategy
    /// for the open block and the blocks after it.
    pub fn params(
        &mut self,
        level: i32,
        strategy: i32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        if !self.ready(out)? || self.pump_open(Z_SYNC_FLUSH, out, ctx)? {
            return Ok(false);
        }
        let room = out.unfilled(64)?;
        let produced = self.open()?.params(level, strategy, room).map_err(deflate_error)?;
        out.commit(produced);
        self.settings.level = level;
        self.settings.strategy = strategy;
        Ok(true)
    }

    /// The last block finished, then the trailer.
    pub fn finish(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        if !self.ready(out)? || self.pump_open(Z_FINISH as i32, out, ctx)? {
            return Ok(false);
        }
        out.write(&self.check.trailer())?;
        Ok(true)
    }

    /// An empty write: a deflate call with no input, as node:zlib makes
    /// (after it, a flush is not a repeat of the one before and writes its
    /// empty block).
    pub fn empty_write(&mut self, out: &mut Sink) -> Result<bool, KernelError> {
        if !self.ready(out)? {
            return Ok(false);
        }
        let room = out.unfilled(64)?;
        let step = self.open()?.deflate(&[], room, Z_NO_FLUSH).map_err(deflate_error)?;
        out.commit(step.produced);
        Ok(true)
    }

    /// `reset()`: a new stream with the present level and strategy.
    pub fn reset(&mut self) -> Result<(), KernelError> {
        // zlib's deflateReset, as a stream in one piece does: it keeps the
        // level and strategy of the last `params()`.
        self.open()?.reset().map_err(deflate_error)?;
        self.at = 0;
        self.history_from = 0;
        self.window.clear();
        self.check = Check::new(self.format);
        self.header_due = true;
        Ok(())
    }

    /// Runs the open block's deflater with `flush` and no input; true when
    /// it stopped at the pause point.
    fn pump_open(
        &mut self,
        flush: i32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        let stop = pump_deflate(self.open()?, &[], flush, out, ctx)?;
        Ok(matches!(stop, Stop::Paused { .. }))
    }
}

/// The input before a [`take`](BlockStream::take): its window, where it
/// ends, and where dictionaries may start.
struct Before<'a> {
    window: &'a [u8],
    at: u64,
    history_from: u64,
}

impl Before<'_> {
    /// The dictionary of a block that starts at `start` (in the stream),
    /// `start - at` bytes into `rest`.
    fn dictionary(&self, rest: &[&[u8]], start: u64) -> Vec<u8> {
        let from = start.saturating_sub(WINDOW as u64).max(self.history_from);
        let mut dictionary = Vec::with_capacity((start - from) as usize);
        if from < self.at {
            let before = (self.at - from) as usize;
            dictionary.extend_from_slice(&self.window[self.window.len() - before..]);
        }
        let skip = from.saturating_sub(self.at) as usize;
        for piece in slice_parts(rest, skip, (start - self.at) as usize) {
            dictionary.extend_from_slice(piece);
        }
        dictionary
    }
}

#[cfg(test)]
#[path = "block_stream_tests.rs"]
mod tests;
