//! `postMany()` and `map()` on the native side: a whole chunk of tasks in one
//! N-API call, and the one cancel flag a batch's tasks share.
//!
//! index.js checks a batch whole before anything is queued, takes a slot per
//! task and keeps every binary of the batch reachable until the batch's last
//! task settles. Here the chunk is read (every element fetched first, then
//! read, as `binary::input_of` does within an Array) into tasks that are
//! queued under one lock (`Pool::submit_many`). Every task of a batch
//! carries the batch's flag: when one fails (or the batch's signal fires)
//! `cancelBatch` takes the batch's queued tasks out in one pass and raises
//! the flag, which stops the running ones at their next chunk.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::sys;
use tidepool_core::{kernels, Task};

use crate::binary;
use crate::inner::Inner;

/// Marks our flag handles (random, fixed): no other External passes for one.
const TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x2b7e_1516_28ae_d2a6, upper: 0xabf7_1588_09cf_4f3c };

type Refusal = (&'static str, String);

fn bad_call(what: &str) -> Refusal {
    ("ERR_INVALID_ARG_TYPE", format!("submitMany: {what}"))
}

/// A new cancel flag for one batch, as a tagged External that owns a share
/// of it (the batch's queued and running tasks own the others).
///
/// # Safety
/// `env` must be the live env of the current call.
pub(crate) unsafe fn new_flag(env: sys::napi_env) -> Result<sys::napi_value, Refusal> {
    let data = Arc::into_raw(Arc::new(AtomicBool::new(false)));
    let mut external = ptr::null_mut();
    // SAFETY: live env; `data` is a leaked Arc share that `drop_flag` gives
    // back exactly once, when the External is collected (or now, if the
    // External was not made). The tag is set before JS ever sees the value.
    unsafe {
        if sys::napi_create_external(env, data as *mut c_void, Some(drop_flag), ptr::null_mut(), &mut external) != sys::Status::napi_ok {
            drop(Arc::from_raw(data));
            return Err(("ERR_TIDEPOOL_INTERNAL", "could not make a batch flag".to_owned()));
        }
        if sys::napi_type_tag_object(env, external, &TAG) != sys::Status::napi_ok {
            return Err(("ERR_TIDEPOOL_INTERNAL", "could not tag a batch flag".to_owned()));
        }
    }
    Ok(external)
}

unsafe extern "C" fn drop_flag(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Arc::into_raw` in `new_flag`; finalizers run once.
    drop(unsafe { Arc::from_raw(data as *const AtomicBool) });
}

/// The flag behind a handle from [`new_flag`] (a share of it).
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn flag_of(env: sys::napi_env, value: sys::napi_value) -> Result<Arc<AtomicBool>, Refusal> {
    let mut tagged = false;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: live env/value; out-pointers to locals. The tag is checked
    // first: only then is the External's data known to be one of ours.
    unsafe {
        if sys::napi_check_object_type_tag(env, value, &TAG, &mut tagged) != sys::Status::napi_ok
            || !tagged
            || sys::napi_get_value_external(env, value, &mut data) != sys::Status::napi_ok
            || data.is_null()
        {
            return Err(bad_call("the flag must come from batchFlag()"));
        }
    }
    let data = data as *const AtomicBool;
    // SAFETY: a tagged External's data is an Arc share made by `new_flag`,
    // released only by its finalizer, which cannot run while `value` is in
    // use: taking one more share of it is sound.
    unsafe {
        Arc::increment_strong_count(data);
        Ok(Arc::from_raw(data))
    }
}

/// Raises a batch's flag.
pub(crate) fn raise(flag: &AtomicBool) {
    flag.store(true, Ordering::Relaxed);
}

/// Most arguments `submitMany` takes.
const ARGS: usize = 9;

/// `submitMany(kernel, slots, datas, start, count, timeoutMs, flag, params?, maxOutputBytes?)`:
/// queues `datas[start .. start + count]` (binaries or Arrays of binaries), task `i` in slot
/// `slots[i]` (a Uint32Array), all with the batch's `flag`; answers how many were queued (fewer
/// than `count` when the queue filled up: the first ones, in order).
pub(crate) unsafe extern "C" fn submit_many_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = ARGS;
    let mut argv = [ptr::null_mut(); ARGS];
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; out-pointers to locals.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
    if status != sys::Status::napi_ok || argc < 7 || data.is_null() {
        let (code, message) = bad_call("takes at least seven arguments");
        crate::native_pool::throw(env, code, &message);
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments are live values of this call.
    match unsafe { submit_many(inner, env, argc, argv) } {
        Ok(queued) => {
            let mut result = ptr::null_mut();
            // SAFETY: live env; out-pointer to a local.
            unsafe { sys::napi_create_uint32(env, queued, &mut result) };
            result
        }
        Err((code, message)) => {
            crate::native_pool::throw(env, code, &message);
            ptr::null_mut()
        }
    }
}

/// # Safety
/// `env` and `argv` must be the live env and arguments of the current call.
unsafe fn submit_many(inner: &Inner, env: sys::napi_env, argc: usize, argv: [sys::napi_value; ARGS]) -> Result<u32, Refusal> {
    let mut kernel = 0u32;
    let mut start = 0u32;
    let mut count = 0u32;
    let mut timeout_ms = 0.0f64;
    // SAFETY: live env and values; out-pointers to locals.
    let numbers_ok = unsafe {
        sys::napi_get_value_uint32(env, argv[0], &mut kernel) == sys::Status::napi_ok
            && sys::napi_get_value_uint32(env, argv[3], &mut start) == sys::Status::napi_ok
            && sys::napi_get_value_uint32(env, argv[4], &mut count) == sys::Status::napi_ok
            && sys::napi_get_value_double(env, argv[5], &mut timeout_ms) == sys::Status::napi_ok
    };
    if !numbers_ok || kernels::get(kernel).is_none() {
        return Err(bad_call("kernel, start, count and timeoutMs must be numbers, the kernel a valid id"));
    }
    if inner.is_torn_down() {
        return Err(("ERR_TIDEPOOL_CLOSED", "the environment is shutting down".to_owned()));
    }
    let slots = {
        let mut kind = sys::TypedarrayType::int8_array;
        let mut length = 0usize;
        let mut data: *mut c_void = ptr::null_mut();
        // SAFETY: live env/value, out-pointers to locals.
        let status =
            unsafe { sys::napi_get_typedarray_info(env, argv[1], &mut kind, &mut length, &mut data, ptr::null_mut(), ptr::null_mut()) };
        if status != sys::Status::napi_ok
            || kind != sys::TypedarrayType::uint32_array
            || length < count as usize
            || data.is_null() && count > 0
        {
            return Err(bad_call("slots must be a Uint32Array of at least count elements"));
        }
        if count == 0 {
            return Ok(0);
        }
        // SAFETY: a Uint32Array of `length >= count` elements at `data`
        // (aligned, as every Uint32Array is), alive during this call; no
        // JavaScript runs while the slice is in use, so nothing can change it.
        unsafe { std::slice::from_raw_parts(data as *const u32, count as usize) }.to_vec()
    };
    let mut is_array = false;
    let mut length = 0u32;
    // SAFETY: live env/value, out-pointers to locals.
    let array_ok = unsafe {
        sys::napi_is_array(env, argv[2], &mut is_array) == sys::Status::napi_ok
            && is_array
            && sys::napi_get_array_length(env, argv[2], &mut length) == sys::Status::napi_ok
    };
    if !array_ok || u64::from(start) + u64::from(count) > u64::from(length) {
        return Err(bad_call("datas must be an Array holding start + count elements"));
    }
    // SAFETY: live env/value.
    let flag = unsafe { flag_of(env, argv[6]) }?;
    let params = if argc > 7 && !crate::native_pool::is_undefined(env, argv[7]) {
        // SAFETY: live env and value.
        unsafe { crate::params::take(env, argv[7], kernel) }?
    } else {
        Default::default()
    };
    let mut max_output = None;
    if argc > 8 && !crate::native_pool::is_undefined(env, argv[8]) {
        let mut bytes = 0.0f64;
        // SAFETY: live env and value; out-pointer to a local.
        if unsafe { sys::napi_get_value_double(env, argv[8], &mut bytes) } == sys::Status::napi_ok && bytes >= 1.0 {
            max_output = Some(bytes as usize);
        }
    }
    let timeout = (timeout_ms > 0.0 && timeout_ms.is_finite()).then(|| Duration::from_secs_f64(timeout_ms / 1000.0));
    // Every element is fetched before any is read: were fetching to run
    // JavaScript (it does not on index.js's own Array), it could not detach
    // a binary already read.
    let mut elements = Vec::with_capacity(count as usize);
    for i in start..start + count {
        let mut element = ptr::null_mut();
        // SAFETY: live env/value, index in bounds, out-pointer to a local.
        if unsafe { sys::napi_get_element(env, argv[2], i, &mut element) } != sys::Status::napi_ok {
            return Err(bad_call("datas could not be read"));
        }
        elements.push(element);
    }
    let now = Instant::now();
    let mut tasks = Vec::with_capacity(elements.len());
    for (element, &slot) in elements.into_iter().zip(&slots) {
        // SAFETY: live env and value; index.js keeps every binary of the
        // batch reachable until the batch's last task is delivered.
        let input = unsafe { binary::input_of(env, element) }?;
        tasks.push(Task { slot, kernel, params: params.clone(), input, enqueued_at: now, cancel: Some(flag.clone()), timeout, max_output });
    }
    let Some(_) = inner.pool().submit_many(&mut tasks) else {
        return Err(("ERR_TIDEPOOL_CLOSED", "The pool is closed and accepts no new tasks".to_owned()));
    };
    let queued = count as usize - tasks.len();
    inner.tasks_queued(queued);
    Ok(queued as u32)
}
