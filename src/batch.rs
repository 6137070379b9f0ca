//! `postMany()` and `map()` on the native side: a whole chunk of tasks in one
//! N-API call, and the one cancel flag a batch's tasks share.
//!
//! lib/pool.js checks a batch whole before anything is queued and keeps each
//! chunk's binaries reachable until the chunk's last task settles; a chunk's
//! tasks have consecutive slots from `firstSlot`. Here the chunk's binaries,
//! passed as arguments, are read into tasks that are queued under one lock (`Pool::submit_many`). Every task of a batch
//! carries the batch's flag: when one fails (or the batch's signal fires)
//! `cancelBatch` takes the batch's queued tasks out in one pass and raises
//! the flag, which stops the running ones at their next chunk;
//! `cancelBatches` does the same for every batch of a signal that fired,
//! still in one pass.

use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::sys;
use tidepool_core::{kernels, Mode, Task};

use crate::binary;
use crate::handles::{share, shared, Shared};
use crate::inner::Inner;
use crate::wire::Refusal;

fn bad_call(what: &str) -> Refusal {
    ("ERR_INVALID_ARG_TYPE", format!("submitMany: {what}"))
}

/// A batch's cancel flag (every task of the batch carries it) travels as a
/// tagged External of its own kind.
impl Shared for AtomicBool {
    const TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x2b7e_1516_28ae_d2a6, upper: 0xabf7_1588_09cf_4f3c };
}

/// A new cancel flag for one batch, as a tagged External that owns a share
/// of it (the batch's queued and running tasks own the others).
///
/// # Safety
/// `env` must be the live env of the current call.
pub(crate) unsafe fn new_flag(env: sys::napi_env) -> Result<sys::napi_value, Refusal> {
    // SAFETY: forwarded contract.
    unsafe { share(env, Arc::new(AtomicBool::new(false))) }
        .ok_or_else(|| ("ERR_TIDEPOOL_INTERNAL", "could not make a batch flag".to_owned()))
}

/// The flag behind a handle from [`new_flag`] (a share of it).
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn flag_of(env: sys::napi_env, value: sys::napi_value) -> Result<Arc<AtomicBool>, Refusal> {
    // SAFETY: forwarded contract.
    unsafe { shared::<AtomicBool>(env, value) }.ok_or_else(|| bad_call("the flag must come from batchFlag()"))
}

/// The flags behind an Array of handles from [`new_flag`] (lib/pool.js's
/// own Array: no getter runs while it is read).
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn flags_of(env: sys::napi_env, value: sys::napi_value) -> Result<Vec<Arc<AtomicBool>>, Refusal> {
    let refusal = || bad_call("the flags must be an Array of handles from batchFlag()");
    let mut is_array = false;
    // SAFETY: live env/value, out-pointer to a local.
    if unsafe { sys::napi_is_array(env, value, &mut is_array) } != sys::Status::napi_ok || !is_array {
        return Err(refusal());
    }
    let mut len = 0u32;
    // SAFETY: live env/value (an Array), out-pointer to a local.
    if unsafe { sys::napi_get_array_length(env, value, &mut len) } != sys::Status::napi_ok {
        return Err(refusal());
    }
    let mut flags = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut element = ptr::null_mut();
        // SAFETY: live env/value, index in bounds, out-pointer to a local.
        if unsafe { sys::napi_get_element(env, value, i, &mut element) } != sys::Status::napi_ok {
            return Err(refusal());
        }
        // SAFETY: live env; `element` is a live value of this call.
        flags.push(unsafe { flag_of(env, element) }?);
    }
    Ok(flags)
}

/// Raises a batch's flag.
pub(crate) fn raise(flag: &AtomicBool) {
    flag.store(true, Ordering::Relaxed);
}

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
