//! Reading the binary part of a posted message in place.
//!
//! Accepted: any TypedArray (Buffer included), DataView, ArrayBuffer,
//! SharedArrayBuffer, or an Array of those (read as their concatenation).
//! lib/engine/ hands over its own snapshot (lib/engine/binary.js: an Array it made,
//! with no getters, each binary checked to be readable) and throws
//! Node-style errors first; the checks here are the last line of defence
//! against misuse, never a source of UB.

use std::ffi::c_void;
use std::ptr;

use napi::sys;
use tidepool_core::{Input, RawSlice};

use crate::napi_util::typed_array_info;
use crate::wire::{Refusal, ERR_INVALID_ARG_TYPE};

fn not_binary() -> Refusal {
    Refusal::new(ERR_INVALID_ARG_TYPE, "expected a Buffer, TypedArray, DataView or ArrayBuffer")
}

/// A detached binary, not in an Array ([`input_of`] says where in one).
fn detached() -> Refusal {
    Refusal::detached(-1)
}

/// N-API's `napi_float16_array` (Node 24 and later), which napi-sys does
/// not name yet.
const FLOAT16_ARRAY: sys::napi_typedarray_type = 11;

/// Bytes per element of a TypedArray type; `None` for a type this build
/// does not know, which is refused: guessing its size could read past the
/// view's end.
fn element_size(kind: sys::napi_typedarray_type) -> Option<usize> {
    Some(match kind {
        sys::TypedarrayType::int8_array
        | sys::TypedarrayType::uint8_array
        | sys::TypedarrayType::uint8_clamped_array => 1,
        sys::TypedarrayType::int16_array | sys::TypedarrayType::uint16_array | FLOAT16_ARRAY => 2,
        sys::TypedarrayType::int32_array
        | sys::TypedarrayType::uint32_array
        | sys::TypedarrayType::float32_array => 4,
        sys::TypedarrayType::float64_array
        | sys::TypedarrayType::bigint64_array
        | sys::TypedarrayType::biguint64_array => 8,
        _ => return None,
    })
}

/// Whether `buffer` (an ArrayBuffer handle) is detached; false if unknown.
///
/// # Safety
/// `env` and `buffer` must be valid for the current call.
unsafe fn is_detached(env: sys::napi_env, buffer: sys::napi_value) -> bool {
    let mut yes = false;
    // SAFETY: live env/value, out-pointer to a local. A SharedArrayBuffer
    // (or anything else) answers false or an error status; both mean "not
    // detached" here.
    let status = unsafe { sys::napi_is_detached_arraybuffer(env, buffer, &mut yes) };
    status == sys::Status::napi_ok && yes
}

/// One binary value as a raw slice.
///
/// # Safety
/// `env` and `value` must be valid for the current call. The returned slice is
/// only valid while the JS value stays reachable and is not detached or
/// resized; lib/engine/ keeps it reachable until the task settles.
unsafe fn one(env: sys::napi_env, value: sys::napi_value) -> Result<RawSlice, Refusal> {
    // SAFETY: forwarded contract.
    if let Some(slice) = unsafe { typed_array(env, value) } {
        return slice;
    }
    let mut yes = false;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: (whole block) every call gets the live env and value of this
    // callback and out-pointers to locals; statuses are checked.
    unsafe {
        if sys::napi_is_dataview(env, value, &mut yes) != sys::Status::napi_ok {
            return Err(not_binary());
        }
        if yes {
            let mut length = 0usize;
            let mut buffer = ptr::null_mut();
            if sys::napi_get_dataview_info(
                env,
                value,
                &mut length,
                &mut data,
                &mut buffer,
                ptr::null_mut(),
            ) != sys::Status::napi_ok
            {
                return Err(not_binary());
            }
            if length == 0 && is_detached(env, buffer) {
                return Err(detached());
            }
            return Ok(RawSlice::new(data as *const u8, length));
        }
        // An ArrayBuffer answers here (a SharedArrayBuffer does not:
        // lib/engine/binary.js and lib/args/params.js wrap one in a Uint8Array first).
        let mut length = 0usize;
        if sys::napi_get_arraybuffer_info(env, value, &mut data, &mut length)
            == sys::Status::napi_ok
        {
            if length == 0 && is_detached(env, value) {
                return Err(detached());
            }
            return Ok(RawSlice::new(data as *const u8, length));
        }
    }
    Err(not_binary())
}

/// A Buffer or other TypedArray as a raw slice, in one N-API call (two when
/// it is empty, to tell a detached one apart); `None` for any other value
/// (napi_get_typedarray_info then fails without side effects).
///
/// # Safety
/// Same contract as [`one`].
unsafe fn typed_array(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Option<Result<RawSlice, Refusal>> {
    // SAFETY: forwarded contract.
    let (mut kind, mut length, data) = unsafe { typed_array_info(env, value) }?;
    if length == 0 {
        let mut buffer = ptr::null_mut();
        // SAFETY: live env/value, out-pointers to locals; `value` is a
        // TypedArray, so this succeeds.
        let status = unsafe {
            sys::napi_get_typedarray_info(
                env,
                value,
                &mut kind,
                &mut length,
                ptr::null_mut(),
                &mut buffer,
                ptr::null_mut(),
            )
        };
        // SAFETY: live env; `buffer` was just produced by N-API.
        if status == sys::Status::napi_ok && unsafe { is_detached(env, buffer) } {
            return Some(Err(detached()));
        }
    }
    let Some(bytes) = element_size(kind).and_then(|size| length.checked_mul(size)) else {
        return Some(Err(Refusal::new(
            ERR_INVALID_ARG_TYPE,
            format!("a TypedArray of a kind this addon does not know ({kind})"),
        )));
    };
    // SAFETY: `data..data+bytes` is the view's memory (its element count
    // times its element size), kept alive by lib/engine/.
    Some(Ok(unsafe { RawSlice::new(data as *const u8, bytes) }))
}

/// One binary value (not an Array of them) as a raw slice.
///
/// # Safety
/// Same contract as [`one`].
pub unsafe fn slice_of(env: sys::napi_env, value: sys::napi_value) -> Result<RawSlice, Refusal> {
    // SAFETY: forwarded contract.
    unsafe { typed_array(env, value).unwrap_or_else(|| one(env, value)) }
}

/// The input of a task: one binary, or an Array of binaries.
///
/// # Safety
/// Same contract as [`one`], for every element.
pub unsafe fn input_of(env: sys::napi_env, value: sys::napi_value) -> Result<Input, Refusal> {
    // The common case first: a Buffer costs this one call.
    // SAFETY: forwarded contract.
    if let Some(slice) = unsafe { typed_array(env, value) } {
        return slice.map(Input::One);
    }
    let mut is_array = false;
    // SAFETY: live env/value, out-pointer to a local.
    if unsafe { sys::napi_is_array(env, value, &mut is_array) } != sys::Status::napi_ok {
        return Err(not_binary());
    }
    if !is_array {
        // SAFETY: forwarded contract.
        return Ok(Input::One(unsafe { one(env, value) }?));
    }
    let mut len = 0u32;
    // SAFETY: live env/value, out-pointer to a local.
    if unsafe { sys::napi_get_array_length(env, value, &mut len) } != sys::Status::napi_ok {
        return Err(not_binary());
    }
    // Every element is fetched first and only then read: fetching may run
    // JavaScript (a getter, were the Array not lib/engine/'s own snapshot),
    // which could detach an element read before it. Once all are fetched,
    // no JavaScript runs until the pointers are taken.
    let mut elements = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut element = ptr::null_mut();
        // SAFETY: live env/value, index in bounds, out-pointer to a local.
        if unsafe { sys::napi_get_element(env, value, i, &mut element) } != sys::Status::napi_ok {
            return Err(not_binary());
        }
        elements.push(element);
    }
    let mut parts = Vec::with_capacity(elements.len());
    for (part, element) in elements.into_iter().enumerate() {
        // SAFETY: forwarded contract; `element` is a live value of this call.
        parts.push(unsafe { one(env, element) }.map_err(|refusal| match refusal.place {
            Some(_) => Refusal::detached(part as i32),
            None => refusal,
        })?);
    }
    Ok(Input::Many(parts.into_boxed_slice()))
}
