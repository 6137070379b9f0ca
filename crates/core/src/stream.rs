//! Streams: a kernel's state kept from one task to the next (`createHash`,
//! `createGzip()` and the other codec streams).
//!
//! A stream's chunks are tasks like any other (queue, autoscaling, stats,
//! cancellation); each carries the stream's [`Stream`], its sequence number,
//! what follows its input ([`ChunkEnd`]) and how much output it may make
//! before it stops (`budget`). The first chunk starts the kernel's state
//! ([`AnyKernel::start`]), each chunk feeds it, the last one finishes it.
//! Between chunks the state is parked here, so the next chunk may run on any
//! thread.
//!
//! # Where a stream is
//!
//! The stream knows which chunk it runs next (`next`) and how far into it it
//! got (`fed`, then `ending` once its input is all taken and its flush or
//! finish is under way). A chunk's task therefore never needs to run in one
//! go:
//!
//! * **Paused**: the task stops once its output reaches its `budget` (the
//!   room the stream's reader has), where its codec can stop
//!   ([`Transform::update_until`]). The binding hands the output on and runs
//!   the same chunk again (same `seq`, same input) when the reader wants
//!   more; it goes on from where it stopped. A stream's memory so stays near
//!   its reader's `highWaterMark` plus one piece of output, whatever the
//!   compression ratio.
//! * **Ended**: a decoder reached the end of what it decodes (a zlib or
//!   brotli stream's end, a zero byte after a gzip member) with input left:
//!   the rest, and every later chunk's input, is not read (`node:zlib` ends
//!   such a stream's readable side).
//! * **Taken over**: [`Stream::run_inline`] runs the chunk in flight and
//!   more on the calling thread (a hash's `update()` past its staging cap).
//!   It asks the chunk running to stop at its next piece (`yield_requested`)
//!   and takes the lock; the chunk's task, when a thread gets to it, finds
//!   its `seq` done and does nothing.
//!
//! Order is the binding's job: it submits a stream's next chunk only once
//! the previous one has completed (or was taken over), so chunks run one at
//! a time and in order. The mutex only turns a misuse into a wait, never a
//! race. A chunk that fails, panics or is cancelled ends the stream: its
//! state is dropped, and later chunks fail.
//!
//! After each step the stream records what it did (a [`Report`]: paused,
//! ended or done, and the input bytes taken in all, `bytesWritten`), which
//! the binding reads once the chunk's completion has reached it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::input::Input;
use crate::kernels::{self, AnyKernel, Fed, KernelError, KernelId, Output, Params, RunContext, Sink, Transform, CHUNK};

/// The state of one stream between its chunks.
pub struct Stream {
    kernel: KernelId,
    params: Params,
    /// Most output bytes of the whole stream.
    limit: usize,
    state: Mutex<State>,
    /// Raised by [`Stream::run_inline`]: the chunk running stops at its
    /// next piece and lets go of the state.
    yield_requested: AtomicBool,
    /// The last step's [`Report`], packed (see [`Report::pack`]).
    report: AtomicU64,
}

enum State {
    /// Between chunks (or before the first).
    Open(Box<Position>),
    /// Finished, failed or abandoned.
    Closed,
}

/// The kernel's state and where the stream is.
struct Position {
    /// Made by the first chunk.
    transform: Option<Box<dyn Transform>>,
    /// Output bytes so far (the limit is the whole stream's).
    produced: usize,
    /// The sequence number of the chunk that runs next.
    next: u64,
    /// Bytes of that chunk's input taken so far.
    fed: usize,
    /// That chunk's input is all taken; its flush or finish is under way.
    ending: bool,
    /// The kernel's format ended: later input is not read.
    ended: bool,
    /// The last call of the kernel stopped at the pause point: it is owed
    /// another, even when no input is left (a decoder may hold output for
    /// input it took).
    owes: bool,
    /// Input bytes taken in all.
    consumed: u64,
}

/// What a task of a stream carries.
#[derive(Clone)]
pub struct StreamChunk {
    pub stream: Arc<Stream>,
    /// The chunk's number in its stream: 0, 1, 2... (a paused chunk runs
    /// again with the same number).
    pub seq: u64,
    /// What follows the chunk's input.
    pub end: ChunkEnd,
    /// Output bytes after which the task stops where it can (its stream's
    /// reader is full); `usize::MAX` for none.
    pub budget: usize,
}

/// What a stream's kernel does after a chunk's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkEnd {
    /// Nothing: more chunks follow.
    More,
    /// Flushes (`Transform::flush` with this kind); more chunks may follow.
    Flush(u32),
    /// Finishes: this chunk is the stream's last.
    Last,
}

/// What the last step of a stream did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    pub outcome: Outcome,
    /// Input bytes the kernel has taken in all (`bytesWritten`).
    pub consumed: u64,
}

/// How a step left its chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The chunk ran to its end (and its flush or finish).
    Done = 0,
    /// The chunk stopped early (its output reached the budget): run it again.
    Paused = 1,
    /// The chunk ran to its end, and the kernel's format had ended: no
    /// later input is read.
    Ended = 2,
}

impl Report {
    /// One number: `consumed * 4 + outcome` (exact in a JavaScript number
    /// up to 2^51 bytes).
    pub fn pack(self) -> u64 {
        self.consumed << 2 | self.outcome as u64
    }

    pub fn unpack(n: u64) -> Report {
        let outcome = match n & 3 {
            1 => Outcome::Paused,
            2 => Outcome::Ended,
            _ => Outcome::Done,
        };
        Report { outcome, consumed: n >> 2 }
    }
}

impl std::fmt::Debug for StreamChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamChunk").field("seq", &self.seq).field("end", &self.end).field("budget", &self.budget).finish_non_exhaustive()
    }
}

/// Why the walk over a chunk's input stopped early.
enum Halt {
    Paused,
    Ended,
    Failed(KernelError),
}

impl Stream {
    /// A stream of `kernel` with its checked `params`, whose output in all
    /// may not pass `limit` bytes. No chunk has run on it yet.
    pub fn new(kernel: KernelId, params: Params, limit: usize) -> Arc<Stream> {
        let position = Position { transform: None, produced: 0, next: 0, fed: 0, ending: false, ended: false, owes: false, consumed: 0 };
        Arc::new(Stream {
            kernel,
            params,
            limit,
            state: Mutex::new(State::Open(Box::new(position))),
            yield_requested: AtomicBool::new(false),
            report: AtomicU64::new(0),
        })
    }

    /// The stream's kernel.
    pub fn kernel(&self) -> KernelId {
        self.kernel
    }

    /// Whether the stream has ended (finished, or a chunk failed).
    pub fn is_ended(&self) -> bool {
        matches!(*self.state.lock().unwrap_or_else(|e| e.into_inner()), State::Closed)
    }

    /// What the last step did. Read it once the step's completion has
    /// reached the reader (the completion queue orders the two).
    pub fn report(&self) -> Report {
        Report::unpack(self.report.load(Ordering::Acquire))
    }

    fn kernel_ref(&self) -> Result<&'static dyn AnyKernel, KernelError> {
        kernels::get(self.kernel).ok_or_else(|| KernelError::InvalidInput(format!("no kernel with id {}", self.kernel)))
    }

    /// Runs one step of a chunk: starts the kernel's state at the first,
    /// feeds it `input` from where the chunk got to (in the context's
    /// pieces, cancellable between them), then flushes or finishes it as
    /// `end` says; returns what the step output. The step stops early when
    /// its output reaches `budget` or [`run_inline`](Stream::run_inline)
    /// wants the state (the report says paused). A chunk already taken
    /// over does nothing. The state is taken out while the step runs, so an
    /// error or a panic leaves the stream ended.
    pub(crate) fn step(&self, chunk: &StreamChunk, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let kernel = self.kernel_ref()?;
        let mut slot = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut position = match std::mem::replace(&mut *slot, State::Closed) {
            State::Open(position) => position,
            State::Closed => return Err(KernelError::InvalidInput("the stream has ended: a chunk failed, or it was finished".to_owned())),
        };
        if chunk.seq < position.next {
            // Taken over by run_inline: nothing left to do, nothing to report.
            *slot = State::Open(position);
            return Ok(Output::EMPTY);
        }
        if chunk.seq > position.next {
            return Err(KernelError::InvalidInput(format!("chunk {} of a stream ran before chunk {}", chunk.seq, position.next)));
        }
        let mut out = Sink::with_pause(self.limit.saturating_sub(position.produced), chunk.budget);
        let paused = match position.advance(kernel, &self.params, input, chunk.end, &mut out, ctx, Some(&self.yield_requested)) {
            // The limit is the stream's, not this step's room.
            Err(KernelError::TooLarge { .. }) => return Err(KernelError::TooLarge { limit: self.limit }),
            Err(e) => return Err(e),
            Ok(paused) => paused,
        };
        position.produced += out.len();
        let outcome = if paused {
            Outcome::Paused
        } else if position.ended {
            Outcome::Ended
        } else {
            Outcome::Done
        };
        self.report.store(Report { outcome, consumed: position.consumed }.pack(), Ordering::Release);
        if paused || chunk.end != ChunkEnd::Last {
            *slot = State::Open(position);
        }
        Ok(out.into_output())
    }

    /// Runs on the calling thread, whole (nothing pauses): the chunk in
    /// flight (`seq`, `input`; a plain chunk, no flush) from where it got
    /// to, unless it already ran to its end, then `rest`. Waits for a chunk
    /// running on a pool thread to stop at its next piece. For a hash's
    /// `update()` past its staging cap: returns the output, which a hash
    /// never makes before its end.
    pub fn run_inline(&self, in_flight: Option<(u64, &Input)>, rest: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let kernel = self.kernel_ref()?;
        self.yield_requested.store(true, Ordering::Relaxed);
        let mut slot = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.yield_requested.store(false, Ordering::Relaxed);
        let mut position = match std::mem::replace(&mut *slot, State::Closed) {
            State::Open(position) => position,
            State::Closed => return Err(KernelError::InvalidInput("the stream has ended: a chunk failed, or it was finished".to_owned())),
        };
        let mut out = Sink::new(self.limit.saturating_sub(position.produced));
        if let Some((seq, input)) = in_flight {
            if seq > position.next {
                return Err(KernelError::InvalidInput(format!("chunk {seq} of a stream ran before chunk {}", position.next)));
            }
            if seq == position.next {
                position.advance(kernel, &self.params, input, ChunkEnd::More, &mut out, ctx, None)?;
            }
        }
        // The rest is no chunk of its own: `next` stays the binding's.
        let (next, fed, ending) = (position.next, position.fed, position.ending);
        position.fed = 0;
        position.ending = false;
        position.advance(kernel, &self.params, rest, ChunkEnd::More, &mut out, ctx, None)?;
        (position.next, position.fed, position.ending) = (next, fed, ending);
        position.produced += out.len();
        *slot = State::Open(position);
        Ok(out.into_output())
    }
}

impl Position {
    /// Takes `input` from `fed` on, then runs `end`; true when it stopped
    /// early (the sink's pause point, or `yield_requested`). Moves `next` on
    /// once the chunk is done.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &mut self,
        kernel: &dyn AnyKernel,
        params: &Params,
        input: &Input,
        end: ChunkEnd,
        out: &mut Sink,
        ctx: &RunContext<'_>,
        yield_requested: Option<&AtomicBool>,
    ) -> Result<bool, KernelError> {
        if self.transform.is_none() {
            self.transform = Some(kernel.start(params, None)?);
        }
        let Some(state) = self.transform.as_deref_mut() else { unreachable!("started above") };
        if !self.ending {
            if !self.ended {
                let (fed, consumed) = (&mut self.fed, &mut self.consumed);
                let walked = walk(state, input, *fed, &mut self.owes, out, ctx, yield_requested, |n| {
                    *fed += n;
                    *consumed += n as u64;
                });
                match walked {
                    Ok(()) => {}
                    Err(Halt::Paused) => return Ok(true),
                    Err(Halt::Ended) => self.ended = true,
                    Err(Halt::Failed(e)) => return Err(e),
                }
            }
            self.ending = true;
        }
        let done = match end {
            ChunkEnd::More => true,
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
    let mut feed = |state: &mut dyn Transform, piece: &[u8], owes: &mut bool, out: &mut Sink| -> Result<usize, Halt> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels;
    use std::sync::atomic::AtomicBool;

    fn open(name: &str, limit: usize) -> Arc<Stream> {
        Stream::new(kernels::find(name).unwrap(), Params::NONE, limit)
    }

    /// Runs chunk `seq` of `stream` to its end (again and again while it
    /// pauses), collecting the output; the number of steps it took.
    fn run_chunk(stream: &Arc<Stream>, seq: u64, data: &[u8], end: ChunkEnd, budget: usize) -> Result<(Vec<u8>, usize), KernelError> {
        // A codec stops after a call of its own (OUTPUT_STEP of room), LZ4
        // after a block (at most 4 MiB, its header and checksum).
        let lz4 = stream.kernel == kernels::find("lz4Compress").unwrap() || stream.kernel == kernels::find("lz4Decompress").unwrap();
        let slack = if lz4 { (4 << 20) + 16 } else { 2 * crate::kernels::codec::OUTPUT_STEP };
        let cancel = AtomicBool::new(false);
        let ctx = RunContext::new(&cancel);
        let chunk = StreamChunk { stream: stream.clone(), seq, end, budget };
        let input = Input::Owned(data.to_vec());
        let mut output = Vec::new();
        for steps in 1.. {
            let out = stream.step(&chunk, &input, &ctx)?;
            assert!(out.as_bytes().len() <= budget.saturating_add(slack), "a step ran far past its budget: {} bytes", out.as_bytes().len());
            output.extend_from_slice(out.as_bytes());
            if stream.report().outcome != Outcome::Paused {
                return Ok((output, steps));
            }
        }
        unreachable!()
    }

    fn run(stream: &Arc<Stream>, seq: u64, data: &[u8], last: bool) -> Result<Vec<u8>, KernelError> {
        run_chunk(stream, seq, data, if last { ChunkEnd::Last } else { ChunkEnd::More }, usize::MAX).map(|(out, _)| out)
    }

    fn one_shot(name: &str, data: &[u8]) -> Vec<u8> {
        run(&open(name, usize::MAX), 0, data, true).unwrap()
    }

    #[test]
    fn a_compressor_fed_in_chunks_writes_one_valid_stream() {
        let data: Vec<u8> = (0..200_000u32).map(|i| b"tidepool streams "[(i % 17) as usize]).collect();
        let stream = open("gzip", usize::MAX);
        let mut compressed = Vec::new();
        for (seq, piece) in data.chunks(30_000).enumerate() {
            compressed.extend(run(&stream, seq as u64, piece, false).unwrap());
        }
        compressed.extend(run(&stream, 7, b"", true).unwrap());
        assert_eq!(one_shot("gunzip", &compressed), data);
        assert_eq!(stream.report().consumed, data.len() as u64);
    }

    #[test]
    fn the_output_limit_is_the_whole_stream_s() {
        let data = vec![0u8; 100_000];
        let compressed = one_shot("gzip", &data);
        let (head, tail) = compressed.split_at(compressed.len() / 2);
        // 100,000 bytes out in all: a limit of 99,999 fails, whichever chunk passes it.
        let stream = open("gunzip", 99_999);
        let first = run(&stream, 0, head, false).unwrap();
        let second = run(&stream, 1, tail, true);
        assert_eq!(second, Err(KernelError::TooLarge { limit: 99_999 }), "after {} bytes from the first chunk", first.len());
        let exact = open("gunzip", 100_000);
        let a = run(&exact, 0, head, false).unwrap();
        let b = run(&exact, 1, tail, true).unwrap();
        assert_eq!(a.len() + b.len(), 100_000);
    }

    #[test]
    fn chunks_fed_one_by_one_give_the_one_shot_digest() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let expected = one_shot("sha256", &data);
        assert_eq!(expected.len(), 32);
        let stream = open("sha256", usize::MAX);
        let mut at = 0;
        for (i, size) in [0usize, 1, 63, 64, 65, 4096, 70_000].into_iter().enumerate() {
            let end = (at + size).min(data.len());
            assert!(run(&stream, i as u64, &data[at..end], false).unwrap().is_empty(), "chunk {i} outputs nothing");
            at = end;
        }
        assert_eq!(run(&stream, 7, &data[at..], true).unwrap(), expected);
        assert!(stream.is_ended());
        assert!(run(&stream, 8, b"more", false).is_err(), "a finished stream takes no more chunks");
    }

    /// After a flush, the output so far decodes to the input so far, and
    /// the stream goes on to one valid whole.
    #[test]
    fn a_flushed_compressor_s_output_decodes_to_the_input_so_far() {
        let data: Vec<u8> = (0..50_000u32).map(|i| b"flushing streams "[(i % 17) as usize]).collect();
        // node:zlib's default flush of each family: Z_FULL_FLUSH, BROTLI_OPERATION_FLUSH, ZSTD_e_flush, and LZ4's one.
        for (enc, dec, kind) in [
            ("gzip", "gunzip", 3),
            ("deflate", "inflate", 2),
            ("deflateRaw", "inflateRaw", 1),
            ("brotliCompress", "brotliDecompress", 1),
            ("zstdCompress", "zstdDecompress", 1),
            ("lz4Compress", "lz4Decompress", 1),
        ] {
            let stream = open(enc, usize::MAX);
            let decoder = open(dec, usize::MAX);
            let (head, tail) = data.split_at(20_000);
            let mut packed = run_chunk(&stream, 0, head, ChunkEnd::Flush(kind), usize::MAX).unwrap().0;
            // A second flush with nothing new writes nothing that breaks the stream.
            packed.extend(run_chunk(&stream, 1, b"", ChunkEnd::Flush(kind), usize::MAX).unwrap().0);
            let so_far = run(&decoder, 0, &packed, false).unwrap();
            assert_eq!(so_far, head, "{enc}: the flushed output decodes to the input so far");
            let rest = run(&stream, 2, tail, true).unwrap();
            let end = run(&decoder, 1, &rest, true).unwrap();
            assert_eq!(end, tail, "{enc}: the stream goes on after a flush");
            packed.extend(rest);
            assert_eq!(one_shot(dec, &packed), data, "{enc}: one valid stream");
        }
    }

    #[test]
    fn a_failed_chunk_ends_the_stream() {
        let stream = open("gunzip", usize::MAX);
        // Not gzip: the decoder refuses the first chunk.
        assert!(run(&stream, 0, b"definitely not gzip", false).is_err());
        assert!(stream.is_ended());
        assert!(run(&stream, 1, b"", true).is_err());
    }

    /// A decoder whose output passes its budget stops and goes on where it
    /// stopped: every step stays near the budget, and the output is whole.
    #[test]
    fn every_decoder_pauses_at_its_budget_and_goes_on() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| b"pause and go on "[(i % 16) as usize]).collect();
        for (enc, dec) in kernels::CODEC_PAIRS {
            let packed = one_shot(enc, &data);
            let budget = 16 * 1024;
            let stream = open(dec, usize::MAX);
            let (mut out, steps) = run_chunk(&stream, 0, &packed, ChunkEnd::More, budget).unwrap();
            out.extend(run_chunk(&stream, 1, b"", ChunkEnd::Last, budget).unwrap().0);
            assert_eq!(out.len(), data.len(), "{dec}");
            assert!(out == data, "{dec}: the output is whole");
            // lz4's unit is a block of up to 4 MiB: it stops between blocks.
            let least = if *dec == "lz4Decompress" { 1 } else { data.len() / (budget + 2 * crate::kernels::codec::OUTPUT_STEP) };
            assert!(steps >= least, "{dec}: {steps} steps for {} bytes at a {budget}-byte budget", data.len());
            assert_eq!(stream.report().consumed, packed.len() as u64, "{dec}: bytesWritten");
        }
    }

    /// A compressor's finish that passes the budget is finished in steps.
    #[test]
    fn a_compressor_s_finish_pauses_and_goes_on() {
        let noise = crate::kernels::codec::testing::noise(600_000);
        for (enc, dec) in kernels::CODEC_PAIRS {
            let stream = open(enc, usize::MAX);
            let (mut packed, _) = run_chunk(&stream, 0, &noise, ChunkEnd::More, 4096).unwrap();
            let (end, _) = run_chunk(&stream, 1, b"", ChunkEnd::Last, 4096).unwrap();
            packed.extend(end);
            assert!(stream.is_ended(), "{enc}: finished");
            assert_eq!(one_shot(dec, &packed), noise, "{enc}");
        }
    }

    /// A zlib, raw deflate or brotli stream followed by more bytes: the
    /// decoder ends, and neither those bytes nor later chunks are read.
    #[test]
    fn a_decoder_ends_at_its_format_s_end() {
        for (enc, dec) in [("deflate", "inflate"), ("deflateRaw", "inflateRaw"), ("brotliCompress", "brotliDecompress")] {
            let packed = one_shot(enc, b"0123456789");
            let trailing = [packed.clone(), b"not valid compressed data".to_vec()].concat();
            let stream = open(dec, usize::MAX);
            assert_eq!(run(&stream, 0, &trailing, false).unwrap(), b"0123456789", "{dec}");
            assert_eq!(stream.report(), Report { outcome: Outcome::Ended, consumed: packed.len() as u64 }, "{dec}");
            assert_eq!(run(&stream, 1, b"more", false).unwrap(), b"", "{dec}");
            assert_eq!(stream.report(), Report { outcome: Outcome::Ended, consumed: packed.len() as u64 }, "{dec}");
            run(&stream, 2, b"", true).unwrap();
            // Ending exactly at a chunk's end: as node:zlib, the stream ends
            // when more bytes come (or at its end), and those are not read.
            let exact = open(dec, usize::MAX);
            run(&exact, 0, &packed, false).unwrap();
            assert_eq!(exact.report(), Report { outcome: Outcome::Done, consumed: packed.len() as u64 }, "{dec}");
            assert_eq!(run(&exact, 1, b"x", false).unwrap(), b"", "{dec}");
            assert_eq!(exact.report(), Report { outcome: Outcome::Ended, consumed: packed.len() as u64 }, "{dec}");
        }
        // gzip: a zero byte after a member is padding, the end of the input.
        let member = one_shot("gzip", b"abc");
        let padded = [member.clone(), vec![0; 4], b"ignored".to_vec()].concat();
        let stream = open("gunzip", usize::MAX);
        assert_eq!(run(&stream, 0, &padded, false).unwrap(), b"abc");
        assert_eq!(stream.report(), Report { outcome: Outcome::Ended, consumed: member.len() as u64 });
    }

    /// run_inline takes over the chunk in flight (from where a paused step
    /// left it, or whole if it never ran) and the rest; the chunk's own
    /// task, run later, does nothing.
    #[test]
    fn run_inline_takes_over_the_chunk_in_flight() {
        let data: Vec<u8> = (0..900_000u32).map(|i| (i ^ i >> 9) as u8).collect();
        let expected = one_shot("sha256", &data);
        let (a, rest) = data.split_at(700_000);
        let (b, c) = rest.split_at(150_000);
        let cancel = AtomicBool::new(false);
        let ctx = RunContext::new(&cancel);
        for ran_before in [false, true] {
            let stream = open("sha256", usize::MAX);
            let chunk = StreamChunk { stream: stream.clone(), seq: 0, end: ChunkEnd::More, budget: usize::MAX };
            let input = Input::Owned(a.to_vec());
            if ran_before {
                // A step that stopped after its first piece (as a yield would make it).
                stream.yield_requested.store(true, Ordering::Relaxed);
                let mut slot = stream.state.lock().unwrap();
                let State::Open(position) = &mut *slot else { panic!() };
                let kernel = kernels::get(stream.kernel).unwrap();
                let mut out = Sink::new(usize::MAX);
                stream.yield_requested.store(false, Ordering::Relaxed);
                position.transform = Some(kernel.start(&Params::NONE, None).unwrap());
                position.transform.as_mut().unwrap().update(&a[..CHUNK], &mut out, &ctx).unwrap();
                position.fed = CHUNK;
                position.consumed = CHUNK as u64;
            }
            let inline = stream.run_inline(Some((0, &input)), &Input::Owned(b.to_vec()), &ctx).unwrap();
            assert!(inline.as_bytes().is_empty());
            // The chunk's task, run late, finds it done.
            assert_eq!(stream.step(&chunk, &input, &ctx).unwrap().as_bytes(), b"");
            assert_eq!(run(&stream, 1, c, true).unwrap(), expected, "ran before: {ran_before}");
        }
    }
}
