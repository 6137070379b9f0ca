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

/// What a kernel may look at while it runs.
pub struct RunContext<'a> {
    /// Raised by the pool to stop running tasks (destroy, environment teardown).
    cancel: &'a AtomicBool,
    /// Raised to stop this task only (its AbortSignal fired).
    task_cancel: Option<&'a AtomicBool>,
    /// The task must be done by then (`timeoutMs`, counted from its start).
    deadline: Option<Instant>,
}

impl<'a> RunContext<'a> {
    /// A context whose cancellation flag is `cancel`.
    pub fn new(cancel: &'a AtomicBool) -> Self {
        RunContext { cancel, task_cancel: None, deadline: None }
    }

    /// A context that also stops when `task_cancel` is raised or `deadline` passes.
    pub fn for_task(
        cancel: &'a AtomicBool,
        task_cancel: Option<&'a AtomicBool>,
        deadline: Option<Instant>,
    ) -> Self {
        RunContext { cancel, task_cancel, deadline }
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
