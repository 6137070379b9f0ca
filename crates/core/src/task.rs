//! What travels through the pool: a [`Task`] in, a [`Completion`] out.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::input::Input;
use crate::inputs::Inputs;
use crate::kernels::{KernelError, KernelId, Output, Params};
use crate::stream::StreamChunk;

/// One unit of work. Created on the JS thread, run on a worker thread.
#[derive(Debug)]
pub struct Task {
    /// The JS side's handle for this task; returned untouched in the completion.
    pub slot: u32,
    /// Which kernel to run.
    pub kernel: KernelId,
    /// The kernel's checked parameters (none: its defaults).
    pub params: Params,
    /// The bytes to run it on (borrowed from JS memory).
    pub input: Input,
    /// When the task entered the queue; the queue age the policy looks at.
    pub enqueued_at: Instant,
    /// Raised to cancel this task while it runs (set for tasks posted with an
    /// AbortSignal; `None` costs nothing).
    pub cancel: Option<Arc<CancelFlag>>,
    /// Run-time limit, counted from when a thread starts the task.
    pub timeout: Option<Duration>,
    /// Most bytes this task's output may have (None: the pool's limit).
    pub max_output: Option<usize>,
    /// How the kernel runs over the input: once, as a chunk of a stream,
    /// or over the file the input names.
    pub mode: Mode,
}

impl Task {
    /// A task with no per-task cancellation and no run-time limit.
    pub fn new(slot: u32, kernel: KernelId, input: Input, enqueued_at: Instant) -> Task {
        Task {
            slot,
            kernel,
            params: Params::NONE,
            input,
            enqueued_at,
            cancel: None,
            timeout: None,
            max_output: None,
            mode: Mode::Once,
        }
    }
}

/// How a task's kernel runs over its input.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Once over the input: a fresh state, fed it all, finished.
    Once,
    /// As a chunk of a stream: the state it continues (see [`crate::stream`]).
    Stream(Box<StreamChunk>),
    /// Over a file: the input is a path's bytes (an absolute path; any
    /// bytes on Unix, UTF-8 elsewhere), and the worker thread reads the
    /// file (see file.rs).
    File,
    /// Once over each of these inputs in turn (the task's own `input` is
    /// unused), their outputs back to back: several tiny messages of one
    /// batch as one task, so the queue, the clock and the completion are
    /// paid once for all of them. Every output must have the first one's
    /// length, so the binding can split them again; the outputs are held
    /// until the last input is done, so this is for kernels whose outputs
    /// are small (the binding packs a hash's).
    /// On a failure the completion's slot is the failing input's: the
    /// task's slot plus its place in the list.
    Packed(Box<Packed>),
}

/// A packed task's inputs (see [`Mode::Packed`]), behind a thin pointer: a
/// [`Task`] is moved through the queue, and stays as small as it was.
#[derive(Debug, Clone)]
pub struct Packed {
    pub inputs: Inputs,
    /// The outputs may have lengths of their own (a compressor's, see
    /// `kernels::Packing::Sized`): each input's output length follows
    /// them, in order, as a little-endian uint32. Without it, every
    /// output must have the first one's length.
    pub sized: bool,
}

/// Why a task failed: what its kernel reported, or what the pool found
/// without it. A value, not a text: the binding decides how JavaScript
/// hears of each (src/wire/task_error.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskError {
    /// The kernel failed or was stopped (cancelled, past its deadline, its
    /// output past its limit, a file it could not read...).
    Kernel(KernelError),
    /// The kernel panicked (the worker caught it); the payload's text if it
    /// was a string.
    Panic(String),
    /// The task waited in the queue longer than `max_queue_age` and was not run.
    Expired,
    /// A packed task's input made an output of another length than the
    /// first input's (see [`Mode::Packed`]).
    UnequalLength { expected: usize, got: usize },
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::Panic(m) => write!(f, "the kernel panicked: {m}"),
            TaskError::Expired => {
                f.write_str("the task waited in the queue longer than maxQueueAgeMs")
            }
            TaskError::Kernel(KernelError::TimedOut) => {
                f.write_str("the task ran longer than its timeoutMs")
            }
            TaskError::UnequalLength { expected, got } => write!(
                f,
                "the result is {got} bytes where packed results are {expected} bytes each"
            ),
            TaskError::Kernel(KernelError::Cancelled) => f.write_str("the task was cancelled"),
            TaskError::Kernel(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TaskError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TaskError::Kernel(e) => Some(e),
            _ => None,
        }
    }
}

impl From<KernelError> for TaskError {
    fn from(e: KernelError) -> TaskError {
        TaskError::Kernel(e)
    }
}

/// A cancel flag shared by tasks (a batch's, a signal's), raised to stop
/// them: on a cache line of its own, apart from its `Arc`'s counts, which
/// the submitting thread changes for every task while the workers read the
/// flag.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct CancelFlag(AtomicBool);

impl CancelFlag {
    /// A flag not raised.
    pub fn new() -> CancelFlag {
        CancelFlag(AtomicBool::new(false))
    }
}

impl std::ops::Deref for CancelFlag {
    type Target = AtomicBool;
    fn deref(&self) -> &AtomicBool {
        &self.0
    }
}

/// A finished task, on its way back to the JS thread.
#[derive(Debug)]
pub struct Completion {
    /// The slot the task was submitted with.
    pub slot: u32,
    /// The kernel's result or why there is none.
    pub outcome: Result<Output, TaskError>,
    /// The task's share of its cancel flag, let go where the completion is
    /// taken: the thread that submits a signal's tasks takes a share of its
    /// flag for each, and a share let go on a worker would move the flag's
    /// count between cores twice a task.
    pub cancel: Option<Arc<CancelFlag>>,
}

impl Completion {
    /// A completion that carries no cancel flag.
    pub fn new(slot: u32, outcome: Result<Output, TaskError>) -> Completion {
        Completion { slot, outcome, cancel: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display_their_reason() {
        assert_eq!(TaskError::Panic("boom".into()).to_string(), "the kernel panicked: boom");
        assert_eq!(
            TaskError::Expired.to_string(),
            "the task waited in the queue longer than maxQueueAgeMs"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(TaskError::Kernel(KernelError::TimedOut));
        assert!(boxed.to_string().contains("timeoutMs"));
    }
}
