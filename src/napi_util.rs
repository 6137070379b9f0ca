//! Small helpers over raw N-API values, shared by every module of the
//! binding: throwing an error, telling `undefined` apart, reading a number
//! or a boolean argument, reading a TypedArray's memory, a millisecond
//! option as a `Duration`. A leaf: it
//! uses nothing of this crate, so any module can use it without a cycle.

use std::ffi::c_void;
use std::ptr;
use std::time::Duration;

use napi::{check_status, sys, Result};

pub(crate) fn is_undefined(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: live env/value of the current call; out-pointer to a local.
    unsafe { sys::napi_typeof(env, value, &mut kind) };
    kind == sys::ValueType::napi_undefined
}

/// Throws a JS error with `code`: a `TypeError` for the argument codes
/// (as Node throws them), an `Error` otherwise. The two codes are
/// wire/refusal.rs's, spelled out so that this module depends on nothing.
pub(crate) fn throw(env: sys::napi_env, code: &str, message: &str) {
    let type_error = matches!(code, "ERR_INVALID_ARG_TYPE" | "ERR_INVALID_STATE");
    let code = std::ffi::CString::new(code).unwrap_or_default();
    let message = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: live env; NUL-terminated strings that outlive the call.
    unsafe {
        if type_error {
            sys::napi_throw_type_error(env, code.as_ptr(), message.as_ptr());
        } else {
            sys::napi_throw_error(env, code.as_ptr(), message.as_ptr());
        }
    }
}

pub(crate) fn typed_array_data(
    env: sys::napi_env,
    value: sys::napi_value,
    what: &str,
) -> Result<(*mut c_void, usize)> {
    let mut kind = 0;
    let mut len = 0;
    let mut data = ptr::null_mut();
    // SAFETY: live env/value, out-pointers to locals.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            value,
            &mut kind,
            &mut len,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    check_status!(status, "{what} must be a TypedArray")?;
    Ok((data, len))
}

pub(crate) fn duration_ms(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

/// `value` as a uint32 (N-API's conversion of a Number); `None` when it is
/// not a Number.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn u32_of(env: sys::napi_env, value: sys::napi_value) -> Option<u32> {
    let mut out = 0;
    // SAFETY: forwarded contract; out-pointer to a local.
    (unsafe { sys::napi_get_value_uint32(env, value, &mut out) } == sys::Status::napi_ok)
        .then_some(out)
}

/// `value` as an int32 (N-API's conversion of a Number); `None` when it is
/// not a Number.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn i32_of(env: sys::napi_env, value: sys::napi_value) -> Option<i32> {
    let mut out = 0;
    // SAFETY: forwarded contract; out-pointer to a local.
    (unsafe { sys::napi_get_value_int32(env, value, &mut out) } == sys::Status::napi_ok)
        .then_some(out)
}

/// `value` as a double; `None` when it is not a Number.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn f64_of(env: sys::napi_env, value: sys::napi_value) -> Option<f64> {
    let mut out = 0.0;
    // SAFETY: forwarded contract; out-pointer to a local.
    (unsafe { sys::napi_get_value_double(env, value, &mut out) } == sys::Status::napi_ok)
        .then_some(out)
}

/// `value` as a bool; `None` when it is not a boolean.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn bool_of(env: sys::napi_env, value: sys::napi_value) -> Option<bool> {
    let mut out = false;
    // SAFETY: forwarded contract; out-pointer to a local.
    (unsafe { sys::napi_get_value_bool(env, value, &mut out) } == sys::Status::napi_ok)
        .then_some(out)
}

/// What a raw function returns: `number`, or `undefined` after throwing the
/// `(code, message)` it was refused with (a `wire::Refusal`).
///
/// # Safety
/// `env` must be the live env of the current call.
pub(crate) unsafe fn uint32_or_throw(
    env: sys::napi_env,
    outcome: std::result::Result<u32, (&'static str, String)>,
) -> sys::napi_value {
    match outcome {
        Ok(number) => {
            let mut result = ptr::null_mut();
            // SAFETY: live env; out-pointer to a local.
            unsafe { sys::napi_create_uint32(env, number, &mut result) };
            result
        }
        Err((code, message)) => {
            throw(env, code, &message);
            ptr::null_mut()
        }
    }
}
