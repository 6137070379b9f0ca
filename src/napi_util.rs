//! Small helpers over raw N-API values, shared by every module of the
//! binding: throwing an error, telling `undefined` apart, reading a number
//! or a boolean argument, reading a TypedArray's memory, a millisecond
//! option as a `Duration`. A leaf: it
//! uses nothing of this crate, so any module can use it without a cycle.

use std::ffi::c_void;
use std::ptr;
use std::time::Duration;

use napi::{sys, Result};

pub(crate) fn is_undefined(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: live env/value of the current call; out-pointer to a local.
    unsafe { sys::napi_typeof(env, value, &mut kind) };
    kind == sys::ValueType::napi_undefined
}

/// Throws a JS error with `code`: a `TypeError` for the argument codes
/// (as Node throws them), an `Error` otherwise. The two codes are
/// src/refusal.rs's, spelled out so that this module depends on nothing.
pub(crate) fn throw(env: sys::napi_env, code: &str, message: &str) {
    throw_placed(env, code, message, None);
}

/// [`throw`], with `binary` and `part` number properties on the error when
/// `place` is given (a `refusal::Place`).
pub(crate) fn throw_placed(
    env: sys::napi_env,
    code: &str,
    message: &str,
    place: Option<(u32, i32)>,
) {
    let type_error = matches!(code, "ERR_INVALID_ARG_TYPE" | "ERR_INVALID_STATE");
    let code = std::ffi::CString::new(code).unwrap_or_default();
    let message = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    let Some((binary, part)) = place else {
        // SAFETY: live env; NUL-terminated strings that outlive the call.
        unsafe {
            if type_error {
                sys::napi_throw_type_error(env, code.as_ptr(), message.as_ptr());
            } else {
                sys::napi_throw_error(env, code.as_ptr(), message.as_ptr());
            }
        }
        return;
    };
    // SAFETY: (whole block) live env, NUL-terminated strings that outlive
    // the call, out-pointers to locals. A failed step leaves a value null,
    // which the next call refuses; the error then lacks a property, and
    // lib/ falls back to post()'s message without a place.
    unsafe {
        let mut js_code = ptr::null_mut();
        let mut js_message = ptr::null_mut();
        let mut error = ptr::null_mut();
        sys::napi_create_string_utf8(
            env,
            code.as_ptr(),
            -1, /* NAPI_AUTO_LENGTH */
            &mut js_code,
        );
        sys::napi_create_string_utf8(
            env,
            message.as_ptr(),
            -1, /* NAPI_AUTO_LENGTH */
            &mut js_message,
        );
        if type_error {
            sys::napi_create_type_error(env, js_code, js_message, &mut error);
        } else {
            sys::napi_create_error(env, js_code, js_message, &mut error);
        }
        if error.is_null() {
            sys::napi_throw_error(env, code.as_ptr(), message.as_ptr());
            return;
        }
        let mut value = ptr::null_mut();
        sys::napi_create_uint32(env, binary, &mut value);
        sys::napi_set_named_property(env, error, c"binary".as_ptr(), value);
        let mut value = ptr::null_mut();
        sys::napi_create_int32(env, part, &mut value);
        sys::napi_set_named_property(env, error, c"part".as_ptr(), value);
        sys::napi_throw(env, error);
    }
}

/// A TypedArray's type, element count and memory; `None` for any other
/// value (napi_get_typedarray_info then fails without side effects).
/// Asking for the memory makes V8 move an on-heap TypedArray to a stable
/// off-heap backing store first, so the pointer cannot move later.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn typed_array_info(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Option<(sys::napi_typedarray_type, usize, *mut c_void)> {
    let mut kind = 0;
    let mut length = 0usize;
    let mut data = ptr::null_mut();
    // SAFETY: forwarded contract; out-pointers to locals.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            value,
            &mut kind,
            &mut length,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    (status == sys::Status::napi_ok).then_some((kind, length, data))
}

pub(crate) fn typed_array_data(
    env: sys::napi_env,
    value: sys::napi_value,
    what: &str,
) -> Result<(*mut c_void, usize)> {
    // SAFETY: the live env and a value of the napi-rs call this serves.
    match unsafe { typed_array_info(env, value) } {
        Some((_, length, data)) => Ok((data, length)),
        None => {
            Err(napi::Error::new(napi::Status::InvalidArg, format!("{what} must be a TypedArray")))
        }
    }
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
