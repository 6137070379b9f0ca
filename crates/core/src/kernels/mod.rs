//! Kernels: the computations a task can run behind the small [`Kernel`]
//! trait, registered by name in [`REGISTRY`]: the hashes (one adapter,
//! `digest.rs`; their table, `hashes.rs`), and `spin`, `sleep`, `panic` for
//! tests and benchmarks.
//!
//! A kernel reads its [`Input`] through [`RunContext::feed`], which walks the
//! input in [`CHUNK`]-sized pieces and checks the cancellation flag between
//! pieces, so a running task can be stopped within one chunk's worth of work
//! (a few hundred microseconds) without killing the thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::input::Input;

mod digest;
mod hashes;
mod panic;
mod sleep;
mod spin;

/// Bytes a kernel processes between two looks at the cancellation flag.
/// 256 KiB is ~150 µs of SHA-256 on one core: small enough to cancel quickly,
/// large enough that the check costs nothing measurable.
pub const CHUNK: usize = 256 * 1024;

/// Largest result a kernel returns inline (SHA-512 is the largest digest).
pub const MAX_OUTPUT: usize = 64;

/// Why a kernel did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// The cancellation flag was raised while the kernel ran.
    Cancelled,
    /// The input cannot be processed by this kernel (e.g. too short).
    InvalidInput(String),
    /// The task's run-time deadline passed while the kernel ran.
    TimedOut,
}

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelError::Cancelled => f.write_str("the kernel was cancelled"),
            KernelError::InvalidInput(m) => write!(f, "invalid input: {m}"),
            KernelError::TimedOut => f.write_str("the kernel ran past its deadline"),
        }
    }
}

impl std::error::Error for KernelError {}

/// A kernel's result: up to [`MAX_OUTPUT`] bytes stored inline, so finishing a
/// task allocates nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Output {
    len: u8,
    bytes: [u8; MAX_OUTPUT],
}

impl Output {
    /// An empty result (used by `spin` and `sleep`).
    pub const EMPTY: Output = Output { len: 0, bytes: [0; MAX_OUTPUT] };

    /// Copies `bytes` into a new output. Panics if longer than [`MAX_OUTPUT`].
    pub fn from_slice(bytes: &[u8]) -> Output {
        assert!(bytes.len() <= MAX_OUTPUT, "kernel output larger than MAX_OUTPUT");
        let mut out = Output::EMPTY;
        out.bytes[..bytes.len()].copy_from_slice(bytes);
        out.len = bytes.len() as u8;
        out
    }

    /// The result bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

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
    pub fn for_task(cancel: &'a AtomicBool, task_cancel: Option<&'a AtomicBool>, deadline: Option<Instant>) -> Self {
        RunContext { cancel, task_cancel, deadline }
    }

    /// `Err(Cancelled)` once cancellation has been requested, `Err(TimedOut)`
    /// once the deadline has passed.
    #[inline]
    pub fn check(&self) -> Result<(), KernelError> {
        if self.cancel.load(Ordering::Relaxed) || self.task_cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(KernelError::Cancelled);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(KernelError::TimedOut);
        }
        Ok(())
    }

    /// Feeds every byte of `input` to `sink` in order, in pieces of at most
    /// [`CHUNK`] bytes, checking for cancellation before each piece.
    pub fn feed(&self, input: &Input, mut sink: impl FnMut(&[u8])) -> Result<(), KernelError> {
        input.for_each_part(|part| {
            for piece in part.chunks(CHUNK) {
                self.check()?;
                sink(piece);
            }
            Ok(())
        })
    }
}

/// A named computation over a task's bytes.
pub trait Kernel: Send + Sync + 'static {
    /// The name users pass as `kernel`.
    fn name(&self) -> &'static str;
    /// Runs the kernel over the whole input.
    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError>;
}

/// Index of a kernel in [`REGISTRY`]; what crosses the JS boundary per task.
pub type KernelId = u32;

/// Every kernel, in id order. Ids are stable within a build only.
pub static REGISTRY: &[&dyn Kernel] = &[
    &hashes::SHA256,
    &hashes::SHA384,
    &hashes::SHA512,
    &hashes::SHA1,
    &hashes::MD5,
    &hashes::BLAKE3,
    &hashes::XXH3,
    &hashes::XXH64,
    &hashes::CRC32,
    &hashes::CRC32C,
    &spin::Spin,
    &sleep::Sleep,
    &panic::Panic,
];

/// Looks a kernel up by name.
pub fn find(name: &str) -> Option<KernelId> {
    REGISTRY.iter().position(|k| k.name() == name).map(|i| i as KernelId)
}

/// The kernel with id `id`, if any.
pub fn get(id: KernelId) -> Option<&'static dyn Kernel> {
    REGISTRY.get(id as usize).copied()
}

/// The loop of the timed kernels (`spin`, `sleep`): runs until the duration
/// in the input has passed, calling `pause(time left)` between looks. It
/// reads the clock, then checks: whatever time is seen as done has also been
/// checked against the task's deadline, even if this thread was descheduled
/// for longer than the whole duration.
fn run_for(input: &Input, ctx: &RunContext<'_>, mut pause: impl FnMut(std::time::Duration)) -> Result<Output, KernelError> {
    let deadline = Instant::now() + std::time::Duration::from_micros(duration_micros(input)?);
    loop {
        let now = Instant::now();
        ctx.check()?;
        if now >= deadline {
            return Ok(Output::EMPTY);
        }
        pause(deadline - now);
    }
}

/// Reads the little-endian `u32` duration in microseconds that `spin` and
/// `sleep` take from the first four bytes of their input.
fn duration_micros(input: &Input) -> Result<u64, KernelError> {
    let mut le = [0u8; 4];
    if input.read_prefix(&mut le) < 4 {
        return Err(KernelError::InvalidInput(format!(
            "this kernel reads its duration as a little-endian uint32 of microseconds from the first 4 bytes; the input has {}",
            input.len()
        )));
    }
    Ok(u32::from_le_bytes(le) as u64)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::input::RawSlice;

    /// Runs kernel `name` over `data` (optionally split in parts).
    pub(crate) fn run(name: &str, parts: &[&'static [u8]]) -> Result<Output, KernelError> {
        let flag = AtomicBool::new(false);
        let input = Input::Many(parts.iter().map(|p| RawSlice::from_static(p)).collect());
        get(find(name).expect("kernel registered")).unwrap().run(&input, &RunContext::new(&flag))
    }

    pub(crate) fn hex(name: &str, data: &'static [u8]) -> String {
        format!("{:?}", run(name, &[data]).unwrap())
    }

    #[test]
    fn names_are_unique_and_findable() {
        for (i, k) in REGISTRY.iter().enumerate() {
            assert_eq!(find(k.name()), Some(i as KernelId));
        }
        assert_eq!(find("nope"), None);
    }

    #[test]
    fn split_input_hashes_like_contiguous() {
        for k in REGISTRY.iter().filter(|k| !matches!(k.name(), "spin" | "sleep" | "panic")) {
            let whole = run(k.name(), &[b"hello, tidepool"]).unwrap();
            let split = run(k.name(), &[b"hel", b"", b"lo, tide", b"pool"]).unwrap();
            assert_eq!(whole, split, "{}", k.name());
        }
    }

    #[test]
    fn chunking_does_not_change_digest() {
        let big: Vec<u8> = (0..CHUNK * 2 + 17).map(|i| (i % 251) as u8).collect();
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        for k in REGISTRY.iter().filter(|k| !matches!(k.name(), "spin" | "sleep" | "panic")) {
            let a = k.run(&Input::Owned(big.clone()), &ctx).unwrap();
            let mut joined = Vec::new();
            ctx.feed(&Input::Owned(big.clone()), |p| joined.extend_from_slice(p)).unwrap();
            assert_eq!(joined, big);
            let b = k.run(&Input::Owned(joined), &ctx).unwrap();
            assert_eq!(a, b, "{}", k.name());
        }
    }

    #[test]
    fn task_flag_and_deadline_stop_a_kernel() {
        let pool_flag = AtomicBool::new(false);
        let task_flag = AtomicBool::new(true);
        let input = Input::Owned(vec![0; CHUNK * 3]);
        let sha = get(find("sha256").unwrap()).unwrap();
        let ctx = RunContext::for_task(&pool_flag, Some(&task_flag), None);
        assert_eq!(sha.run(&input, &ctx), Err(KernelError::Cancelled));
        let past = Instant::now() - std::time::Duration::from_millis(1);
        let ctx = RunContext::for_task(&pool_flag, None, Some(past));
        assert_eq!(sha.run(&input, &ctx), Err(KernelError::TimedOut));
        let ctx = RunContext::for_task(&pool_flag, None, Some(Instant::now() + std::time::Duration::from_secs(60)));
        assert!(sha.run(&input, &ctx).is_ok());
    }

    #[test]
    fn timed_kernels_check_the_deadline_even_when_their_time_is_already_up() {
        // A thread descheduled for longer than the whole spin or sleep (as a
        // low-priority worker on a busy machine can be) must still time out.
        let pool_flag = AtomicBool::new(false);
        let past = Instant::now() - std::time::Duration::from_millis(1);
        let ctx = RunContext::for_task(&pool_flag, None, Some(past));
        let zero = Input::Owned(vec![0; 4]);
        for name in ["spin", "sleep"] {
            assert_eq!(get(find(name).unwrap()).unwrap().run(&zero, &ctx), Err(KernelError::TimedOut), "{name}");
        }
    }

    #[test]
    fn cancel_flag_stops_a_kernel() {
        let flag = AtomicBool::new(true);
        let ctx = RunContext::new(&flag);
        let input = Input::Owned(vec![0; CHUNK * 3]);
        assert_eq!(get(find("sha256").unwrap()).unwrap().run(&input, &ctx), Err(KernelError::Cancelled));
    }
}
