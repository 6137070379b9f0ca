//! `postMany()` and `map()` on the native side: a whole chunk of tasks in one
//! N-API call.
//!
//! lib/pool.js checks a batch whole before anything is queued and keeps each
//! chunk's binaries reachable until the chunk's last task settles; a chunk's
//! tasks have consecutive slots from `firstSlot`. Here the chunk's binaries,
//! passed as arguments, are read into tasks that are queued under one lock (`Pool::submit_many`).

use std::ptr;
use std::time::{Duration, Instant};

use napi::sys;
use tidepool_core::{kernels, Mode, Task};

use crate::batch::{bad_call, flag_of};
use crate::binary;
use crate::inner::Inner;
use crate::wire::Refusal;

/// The arguments of `submitMany` before the binaries.
const FIXED: usize = 6;
/// Most binaries one `submitMany` call takes.
pub(crate) const MAX_CHUNK: usize = 4096;

/// `submitMany(kernel, firstSlot, timeoutMs, flag, params, maxOutputBytes, ...binaries)`: queues
/// one task per binary (or Array of binaries), task `i` in slot `firstSlot + i`, all with the
/// batch's `flag` (`params` and `maxOutputBytes` may be undefined); answers how many were queued
/// (fewer than given when the queue filled up: the first ones, in order).
///
/// The binaries come as arguments, not in an Array: V8 copies an argument list in a few
/// nanoseconds per element, where reading an Array costs a `napi_get_element` (a property lookup
/// and a handle) per element, the largest share of this call.
pub(crate) unsafe extern "C" fn submit_many_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 0;
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; asks for the count only.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, ptr::null_mut(), ptr::null_mut(), &mut data) };
    if status != sys::Status::napi_ok || !(FIXED..=FIXED + MAX_CHUNK).contains(&argc) || data.is_null() {
        let (code, message) = bad_call("takes six arguments and at most 4096 binaries");
        crate::napi_util::throw(env, code, &message);
        return ptr::null_mut();
    }
    let mut argv = vec![ptr::null_mut(); argc];
    let mut got = argc;
    // SAFETY: as above; `argv` has room for `argc` values.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut got, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
    if status != sys::Status::napi_ok || got != argc {
        let (code, message) = bad_call("could not read its arguments");
        crate::napi_util::throw(env, code, &message);
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments are live values of this call.
    match unsafe { submit_many(inner, env, &argv) } {
        Ok(queued) => {
            let mut result = ptr::null_mut();
            // SAFETY: live env; out-pointer to a local.
            unsafe { sys::napi_create_uint32(env, queued, &mut result) };
            result
        }
        Err((code, message)) => {
            crate::napi_util::throw(env, code, &message);
            ptr::null_mut()
        }
    }
}

/// # Safety
/// `env` and `argv` must be the live env and arguments of the current call.
unsafe fn submit_many(inner: &Inner, env: sys::napi_env, argv: &[sys::napi_value]) -> Result<u32, Refusal> {
    let (fixed, binaries) = argv.split_at(FIXED);
    let count = binaries.len() as u32;
    let mut kernel = 0u32;
    let mut first_slot = 0u32;
    let mut timeout_ms = 0.0f64;
    // SAFETY: live env and values; out-pointers to locals.
    let numbers_ok = unsafe {
        sys::napi_get_value_uint32(env, fixed[0], &mut kernel) == sys::Status::napi_ok
            && sys::napi_get_value_uint32(env, fixed[1], &mut first_slot) == sys::Status::napi_ok
            && sys::napi_get_value_double(env, fixed[2], &mut timeout_ms) == sys::Status::napi_ok
    };
    if !numbers_ok || kernels::get(kernel).is_none() || first_slot.checked_add(count).is_none() {
        return Err(bad_call("kernel, firstSlot and timeoutMs must be numbers, the kernel a valid id"));
    }
    if inner.is_torn_down() {
        return Err(("ERR_TIDEPOOL_CLOSED", "the environment is shutting down".to_owned()));
    }
    // SAFETY: live env/value.
    let flag = unsafe { flag_of(env, fixed[3]) }?;
    if count == 0 {
        return Ok(0);
    }
    let params = if crate::napi_util::is_undefined(env, fixed[4]) {
        Default::default()
    } else {
        // SAFETY: live env and value.
        unsafe { crate::params::take(env, fixed[4], kernel) }?
    };
    let mut max_output = None;
    if !crate::napi_util::is_undefined(env, fixed[5]) {
        let mut bytes = 0.0f64;
        // SAFETY: live env and value; out-pointer to a local.
        if unsafe { sys::napi_get_value_double(env, fixed[5], &mut bytes) } == sys::Status::napi_ok && bytes >= 1.0 {
            max_output = Some(bytes as usize);
        }
    }
    let timeout = (timeout_ms > 0.0 && timeout_ms.is_finite()).then(|| Duration::from_secs_f64(timeout_ms / 1000.0));
    // The binaries are arguments: no JavaScript runs between reading the
    // first and the last, so none can detach one already read.
    let now = Instant::now();
    let mut tasks = Vec::with_capacity(binaries.len());
    for (&binary, slot) in binaries.iter().zip(first_slot..) {
        // SAFETY: live env and value; lib/pool.js keeps every binary of the
        // chunk reachable until the chunk's last task is delivered.
        let input = unsafe { binary::input_of(env, binary) }?;
        tasks.push(Task {
            slot,
            kernel,
            params: params.clone(),
            input,
            enqueued_at: now,
            cancel: Some(flag.clone()),
            timeout,
            max_output,
            mode: Mode::Once,
        });
    }
    let Some(_) = inner.pool().submit_many(&mut tasks) else {
        return Err(("ERR_TIDEPOOL_CLOSED", "The pool is closed and accepts no new tasks".to_owned()));
    };
    let queued = count as usize - tasks.len();
    inner.tasks_queued(queued);
    Ok(queued as u32)
}
