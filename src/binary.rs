//! Reading the binary part of a posted message in place.
//!
//! Accepted: any TypedArray (Buffer included), DataView, ArrayBuffer,
//! SharedArrayBuffer, or an Array of those (read as their concatenation).
//! index.js validates first and throws Node-style errors; the checks here are
//! the last line of defence against misuse, never a source of UB.

use std::ffi::c_void;
use std::ptr;

use napi::{check_status, sys, Error, Result, Status};
use tidepool_core::{Input, RawSlice};

/// Bytes per element of a TypedArray type.
fn element_size(kind: sys::napi_typedarray_type) -> usize {
    match kind {
        sys::TypedarrayType::int8_array | sys::TypedarrayType::uint8_array | sys::TypedarrayType::uint8_clamped_array => 1,
        sys::TypedarrayType::int16_array | sys::TypedarrayType::uint16_array => 2,
        sys::TypedarrayType::int32_array | sys::TypedarrayType::uint32_array | sys::TypedarrayType::float32_array => 4,
        _ => 8, // float64, bigint64, biguint64
    }
}

/// One binary value as a raw slice.
///
/// # Safety
/// `env` and `value` must be valid for the current call. The returned slice is
/// only valid while the JS value stays reachable and is not detached or
/// resized; index.js keeps it reachable until the task settles.
unsafe fn one(env: sys::napi_env, value: sys::napi_value) -> Result<RawSlice> {
    // SAFETY: forwarded contract.
    if let Some(slice) = unsafe { typed_array(env, value) } {
        return Ok(slice);
    }
    let mut yes = false;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY (whole block): every call gets the live env and value of this
    // callback and out-pointers to locals; statuses are checked.
    unsafe {
        check_status!(sys::napi_is_dataview(env, value, &mut yes))?;
        if yes {
            let mut length = 0usize;
            check_status!(sys::napi_get_dataview_info(env, value, &mut length, &mut data, ptr::null_mut(), ptr::null_mut()))?;
            return Ok(RawSlice::new(data as *const u8, length));
        }
        // ArrayBuffer and SharedArrayBuffer both answer here.
        let mut length = 0usize;
        if sys::napi_get_arraybuffer_info(env, value, &mut data, &mut length) == sys::Status::napi_ok {
            return Ok(RawSlice::new(data as *const u8, length));
        }
    }
    Err(Error::new(Status::InvalidArg, "expected a Buffer, TypedArray, DataView or ArrayBuffer".to_owned()))
}

/// A Buffer or other TypedArray as a raw slice, in one N-API call; `None` for
/// any other value (napi_get_typedarray_info then fails without side effects).
///
/// # Safety
/// Same contract as [`one`].
unsafe fn typed_array(env: sys::napi_env, value: sys::napi_value) -> Option<RawSlice> {
    let mut kind = 0;
    let mut length = 0usize;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: live env/value, out-pointers to locals. Asking for `data` makes
    // V8 move an on-heap TypedArray to a stable off-heap backing store first,
    // so the pointer cannot move later.
    let status = unsafe { sys::napi_get_typedarray_info(env, value, &mut kind, &mut length, &mut data, ptr::null_mut(), ptr::null_mut()) };
    (status == sys::Status::napi_ok).then(|| RawSlice::new(data as *const u8, length * element_size(kind)))
}

/// The input of a task: one binary, or an Array of binaries.
///
/// # Safety
/// Same contract as [`one`], for every element.
pub unsafe fn input_of(env: sys::napi_env, value: sys::napi_value) -> Result<Input> {
    // The common case first: a Buffer costs this one call.
    // SAFETY: forwarded contract.
    if let Some(slice) = unsafe { typed_array(env, value) } {
        return Ok(Input::One(slice));
    }
    let mut is_array = false;
    // SAFETY: live env/value, out-pointer to a local.
    check_status!(unsafe { sys::napi_is_array(env, value, &mut is_array) })?;
    if !is_array {
        // SAFETY: forwarded contract.
        return Ok(Input::One(unsafe { one(env, value) }?));
    }
    let mut len = 0u32;
    // SAFETY: live env/value, out-pointer to a local.
    check_status!(unsafe { sys::napi_get_array_length(env, value, &mut len) })?;
    let mut parts = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut element = ptr::null_mut();
        // SAFETY: live env/value, index in bounds, out-pointer to a local;
        // the element is then read under the forwarded contract.
        unsafe {
            check_status!(sys::napi_get_element(env, value, i, &mut element))?;
            parts.push(one(env, element)?);
        }
    }
    Ok(Input::Many(parts.into_boxed_slice()))
}
