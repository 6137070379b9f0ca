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
//!   ([`Transform::update_until`](crate::kernels::Transform::update_until)). The binding hands the output on and runs
//!   the same chunk again (same `seq`, same input) when the reader wants
//!   more; it goes on from where it stopped. A stream's memory so stays near
//!   its reader's `highWaterMark` plus one piece of output, whatever the
//!   compression ratio.
//! * **Ended**: a decoder reached the end of what it decodes (a zlib or
//!   brotli stream's end, a zero byte after a gzip member) with input left:
//!   the rest, and every later chunk's input, is not read (`node:zlib` ends
//!   such a stream's readable side).
//! * **In blocks**: on a pool whose threads may split work, a chunk whose
//!   input a codec can cut into blocks (a gzip, deflate or raw stream past
//!   its open block) is taken at once on idle threads
//!   ([`Transform::update_parts`](crate::kernels::Transform::update_parts));
//!   its output waits in the codec's state and goes out in paused steps
//!   as above, so a write is called back once its output is handed on.
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
//!
//! * `position.rs`: where the stream is, and the walk over a chunk's input.
//! * `report.rs`: what the last step did ([`Report`]).

mod memory;
mod position;
mod report;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, TryLockError};

use crate::input::Input;
use crate::kernels::{self, AnyKernel, KernelError, KernelId, Output, Params, RunContext, Sink};
use position::Position;
pub use report::{Outcome, Report};

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
    /// A digest's stream (`createHash()`): its kernel may write only when
    /// it finishes; output before that fails the step, however the input
    /// was cut into chunks ([`Stream::new_digest`]).
    digest: bool,
    /// The bytes of codec state the binding reports to the JS engine for
    /// this stream: what a made state holds at first
    /// ([`crate::kernels::Kernel::made_bytes`]), what it holds later as
    /// [`Stream::sync_reported`] finds it, and `memory::GIVEN_BACK` once
    /// [`Stream::take_reported`] gave them back (the stream is over).
    reported: AtomicUsize,
}

/// The error of a digest's stream whose kernel wrote before its end.
fn not_a_digest() -> KernelError {
    KernelError::Failed {
        code: "ERR_TIDEPOOL_KERNEL_CONTRACT".to_owned(),
        message: "The kernel produced output before the end of the stream: it is not a hash"
            .to_owned(),
    }
}

enum State {
    /// Between chunks (or before the first).
    Open(Box<Position>),
    /// Finished or abandoned (`None`), or failed with the error that ended
    /// it, which later steps and inline runs give again.
    Closed(Option<KernelError>),
}

/// The error of a step or run on a stream that has ended: the error that
/// ended it, if one did.
fn has_ended(cause: &Option<KernelError>) -> KernelError {
    cause.clone().unwrap_or_else(|| {
        KernelError::InvalidInput("the stream has ended: it was finished".to_owned())
    })
}

/// `result` of a step or run that took the state out of `slot`: a
/// failure leaves the stream closed with it.
fn closing_on_error(
    slot: &mut State,
    result: Result<Output, KernelError>,
) -> Result<Output, KernelError> {
    if let (Err(e), State::Closed(cause @ None)) = (&result, &mut *slot) {
        *cause = Some(e.clone());
    }
    result
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

/// The flush kind that stands for `node:zlib`'s `reset()`: after the
/// chunk's input, the kernel's state starts over, as a new stream's would
/// (with its parameters: a dictionary is set again). Above every codec
/// family's flush constants; lib/streams/codec.js writes it.
pub const RESET: u32 = 0x200;

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

impl std::fmt::Debug for StreamChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamChunk")
            .field("seq", &self.seq)
            .field("end", &self.end)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl Stream {
    /// A stream of `kernel` with its checked `params`, whose output in all
    /// may not pass `limit` bytes. No chunk has run on it yet.
    pub fn new(kernel: KernelId, params: Params, limit: usize) -> Arc<Stream> {
        let made_bytes = kernels::get(kernel).map_or(0, |k| k.made_bytes(&params));
        Arc::new(Stream {
            kernel,
            params,
            limit,
            state: Mutex::new(State::Open(Box::new(Position::fresh()))),
            yield_requested: AtomicBool::new(false),
            report: AtomicU64::new(0),
            digest: false,
            reported: AtomicUsize::new(made_bytes),
        })
    }

    /// [`Stream::new`] for a digest (`createHash()`): a kernel that writes
    /// anything before it finishes is no hash, and the step that sees it
    /// fails with `ERR_TIDEPOOL_KERNEL_CONTRACT` (a loaded kernel may).
    pub fn new_digest(kernel: KernelId, params: Params, limit: usize) -> Arc<Stream> {
        let mut stream = Stream::new(kernel, params, limit);
        Arc::get_mut(&mut stream).expect("a new stream has one owner").digest = true;
        stream
    }

    /// About how many bytes this stream's codec state holds once started
    /// ([`crate::kernels::Kernel::state_bytes`]): what the binding reports
    /// to V8 while the stream's handle lives.
    pub fn state_bytes(&self) -> usize {
        self.kernel_ref().map_or(0, |kernel| kernel.state_bytes(&self.params))
    }

    /// The stream's kernel.
    pub fn kernel(&self) -> KernelId {
        self.kernel
    }

    /// Whether the stream has ended (finished, or a chunk failed).
    pub fn is_ended(&self) -> bool {
        matches!(*self.state.lock().unwrap_or_else(|e| e.into_inner()), State::Closed(_))
    }

    /// What the last step did. Read it once the step's completion has
    /// reached the reader (the completion queue orders the two).
    pub fn report(&self) -> Report {
        Report::unpack(self.report.load(Ordering::Acquire))
    }

    fn kernel_ref(&self) -> Result<&'static dyn AnyKernel, KernelError> {
        kernels::get(self.kernel)
            .ok_or_else(|| KernelError::InvalidInput(format!("no kernel with id {}", self.kernel)))
    }

    /// Runs one step of a chunk: starts the kernel's state at the first,
    /// feeds it `input` from where the chunk got to (in the context's
    /// pieces, cancellable between them), then flushes or finishes it as
    /// `end` says; returns what the step output. The step stops early when
    /// its output reaches `budget` or [`run_inline`](Stream::run_inline)
    /// wants the state (the report says paused). A chunk already taken
    /// over does nothing. The state is taken out while the step runs, so an
    /// error or a panic leaves the stream ended.
    pub(crate) fn step(
        &self,
        chunk: &StreamChunk,
        input: &Input,
        ctx: &RunContext<'_>,
    ) -> Result<Output, KernelError> {
        let kernel = self.kernel_ref()?;
        let mut slot = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.step_locked(kernel, &mut slot, chunk, input, ctx)
    }

    /// Output the codec has made already and holds for the next steps
    /// ([`Transform::pending`]); 0 while a step runs.
    pub fn pending(&self) -> usize {
        match self.state.try_lock() {
            Ok(slot) => match &*slot {
                State::Open(position) => position.pending(),
                State::Closed(_) => 0,
            },
            Err(_) => 0,
        }
    }

    /// Runs the step of `chunk` on the calling thread when all it would do
    /// is hand on output the codec already made ([`Transform::pending`]):
    /// more than the step's `budget` waits, so the step pauses before any
    /// work of its own; or some waits and, once it is written, the step
    /// pauses for the input left or, with none left and nothing to follow
    /// ([`ChunkEnd::More`]), the chunk is done. `None` when the step has
    /// work to do (or its state is busy): it is a task for a pool thread.
    /// What a step here does and reports is what the same step on a thread
    /// would.
    pub fn step_here(
        &self,
        chunk: &StreamChunk,
        input: &Input,
    ) -> Option<Result<Output, KernelError>> {
        let kernel = self.kernel_ref().ok()?;
        let mut slot = match self.state.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        let State::Open(position) = &*slot else { return None };
        let pending = position.pending();
        // Once the output is written: a pause for the input left, or the
        // chunk's end with nothing to follow (no flush, no finish).
        let stops_after_it =
            !position.ending && (position.fed < input.len() || chunk.end == ChunkEnd::More);
        if chunk.seq != position.next
            || pending == 0
            || (pending <= chunk.budget && !stops_after_it)
        {
            return None;
        }
        let never = AtomicBool::new(false);
        Some(self.step_locked(kernel, &mut slot, chunk, input, &RunContext::new(&never)))
    }

    fn step_locked(
        &self,
        kernel: &dyn AnyKernel,
        slot: &mut State,
        chunk: &StreamChunk,
        input: &Input,
        ctx: &RunContext<'_>,
    ) -> Result<Output, KernelError> {
        let result = self.step_open(kernel, slot, chunk, input, ctx);
        closing_on_error(slot, result)
    }

    fn step_open(
        &self,
        kernel: &dyn AnyKernel,
        slot: &mut State,
        chunk: &StreamChunk,
        input: &Input,
        ctx: &RunContext<'_>,
    ) -> Result<Output, KernelError> {
        let mut position = match std::mem::replace(slot, State::Closed(None)) {
            State::Open(position) => position,
            State::Closed(cause) => {
                let err = has_ended(&cause);
                *slot = State::Closed(cause);
                return Err(err);
            }
        };
        if chunk.seq < position.next {
            // Taken over by run_inline: nothing left to do, nothing to report.
            *slot = State::Open(position);
            return Ok(Output::EMPTY);
        }
        if chunk.seq > position.next {
            return Err(KernelError::InvalidInput(format!(
                "chunk {} of a stream ran before chunk {}",
                chunk.seq, position.next
            )));
        }
        let mut out = Sink::with_pause(self.limit.saturating_sub(position.produced), chunk.budget);
        if chunk.end == ChunkEnd::More {
            // Its step pauses or ends once the output made already is
            // written: each piece of it may go on in a step of its own, as
            // made (a step that only hands on output runs on the caller's
            // thread: step_here). A flush or the end works after it.
            out.stop_between_pieces();
        }
        let paused = match position.advance(
            kernel,
            &self.params,
            input,
            chunk.end,
            &mut out,
            ctx,
            Some(&self.yield_requested),
            // A digest's chunks keep to the walk, which sees output made early.
            !self.digest,
        ) {
            // The limit is the stream's, not this step's room.
            Err(KernelError::TooLarge { .. }) => {
                return Err(KernelError::TooLarge { limit: self.limit })
            }
            Err(e) => return Err(e),
            Ok(paused) => paused,
        };
        if self.digest && position.wrote_early {
            return Err(not_a_digest());
        }
        position.produced += out.len();
        let outcome = if paused {
            Outcome::Paused
        } else if position.ended {
            Outcome::Ended
        } else {
            Outcome::Done
        };
        self.report
            .store(Report { outcome, consumed: position.consumed }.pack(), Ordering::Release);
        if paused || chunk.end != ChunkEnd::Last {
            *slot = State::Open(position);
        }
        Ok(out.into_output())
    }

    /// A new stream whose state is a copy of this one's (`hash.copy()`),
    /// going on independently; its output limit is this one's, counted
    /// afresh. Only between chunks: the binding first takes over the chunk
    /// in flight ([`run_inline`](Stream::run_inline)), so the copy is of
    /// everything written so far. A stream that has not started copies as
    /// not started.
    pub fn fork(&self) -> Result<Arc<Stream>, KernelError> {
        let slot = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let position = match &*slot {
            State::Open(position) => position,
            State::Closed(cause) => return Err(has_ended(cause)),
        };
        if position.fed != 0 || position.ending {
            return Err(KernelError::InvalidInput(
                "a stream is copied between chunks, not while one is under way".to_owned(),
            ));
        }
        let transform = match &position.transform {
            None => None,
            Some(state) => Some(state.fork().ok_or_else(|| {
                let name = self.kernel_ref().map_or("this kernel", |k| k.name());
                KernelError::InvalidInput(format!("the state of {name} cannot be copied"))
            })?),
        };
        let copy = if self.digest {
            Stream::new_digest(self.kernel, self.params.clone(), self.limit)
        } else {
            Stream::new(self.kernel, self.params.clone(), self.limit)
        };
        *copy.state.lock().unwrap_or_else(|e| e.into_inner()) =
            State::Open(Box::new(Position { transform, ..Position::fresh() }));
        Ok(copy)
    }

    /// Runs on the calling thread, whole (nothing pauses): the chunk in
    /// flight (`seq`, `input`; a plain chunk, no flush) from where it got
    /// to, unless it already ran to its end, then `rest`. Waits for a chunk
    /// running on a pool thread to stop at its next piece. For a hash's
    /// `update()` past its staging cap: returns the output, which a hash
    /// never makes before its end.
    pub fn run_inline(
        &self,
        in_flight: Option<(u64, &Input)>,
        rest: &Input,
        ctx: &RunContext<'_>,
    ) -> Result<Output, KernelError> {
        let kernel = self.kernel_ref()?;
        self.yield_requested.store(true, Ordering::Relaxed);
        let mut slot = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.yield_requested.store(false, Ordering::Relaxed);
        let result = self.inline_open(kernel, &mut slot, in_flight, rest, ctx);
        closing_on_error(&mut slot, result)
    }

    fn inline_open(
        &self,
        kernel: &dyn AnyKernel,
        slot: &mut State,
        in_flight: Option<(u64, &Input)>,
        rest: &Input,
        ctx: &RunContext<'_>,
    ) -> Result<Output, KernelError> {
        let mut position = match std::mem::replace(slot, State::Closed(None)) {
            State::Open(position) => position,
            State::Closed(cause) => {
                let err = has_ended(&cause);
                *slot = State::Closed(cause);
                return Err(err);
            }
        };
        let mut out = Sink::new(self.limit.saturating_sub(position.produced));
        if let Some((seq, input)) = in_flight {
            if seq > position.next {
                return Err(KernelError::InvalidInput(format!(
                    "chunk {seq} of a stream ran before chunk {}",
                    position.next
                )));
            }
            if seq == position.next {
                position.advance(
                    kernel,
                    &self.params,
                    input,
                    ChunkEnd::More,
                    &mut out,
                    ctx,
                    None,
                    false,
                )?;
            }
        }
        // The rest is no chunk of its own: `next` stays the binding's.
        let (next, fed, ending) = (position.next, position.fed, position.ending);
        position.fed = 0;
        position.ending = false;
        position.advance(kernel, &self.params, rest, ChunkEnd::More, &mut out, ctx, None, false)?;
        if self.digest && position.wrote_early {
            return Err(not_a_digest());
        }
        (position.next, position.fed, position.ending) = (next, fed, ending);
        position.produced += out.len();
        *slot = State::Open(position);
        Ok(out.into_output())
    }
}
