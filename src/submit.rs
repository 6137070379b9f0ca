//! `submit`, the one N-API call per task of `post()` and `postFile()`.

use std::ptr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::sys;
use tidepool_core::{kernels, Mode, Refused, Task};

use crate::binary;
use crate::inner::Inner;
use crate::napi_util::{is_undefined, throw};

/// `submit(slot, kernel, data, timeoutMs?, cancellable?, params?, maxOutputBytes?, file?)`:
/// queues one task (`file`: `data` is a path's bytes, and the task reads
/// that file; a stream's chunks have a submit of their own, see streams.rs). `data` is a binary or an Array of binaries; lib/pool.js keeps it reachable until the task is
/// delivered. `params` is a handle from makeParams (see params.rs) or undefined (the kernel's
/// defaults); `maxOutputBytes` (an integer lib/pool.js checked) replaces the pool's limit.
pub(crate) unsafe extern "C" fn submit_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = ARGS;
    let mut argv = [ptr::null_mut(); ARGS];
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; out-pointers to locals.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
    if status != sys::Status::napi_ok || argc < 3 || data.is_null() {
        throw(env, "ERR_INVALID_ARG_TYPE", "submit(slot, kernel, data) takes three arguments");
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments are live values of this call.
    match unsafe { submit(inner, env, argc, argv) } {
        Ok(queued) => {
            let mut result = ptr::null_mut();
            // SAFETY: live env; out-pointer to a local.
            unsafe { sys::napi_create_uint32(env, queued, &mut result) };
            result
        }
        Err((code, message)) => {
            throw(env, code, &message);
            ptr::null_mut()
        }
    }
}

/// The body of `submit`: the queue length after the task was queued, or 0
/// when the queue was full (nothing queued); errors as `(code, message)`.
///
/// # Safety
/// `env` and `argv` must be the live env and arguments of the current call.
unsafe fn submit(
    inner: &Inner,
    env: sys::napi_env,
    argc: usize,
    argv: [sys::napi_value; ARGS],
) -> std::result::Result<u32, (&'static str, String)> {
    let mut slot = 0u32;
    let mut kernel = 0u32;
    // SAFETY: live env and values; out-pointers to locals.
    let numbers_ok = unsafe {
        sys::napi_get_value_uint32(env, argv[0], &mut slot) == sys::Status::napi_ok
            && sys::napi_get_value_uint32(env, argv[1], &mut kernel) == sys::Status::napi_ok
    };
    if !numbers_ok || kernels::get(kernel).is_none() {
        return Err(("ERR_INVALID_ARG_TYPE", "submit: slot and kernel must be valid uint32 ids".to_owned()));
    }
    if inner.is_torn_down() {
        return Err(("ERR_TIDEPOOL_CLOSED", "the environment is shutting down".to_owned()));
    }
    // SAFETY: live env and value; lib/pool.js keeps `data` reachable until the
    // completion for `slot` is delivered.
    let input = unsafe { binary::input_of(env, argv[2]) }?;
    let mut task = Task::new(slot, kernel, input, Instant::now());
    // A file for the pool's thread to read (postFile): `data` holds its
    // path's bytes (lib/pool.js keeps it reachable, as any input).
    if argc > 7 {
        let mut file = false;
        // SAFETY: live env and value; out-pointer to a local.
        unsafe { sys::napi_get_value_bool(env, argv[7], &mut file) };
        if file {
            task.mode = Mode::File;
        }
    }
    // Optional: a run-time limit in ms (a positive number) and whether the
    // task can be cancelled alone (true when it was posted with a signal).
    let mut timeout_ms = 0.0f64;
    let mut cancellable = false;
    // Posts with a signal or a timeout pass two more arguments; plain ones
    // skip the two N-API calls.
    if argc > 3 {
        // SAFETY: live env and values; out-pointers to locals.
        unsafe {
            if sys::napi_get_value_double(env, argv[3], &mut timeout_ms) == sys::Status::napi_ok
                && timeout_ms > 0.0
                && timeout_ms.is_finite()
            {
                task.timeout = Some(Duration::from_secs_f64(timeout_ms / 1000.0));
            }
            if argc > 4 {
                sys::napi_get_value_bool(env, argv[4], &mut cancellable);
            }
        }
    }
    let has_params = argc > 5 && !is_undefined(env, argv[5]);
    if has_params {
        // SAFETY: live env and value.
        task.params = unsafe { crate::params::take(env, argv[5], kernel) }?;
    }
    if argc > 6 && !is_undefined(env, argv[6]) {
        let mut bytes = 0.0f64;
        // SAFETY: live env and value; out-pointer to a local.
        if unsafe { sys::napi_get_value_double(env, argv[6], &mut bytes) } == sys::Status::napi_ok && bytes >= 1.0 {
            task.max_output = Some(bytes as usize);
        }
    }
    let flag = cancellable.then(|| Arc::new(AtomicBool::new(false)));
    task.cancel = flag.clone();
    let queued = match inner.pool().submit(task) {
        Ok(queued) => queued,
        Err(Refused::Full(_)) => return Ok(0),
        Err(Refused::Closed(_)) => return Err(("ERR_TIDEPOOL_CLOSED", "The pool is closed and accepts no new tasks".to_owned())),
    };
    if has_params {
        // SAFETY: live env and the value `take` accepted above.
        unsafe { crate::params::release(env, argv[5]) };
    }
    inner.task_queued(slot, flag);
    Ok(queued.min(u32::MAX as usize) as u32)
}

/// Most arguments `submit` takes.
const ARGS: usize = 8;
