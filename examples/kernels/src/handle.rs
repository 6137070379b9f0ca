//! The library as a napi-rs addon: `kernels()` returns the handle
//! `Pool.loadKernels(handle)` takes, an External whose data is the library
//! descriptor, tagged with the ABI's `NAPI_TYPE_TAG` (napi-rs's
//! `External<T>` cannot serve: its check is a Rust `TypeId`, which differs
//! between separately built binaries).

use napi::bindgen_prelude::{FromNapiValue, Unknown};
use napi::{sys, Env};
use napi_derive::napi;
use tidepool_kernel_sdk::abi::NAPI_TYPE_TAG;

/// The handle of this library's kernels, for `Pool.loadKernels(handle)`.
#[napi]
pub fn kernels(env: &Env) -> napi::Result<Unknown<'_>> {
    let descriptor = crate::tidepool_kernels_v1();
    let tag = sys::napi_type_tag { lower: NAPI_TYPE_TAG.0, upper: NAPI_TYPE_TAG.1 };
    let mut external = std::ptr::null_mut();
    // SAFETY: the live env of this call; the descriptor is static data of
    // this library (never freed, so no finalizer); out-pointer to a local.
    unsafe {
        napi::check_status!(sys::napi_create_external(
            env.raw(),
            descriptor.cast_mut().cast(),
            None,
            std::ptr::null_mut(),
            &mut external
        ))?;
        napi::check_status!(sys::napi_type_tag_object(env.raw(), external, &tag))?;
        Unknown::from_napi_value(env.raw(), external)
    }
}
