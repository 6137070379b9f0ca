//! `submit`, the one N-API call per task of `post()` and `postFile()`; its
//! arguments are declared by [`SubmitArgs`].
//!
//! It is a plain N-API function bound to its pool's `Inner` (lifecycle.rs
//! `bound_function`) rather than a napi-rs method: that skips the wrapper's
//! `this` unwrapping and argument machinery, which cost more than the
//! submit itself.

use std::ptr;
use std::time::Instant;

use napi::sys;
use tidepool_core::{Mode, Refused, Task};

use crate::binary;
use crate::inner::Inner;
use crate::napi_util::throw;
use crate::refusal::uint32_or_throw;
use crate::wire::{self, Refusal, SubmitArgs, ERR_INVALID_ARG_TYPE};

/// The `submit` function's callback (see [`SubmitArgs`]).
pub(crate) unsafe extern "C" fn submit_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = SubmitArgs::MAX;
    let mut argv = [ptr::null_mut(); SubmitArgs::MAX];
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; out-pointers to locals.
    let status = unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data)
    };
    if status != sys::Status::napi_ok || data.is_null() {
        throw(env, ERR_INVALID_ARG_TYPE, SubmitArgs::USAGE);
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments passed (`argc` may count more than were read)
    // are live values of this call.
    let outcome = unsafe {
        SubmitArgs::read(env, &argv[..argc.min(SubmitArgs::MAX)])
            .and_then(|args| submit(inner, env, args))
    };
    // SAFETY: live env of this call.
    unsafe { uint32_or_throw(env, outcome) }
}

/// The body of `submit`: the queue length after the task was queued, or 0
/// when the queue was full (nothing queued).
///
/// # Safety
/// `env` must be the live env of the current call, and `args` read from its
/// arguments.
unsafe fn submit(inner: &Inner, env: sys::napi_env, args: SubmitArgs) -> Result<u32, Refusal> {
    if inner.is_torn_down() {
        return Err(wire::shutting_down());
    }
    // SAFETY: live env and value; lib/engine/ keeps `data` reachable until the
    // completion for `slot` is delivered.
    let input = unsafe { binary::input_of(env, args.data) }?;
    let mut task = Task::new(args.slot, args.kernel, input, Instant::now());
    if args.file {
        task.mode = Mode::File;
    }
    task.timeout = args.timeout;
    if let Some(params) = args.params {
        // SAFETY: live env and value.
        task.params = unsafe { crate::params::take(env, params, args.kernel) }?;
    }
    task.max_output = args.max_output;
    // Moved, not cloned: every post of a signal shares this flag, and each
    // count taken on it is a write to a line the pool's threads write too.
    task.cancel = args.flag;
    let queued = match inner.pool().submit(task) {
        Ok(queued) => queued,
        Err(Refused::Full(_)) => return Ok(0),
        Err(Refused::Closed(_)) => return Err(wire::closed()),
    };
    if let Some(params) = args.params {
        // SAFETY: live env and the value `take` accepted above.
        unsafe { crate::params::release(env, params) };
    }
    inner.task_queued();
    Ok(queued.min(u32::MAX as usize) as u32)
}
