//! What travels through the pool: a [`Task`] in, a [`Completion`] out.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::input::Input;
use crate::kernels::{KernelId, Output, Params};
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
    pub cancel: Option<Arc<AtomicBool>>,
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
        Task { slot, kernel, params: Params::NONE, input, enqueued_at, cancel: None, timeout: None, max_output: None, mode: Mode::Once }
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
}

/// Why a task failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskError {
    /// The kernel panicked; the payload's text if it was a string.
    Panic(String),
    /// The task was stopped because the pool was destroyed or torn down.
    Cancelled,
    /// The kernel refused the input.
    InvalidInput(String),
    /// The task waited in the queue longer than `max_queue_age` and was not run.
    Expired,
    /// The task ran longer than its `timeout` and was stopped.
    TimedOut,
    /// The kernel's output would have passed `max_output_bytes` (`limit`).
    TooLarge { limit: usize },
    /// The input is not valid in the kernel's format; `code` names why
    /// (see [`KernelError::Format`](crate::kernels::KernelError::Format)).
    Format { code: &'static str, message: String },
    /// A loaded kernel failed with its own `code` and message.
    Failed { code: String, message: String },
    /// The task's file could not be read (see
    /// [`KernelError::Io`](crate::kernels::KernelError::Io)).
    Io { syscall: &'static str, errno: i32, name: &'static str },
}

impl TaskError {
    /// A stable small number for the binding layer (0 is reserved for success).
    pub fn code(&self) -> u8 {
        match self {
            TaskError::Panic(_) => 1,
            TaskError::Cancelled => 2,
            TaskError::InvalidInput(_) => 3,
            TaskError::Expired => 4,
            TaskError::TimedOut => 5,
            TaskError::TooLarge { .. } => 6,
            TaskError::Format { .. } => 7,
            TaskError::Failed { .. } => 8,
            TaskError::Io { .. } => 9,
        }
    }

    /// Human-readable detail (for `TooLarge`, the limit in decimal; for
    /// `Format`, the code, its errno and the message, space-separated; for
    /// `Failed`, the code and the message; for `Io`, the system call, the
    /// OS's error number and its name).
    pub fn detail(&self) -> std::borrow::Cow<'_, str> {
        match self {
            TaskError::Panic(m) | TaskError::InvalidInput(m) => m.into(),
            TaskError::Cancelled => "the task was cancelled".into(),
            TaskError::Expired => "the task waited in the queue longer than maxQueueAgeMs".into(),
            TaskError::TimedOut => "the task ran longer than its timeoutMs".into(),
            TaskError::TooLarge { limit } => limit.to_string().into(),
            // The code, node:zlib's errno for it (0: none), then the words:
            // the binding splits at the first two spaces.
            TaskError::Format { code, message } => format!("{code} {} {message}", crate::kernels::format_errno(code).unwrap_or(0)).into(),
            TaskError::Failed { code, message } => format!("{code} {message}").into(),
            TaskError::Io { syscall, errno, name } => format!("{syscall} {errno} {name}").into(),
        }
    }
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::Panic(m) => write!(f, "the kernel panicked: {m}"),
            TaskError::TooLarge { limit } => write!(f, "the output would be larger than {limit} bytes"),
            other => f.write_str(&other.detail()),
        }
    }
}

impl std::error::Error for TaskError {}

impl From<crate::kernels::KernelError> for TaskError {
    fn from(e: crate::kernels::KernelError) -> TaskError {
        use crate::kernels::KernelError;
        match e {
            KernelError::TooLarge { limit } => TaskError::TooLarge { limit },
            KernelError::Cancelled => TaskError::Cancelled,
            KernelError::InvalidInput(m) => TaskError::InvalidInput(m),
            KernelError::TimedOut => TaskError::TimedOut,
            KernelError::Format { code, message } => TaskError::Format { code, message },
            KernelError::Failed { code, message } => TaskError::Failed { code, message },
            KernelError::Panic(message) => TaskError::Panic(message),
            KernelError::Io { syscall, errno, name } => TaskError::Io { syscall, errno, name },
        }
    }
}

/// A finished task, on its way back to the JS thread.
#[derive(Debug)]
pub struct Completion {
    /// The slot the task was submitted with.
    pub slot: u32,
    /// The kernel's result or why there is none.
    pub outcome: Result<Output, TaskError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display_their_reason() {
        assert_eq!(TaskError::Panic("boom".into()).to_string(), "the kernel panicked: boom");
        assert_eq!(TaskError::Expired.to_string(), "the task waited in the queue longer than maxQueueAgeMs");
        let boxed: Box<dyn std::error::Error> = Box::new(TaskError::TimedOut);
        assert!(boxed.to_string().contains("timeoutMs"));
    }
}
