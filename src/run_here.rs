//! `runHere`: a one-shot task run on the calling (JS) thread, as a pool
//! thread would run it: the `*Sync` functions of `@tidepool-rs/pool/zlib`
//! that this Node's node:zlib lacks (zstd's before Node 22.15), which are
//! synchronous by definition.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;

use napi::sys;
use tidepool_core::kernels::{self, Params, RunContext, Sink};

use crate::binary;
use crate::napi_util::is_undefined;
use crate::wire::{Refusal, ERR_INVALID_ARG_TYPE};

/// Runs `kernel` with `params` (a handle from makeParams, or undefined:
/// its defaults) over `input` (a binary) here, its output limited to
/// `max_output_bytes` (an integer >= 1 lib/ checked): the output as a
/// Buffer, or the error as the string `"code detail"` (streams.rs
/// `ran_here`). Nothing can cancel it: as node:zlib's `*Sync`, it runs to
/// its end or its error.
///
/// # Safety
/// `env` and the values must be the live env and values of the current call.
pub(crate) unsafe fn run_here(
    env: sys::napi_env,
    kernel: u32,
    params: sys::napi_value,
    input: sys::napi_value,
    max_output_bytes: f64,
) -> Result<sys::napi_value, Refusal> {
    let Some(found) = kernels::get(kernel) else {
        return Err(Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "runHere: kernel must be a valid kernel id",
        ));
    };
    let params = if is_undefined(env, params) {
        Params::NONE
    } else {
        // SAFETY: forwarded contract.
        unsafe { crate::params::take(env, params, kernel) }?
    };
    // Read before the kernel runs: no JavaScript runs from here to the end
    // of the call, so the memory it points at stays as it is.
    // SAFETY: forwarded contract.
    let input = unsafe { binary::input_of(env, input) }?;
    // The cast saturates: Infinity is no limit.
    let limit = if max_output_bytes >= 1.0 { max_output_bytes as usize } else { 1 };
    let never = AtomicBool::new(false);
    let ctx = RunContext::new(&never);
    let ran = catch_unwind(AssertUnwindSafe(|| {
        let mut out = Sink::new(limit);
        found.run(&params, &input, &ctx, &mut out).map(|()| out.into_output())
    }));
    // SAFETY: live env of this call.
    unsafe { crate::streams::ran_here(env, ran) }
}
