//! The streams' calls (lib/streams/tasks.js): a stream's handle, what its
//! last step did, a hash's copy, and the inline run of a hash's `update()`
//! past its staging cap (its chunks' submit is submit_step.rs). The protocol is the
//! core's (stream.rs).

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::AtomicBool;

use napi::sys;
use tidepool_core::kernels::{self, KernelError, RunContext};
use tidepool_core::{Input, Output, Stream, StreamChunk, TaskError};

use crate::binary;
use crate::delivery::SLAB_RESULT_MAX;
use crate::inner::Inner;
use crate::napi_util::is_undefined;
use crate::wire::{
    Refusal, SubmitStepArgs, ERR_INVALID_ARG_TYPE, ERR_MEMORY_ALLOCATION_FAILED,
    ERR_TIDEPOOL_INTERNAL,
};

/// A stream's state travels to JavaScript as a tagged External of its own kind.
impl crate::handles::Shared for Stream {
    const TAG: sys::napi_type_tag =
        sys::napi_type_tag { lower: 0x7f3a_95c1_e2d4_0b68, upper: 0x1c8e_6b27_d05f_a943 };

    /// The codec's state, reported from the handle's making (node:zlib's
    /// streams report their buffers at once too, and a stream is made to
    /// be used), brought to what it holds after each step ([`report`]),
    /// until the stream is over ([`over`]) or its handle is collected.
    fn external_bytes(&self) -> usize {
        self.reported()
    }

    fn take_external_bytes(&self) -> usize {
        self.take_reported()
    }
}

/// A new stream of `kernel` with `params` (a handle from makeParams, or
/// undefined: the kernel's defaults) and an output limit for the whole
/// stream (undefined: the pool's for the kernel); `digest`: a hash's,
/// whose kernel may write only when it finishes (`Stream::new_digest`).
///
/// # Safety
/// `env`, `params` must be the live env and a value of the current call.
pub(crate) unsafe fn new_stream(
    inner: &Inner,
    env: sys::napi_env,
    kernel: u32,
    params: sys::napi_value,
    max_output_bytes: Option<f64>,
    digest: bool,
) -> Result<sys::napi_value, Refusal> {
    let Some(found) = kernels::get(kernel) else {
        return Err(Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "newStream: kernel must be a valid kernel id",
        ));
    };
    let params = if is_undefined(env, params) {
        kernels::Params::NONE
    } else {
        // SAFETY: forwarded contract.
        unsafe { crate::params::take(env, params, kernel) }?
    };
    let limit = match max_output_bytes {
        // An integer lib/engine/ checked (>= 1), or Infinity for no limit
        // (lib/zlib/'s streams, as node:zlib's): the cast saturates.
        Some(bytes) if bytes >= 1.0 => bytes as usize,
        _ => inner.pool().output_limit(found),
    };
    let stream = if digest {
        Stream::new_digest(kernel, params, limit)
    } else {
        Stream::new(kernel, params, limit)
    };
    // SAFETY: live env of this call.
    unsafe { crate::handles::share(env, stream) }
        .ok_or_else(|| Refusal::new(ERR_TIDEPOOL_INTERNAL, "could not make a stream handle"))
}

/// What the last step of a stream did, as one number (the core's
/// `Report::pack`: input bytes taken in all × 4 + 0 done, 1 paused, 2
/// ended). Called after each step, it also brings the bytes reported to V8
/// for the stream's state to what the state holds now (node:zlib reports
/// its codec's allocations after each write, as they are made).
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn report(env: sys::napi_env, value: sys::napi_value) -> Result<f64, Refusal> {
    // SAFETY: forwarded contract.
    let stream = unsafe { crate::handles::shared::<Stream>(env, value) }.ok_or_else(|| {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "streamReport: the stream must be a handle from newStream()",
        )
    })?;
    let change = stream.sync_reported();
    if change != 0 {
        // SAFETY: live env, on its JS thread (a call of this env).
        unsafe { crate::handles::report_external(env, change.unsigned_abs(), change > 0) };
    }
    Ok(stream.report().pack() as f64)
}

/// The stream is over (finished, failed or destroyed): the bytes of codec
/// state reported for it are given back now, as node:zlib gives its
/// handle's back at close, rather than when the collector finds the
/// handle; meanwhile they would make V8 collect more often than the live
/// streams call for.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn over(env: sys::napi_env, value: sys::napi_value) -> Result<(), Refusal> {
    // SAFETY: forwarded contract.
    let stream = unsafe { crate::handles::shared::<Stream>(env, value) }.ok_or_else(|| {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "streamOver: the stream must be a handle from newStream()",
        )
    })?;
    let bytes = stream.take_reported();
    if bytes > 0 {
        // SAFETY: live env, on its JS thread (a call of this env).
        unsafe { crate::handles::report_external(env, bytes, false) };
    }
    Ok(())
}

/// A new stream whose state is a copy of `handle`'s (`hash.copy()`).
/// lib/streams/hash.js first takes over the chunk in flight (`run_inline`), and
/// copies only a stream that is open and whose kernel's state can be
/// copied: a refusal here is a bug there.
///
/// # Safety
/// `env` and `handle` must be the live env and a value of the current call.
pub(crate) unsafe fn fork(
    env: sys::napi_env,
    handle: sys::napi_value,
) -> Result<sys::napi_value, Refusal> {
    // SAFETY: forwarded contract.
    let stream = unsafe { crate::handles::shared::<Stream>(env, handle) }.ok_or_else(|| {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "streamFork: the stream must be a handle from newStream()",
        )
    })?;
    let copy = stream.fork().map_err(|e| Refusal::new(ERR_TIDEPOOL_INTERNAL, e.to_string()))?;
    // SAFETY: live env of this call.
    unsafe { crate::handles::share(env, copy) }
        .ok_or_else(|| Refusal::new(ERR_TIDEPOOL_INTERNAL, "could not make a stream handle"))
}

/// Runs, on this (the JS) thread, chunk `seq` of `stream` (its `in_flight`
/// data; `seq` < 0: none in flight) from where it got to, then `rest` (a
/// binary or an Array of binaries): a hash's `update()` past its staging
/// cap. Returns the output (a hash has none before its end) as a Buffer, or
/// the error that ended the stream as the string `"code detail"` (a task
/// error's code and detail, as delivery passes them).
///
/// # Safety
/// `env` and the values must be the live env and values of the current call.
pub(crate) unsafe fn run_inline(
    env: sys::napi_env,
    handle: sys::napi_value,
    seq: f64,
    in_flight: sys::napi_value,
    rest: sys::napi_value,
) -> Result<sys::napi_value, Refusal> {
    // SAFETY: forwarded contract.
    let stream = unsafe { crate::handles::shared::<Stream>(env, handle) }.ok_or_else(|| {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "streamInline: the stream must be a handle from newStream()",
        )
    })?;
    // Both read before anything runs: no JavaScript runs from here to the
    // end of the call, so what they point at stays as it is.
    let in_flight = if seq >= 0.0 {
        // SAFETY: forwarded contract.
        Some((seq as u64, unsafe { binary::input_of(env, in_flight) }?))
    } else {
        None
    };
    // SAFETY: forwarded contract.
    let rest: Input = unsafe { binary::input_of(env, rest) }?;
    let never = AtomicBool::new(false);
    let ctx = RunContext::new(&never);
    let ran = catch_unwind(AssertUnwindSafe(|| {
        stream.run_inline(in_flight.as_ref().map(|(s, i)| (*s, i)), &rest, &ctx)
    }));
    // SAFETY: live env of this call.
    unsafe { ran_here(env, ran) }
}

/// Runs the next step of chunk `seq` of `handle` (its `data`, `end` and
/// `budget` as `submitStep` takes them) on this thread when it only hands
/// on output the codec made already (the core's `Stream::step_here`):
/// returns its output as a Buffer, the error that ended the stream as
/// run_inline's string, or undefined when the step is a pool thread's.
///
/// # Safety
/// `env` and the values must be the live env and values of the current call.
pub(crate) unsafe fn step_here(
    env: sys::napi_env,
    handle: sys::napi_value,
    data: sys::napi_value,
    end: i32,
    budget: f64,
    seq: f64,
) -> Result<sys::napi_value, Refusal> {
    // SAFETY: forwarded contract.
    let stream = unsafe { crate::handles::shared::<Stream>(env, handle) }.ok_or_else(|| {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "streamStepHere: the stream must be a handle from newStream()",
        )
    })?;
    let Some((budget, seq)) = SubmitStepArgs::budget_and_seq(budget, seq) else {
        return Err(Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "streamStepHere: budget and seq must be numbers",
        ));
    };
    let undefined = || {
        let mut value = ptr::null_mut();
        // SAFETY: live env; out-pointer to a local.
        unsafe { sys::napi_get_undefined(env, &mut value) };
        Ok(value)
    };
    if stream.pending() == 0 {
        // Nothing made already (a codec not in blocks): its input is not read.
        return undefined();
    }
    // Read before anything runs: no JavaScript runs from here to the end of
    // the call, so what it points at stays as it is. An input that cannot
    // be read (detached since the write) is the thread step's to refuse,
    // with the error it gives.
    // SAFETY: forwarded contract.
    let Ok(input) = (unsafe { binary::input_of(env, data) }) else {
        return undefined();
    };
    let chunk =
        StreamChunk { stream: stream.clone(), seq, end: SubmitStepArgs::chunk_end(end), budget };
    match catch_unwind(AssertUnwindSafe(|| stream.step_here(&chunk, &input))) {
        Ok(None) => undefined(),
        // SAFETY: live env of this call.
        Ok(Some(ran)) => unsafe { ran_here(env, Ok(ran)) },
        // SAFETY: live env of this call.
        Err(payload) => unsafe { ran_here(env, Err(payload)) },
    }
}

/// What a run on this thread made (here, or run_here.rs), for JavaScript: the output as a Buffer,
/// or the error as the string `"code detail"`.
///
/// # Safety
/// `env` must be the live env of the current call.
pub(crate) unsafe fn ran_here(
    env: sys::napi_env,
    ran: std::thread::Result<Result<Output, KernelError>>,
) -> Result<sys::napi_value, Refusal> {
    let outcome: Result<_, TaskError> = match ran {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(e.into()),
        Err(payload) => Err(TaskError::Panic(tidepool_core::pool::panic_message(payload.as_ref()))),
    };
    let mut value = ptr::null_mut();
    match outcome {
        Ok(output) if output.is_spilled() && output.as_bytes().len() > SLAB_RESULT_MAX => {
            // As a step on a thread delivers it: lent, not copied.
            let bytes = output.into_spilled().unwrap_or_default();
            // SAFETY: live env of this call, inside its handle scope.
            value = unsafe { crate::large_result::large_result(env, bytes) };
            if is_undefined(env, value) {
                return Err(Refusal::new(
                    ERR_MEMORY_ALLOCATION_FAILED,
                    "Failed to allocate memory for the output",
                ));
            }
        }
        Ok(output) => {
            let bytes = output.as_bytes();
            // SAFETY: live env; `bytes` is valid for its length during the call.
            let status = unsafe {
                sys::napi_create_buffer_copy(
                    env,
                    bytes.len(),
                    bytes.as_ptr() as *const c_void,
                    ptr::null_mut(),
                    &mut value,
                )
            };
            if status != sys::Status::napi_ok {
                return Err(Refusal::new(
                    ERR_MEMORY_ALLOCATION_FAILED,
                    "Failed to allocate memory for the output",
                ));
            }
        }
        Err(e) => {
            // One string, "code detail": no Array whose elements a setter on
            // Array.prototype could intercept.
            let (code, detail) = crate::wire::encode_task_error(&e);
            let text = format!("{code} {detail}");
            // SAFETY: live env; `text` is UTF-8 of the given length.
            unsafe {
                sys::napi_create_string_utf8(
                    env,
                    text.as_ptr() as *const _,
                    text.len() as isize,
                    &mut value,
                )
            };
        }
    }
    Ok(value)
}
