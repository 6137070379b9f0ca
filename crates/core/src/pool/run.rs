//! Running one task on a worker thread: its kernel found, its output
//! limit applied, a panic caught and turned into the task's error; a packed
//! task as each of its inputs would run alone.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::Once;
use std::time::Instant;

use super::memory::MemoryGate;
use super::{PoolConfig, THREAD_NAME_PREFIX};
use crate::kernels::{self, KernelError, RunContext, Sink};
use crate::sync::thread;
use crate::task::{Mode, Packed, Task, TaskError};

/// Most bytes a packed task reserves for its outputs up front.
const PACKED_RESERVE: usize = 64 * 1024;

/// Runs a packed task (see [`Mode::Packed`]): each input as a task of its
/// own would run (its own deadline, its own output limit, a panic caught),
/// the outputs written back to back into one sink, then, for a `sized`
/// one, each output's length. Returns the completion's slot with the
/// outcome: on a failure, the failing input's.
pub(super) fn run_packed(
    task: &Task,
    packed: &Packed,
    cancel: &AtomicBool,
    config: &PoolConfig,
) -> (u32, Result<kernels::Output, TaskError>) {
    let inputs = &packed.inputs;
    let kernel = match kernel_of(task) {
        Ok(kernel) => kernel,
        Err(e) => return (task.slot, Err(e)),
    };
    let limit = output_limit(task, kernel, config);
    let mut out = Sink::new(usize::MAX);
    let mut place = 0u32;
    let mut lengths = Vec::new();
    let mut run = || -> Result<(), TaskError> {
        let mut each = 0;
        for i in 0..inputs.len() {
            let input = &*inputs.get(i);
            // A clock read per input only when there is a deadline to count.
            let deadline = task.timeout.map(|t| Instant::now() + t);
            let ctx = RunContext::for_task(cancel, task.cancel.as_deref().map(|f| &**f), deadline);
            let before = out.len();
            out.set_limit(before.saturating_add(limit));
            kernel.run(&task.params, input, &ctx, &mut out).map_err(|e| match e {
                // The input's own limit, not where the sink stopped.
                KernelError::TooLarge { .. } => KernelError::TooLarge { limit },
                e => e,
            })?;
            let length = out.len() - before;
            if packed.sized {
                // Told as a uint32 after the outputs (lib/ splits by them).
                let told = u32::try_from(length)
                    .map_err(|_| KernelError::TooLarge { limit: u32::MAX as usize })?;
                lengths.push(told);
            } else if place == 0 {
                each = length;
                // Room for all of them when they are small (digests); the
                // sink grows as it writes past that.
                out.reserve(each.saturating_mul(inputs.len()).min(PACKED_RESERVE));
            } else if length != each {
                return Err(TaskError::UnequalLength { expected: each, got: length });
            }
            place += 1;
        }
        if packed.sized {
            out.set_limit(usize::MAX);
            for length in &lengths {
                if let Err(e) = out.write(&length.to_le_bytes()) {
                    // Every output was made: the error is the last input's.
                    place -= 1;
                    return Err(e.into());
                }
            }
        }
        Ok(())
    };
    let outcome = catch_unwind(AssertUnwindSafe(&mut run));
    let slot = task.slot + place;
    match outcome {
        Ok(Ok(())) => (task.slot, Ok(out.into_output())),
        Ok(Err(e)) => (slot, Err(e)),
        Err(payload) => (slot, Err(TaskError::Panic(panic_message(payload.as_ref())))),
    }
}

/// The kernel a task names.
fn kernel_of(task: &Task) -> Result<&'static dyn kernels::AnyKernel, TaskError> {
    kernels::get(task.kernel).ok_or_else(|| {
        KernelError::InvalidInput(format!("no kernel with id {}", task.kernel)).into()
    })
}

/// The most output a task's run may make: its own limit, or the pool's for
/// the kernel (a decoder's is the smaller one).
fn output_limit(task: &Task, kernel: &dyn kernels::AnyKernel, config: &PoolConfig) -> usize {
    task.max_output.unwrap_or(if kernel.expands() {
        config.max_expanded_bytes
    } else {
        config.max_output_bytes
    })
}

/// Runs `task`'s kernel over its input into a sink of at most the task's
/// output limit (or the pool's for the kernel); a panic becomes
/// `TaskError::Panic` and the thread lives on.
pub(super) fn run_task(
    task: &Task,
    ctx: &RunContext<'_>,
    config: &PoolConfig,
    memory: &MemoryGate,
) -> Result<kernels::Output, TaskError> {
    let kernel = kernel_of(task)?;
    // A memory-hard task runs once its working memory fits the bound (a
    // stream's and a file's kernels claim none).
    let _claim = match task.mode {
        Mode::Once if memory.bounded() => memory.claim(kernel.working_bytes(&task.params), ctx)?,
        _ => None,
    };
    let limit = output_limit(task, kernel, config);
    let input = &task.input;
    let run = || match &task.mode {
        Mode::Stream(chunk) => chunk.stream.step(chunk, input, ctx),
        Mode::File => {
            let mut out = Sink::new(limit);
            let path = crate::file::path_of(input)?;
            crate::file::run(kernel, &task.params, &path, ctx, &mut out).map(|()| out.into_output())
        }
        // (A packed task runs through run_packed, each of its inputs as
        // Once does here.)
        Mode::Once | Mode::Packed(_) => {
            let mut out = Sink::new(limit);
            kernel.run(&task.params, input, ctx, &mut out).map(|()| out.into_output())
        }
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(e.into()),
        Err(payload) => Err(TaskError::Panic(panic_message(payload.as_ref()))),
    }
}

pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "kernel panicked".to_owned()
    }
}

/// Keeps kernel panics off stderr (they become rejected promises) while
/// leaving every other thread's panics to the previous hook.
pub(super) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let ours = thread::current().name().is_some_and(|n| n.starts_with(THREAD_NAME_PREFIX));
            if !ours {
                previous(info);
            }
        }));
    });
}
