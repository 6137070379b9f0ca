//! What a running kernel may look at: its cancellation flags and deadline,
//! and the walk over its input in [`CHUNK`]-sized pieces with a check
//! before each, so a running task can be stopped within one chunk's worth
//! of work (a few hundred microseconds) without killing the thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::KernelError;
use crate::input::Input;

/// Bytes a kernel processes between two looks at the cancellation flag.
/// 256 KiB is ~150 µs of SHA-256 on one core: small enough to cancel quickly,
/// large enough that the check costs nothing measurable.
pub const CHUNK: usize = 256 * 1024;

/// Runs the parts of one task on the pool's idle threads as well as on the
/// thread running the task (a large gzip, zstd or BLAKE3 job).
pub trait Parallel: Sync {
    /// How many threads might run parts at once, the caller included: the
    /// pool's `max_threads`. A kernel splits only when this is above 1.
    fn width(&self) -> usize;
    /// Calls `part(i)` once for every `i` in `0..n`, on the calling thread
    /// and on threads of the pool that are idle, and returns once every
    /// call has returned. A part that panics has its panic raised here,
    /// after the others are done.
    fn run_parts(&self, n: usize, part: &(dyn Fn(usize) + Sync));
}

/// One result per part of a split task, set by the parts in any order and
/// read in part order once they have all run; with the bytes the parts
/// have made so far, held against the task's output limit.
pub struct PartResults<T> {
    slots: Vec<std::sync::Mutex<Option<Result<T, KernelError>>>>,
    made: std::sync::atomic::AtomicUsize,
    limit: usize,
}

impl<T> PartResults<T> {
    /// Results of `parts` parts whose outputs together may not pass `limit`.
    pub fn new(parts: usize, limit: usize) -> Self {
        PartResults {
            slots: (0..parts).map(|_| std::sync::Mutex::new(None)).collect(),
            made: std::sync::atomic::AtomicUsize::new(0),
            limit,
        }
    }

    /// The most bytes a part may still make: a part stops there, and one
    /// that starts after the limit was passed does not run.
    pub fn room(&self) -> Result<usize, KernelError> {
        let made = self.made.load(std::sync::atomic::Ordering::Acquire);
        match self.limit.checked_sub(made) {
            Some(room) => Ok(room),
            None => Err(KernelError::TooLarge { limit: self.limit }),
        }
    }

    /// Counts `bytes` a part made; an error once the parts' total passes
    /// the limit.
    pub fn count(&self, bytes: usize) -> Result<(), KernelError> {
        let before = self.made.fetch_add(bytes, std::sync::atomic::Ordering::AcqRel);
        if before.saturating_add(bytes) > self.limit {
            return Err(KernelError::TooLarge { limit: self.limit });
        }
        Ok(())
    }

    /// Part `i`'s result.
    pub fn set(&self, i: usize, result: Result<T, KernelError>) {
        *self.slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    }

    /// The results in part order, or the first part's failure.
    pub fn into_results(self) -> Result<Vec<T>, KernelError> {
        self.slots
            .into_iter()
            .map(|slot| {
                slot.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or_else(|| Err(KernelError::InvalidInput("a part did not run".into())))
            })
            .collect()
    }
}

/// Appends `pieces` to `out` in order, copied on `parallel`'s threads
/// (each piece into its own place of one reservation): the last step of a
/// split task, which would otherwise copy its whole output on one thread.
pub fn write_parts(
    out: &mut super::Sink,
    pieces: &[&[u8]],
    parallel: &dyn Parallel,
) -> Result<(), KernelError> {
    let total: usize = pieces.iter().map(|p| p.len()).sum();
    if total == 0 {
        return Ok(());
    }
    let mut rest = out.unfilled_exact(total)?;
    let mut places = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let (place, after) = std::mem::take(&mut rest).split_at_mut(piece.len());
        places.push(std::sync::Mutex::new(place));
        rest = after;
    }
    parallel.run_parts(pieces.len(), &|i| {
        places[i].lock().unwrap_or_else(|e| e.into_inner()).copy_from_slice(pieces[i]);
    });
    drop(places);
    out.commit(total);
    Ok(())
}

/// What a kernel may look at while it runs.
pub struct RunContext<'a> {
    /// Raised by the pool to stop running tasks (destroy, environment teardown).
    cancel: &'a AtomicBool,
    /// Raised to stop this task only (its AbortSignal fired).
    task_cancel: Option<&'a AtomicBool>,
    /// The task must be done by then (`timeoutMs`, counted from its start).
    deadline: Option<Instant>,
    /// Where a one-shot task may run parts of itself (None: on this thread
    /// only, as in a stream's step).
    parallel: Option<&'a dyn Parallel>,
}

impl<'a> RunContext<'a> {
    /// A context whose cancellation flag is `cancel`.
    pub fn new(cancel: &'a AtomicBool) -> Self {
        RunContext { cancel, task_cancel: None, deadline: None, parallel: None }
    }

    /// A context that also stops when `task_cancel` is raised or `deadline` passes.
    pub fn for_task(
        cancel: &'a AtomicBool,
        task_cancel: Option<&'a AtomicBool>,
        deadline: Option<Instant>,
    ) -> Self {
        RunContext { cancel, task_cancel, deadline, parallel: None }
    }

    /// The same context, letting the kernel run parts on `parallel`.
    pub fn with_parallel(self, parallel: &'a dyn Parallel) -> Self {
        RunContext { parallel: Some(parallel), ..self }
    }

    /// Where parts of this task may run, if the kernel may split it.
    pub fn parallel(&self) -> Option<&'a dyn Parallel> {
        self.parallel.filter(|p| p.width() > 1)
    }

    /// `Err(Cancelled)` once cancellation has been requested, `Err(TimedOut)`
    /// once the deadline has passed.
    #[inline]
    pub fn check(&self) -> Result<(), KernelError> {
        if self.cancel.load(Ordering::Relaxed)
            || self.task_cancel.is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(KernelError::Cancelled);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(KernelError::TimedOut);
        }
        Ok(())
    }

    /// Feeds every byte of `input` to `each` in order, in pieces of at most
    /// [`CHUNK`] bytes, checking for cancellation before each piece.
    pub fn feed(
        &self,
        input: &Input,
        mut each: impl FnMut(&[u8]) -> Result<(), KernelError>,
    ) -> Result<(), KernelError> {
        input.for_each_part(|part| {
            for piece in part.chunks(CHUNK) {
                self.check()?;
                each(piece)?;
            }
            Ok(())
        })
    }
}
