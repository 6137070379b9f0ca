//! Driving a kernel as tidepool does: through the descriptor's function
//! pointers.

use std::ffi::{c_void, CStr};
use std::ptr;

use tidepool_kernel_sdk::abi::{self, TpKernel, TpLibrary, TpValue};

use crate::host::*;
use crate::kernels::*;

pub(crate) fn library() -> &'static TpLibrary {
    // SAFETY: this binary's entry point returns its static descriptor.
    unsafe { &*tidepool_kernels_v1() }
}

pub(crate) fn kernels() -> &'static [TpKernel] {
    let lib = library();
    // SAFETY: `kernel_count` kernels of the static descriptor (the stride is
    // `size_of::<TpKernel>()`, checked by the descriptor test).
    unsafe { std::slice::from_raw_parts(lib.kernels, lib.kernel_count as usize) }
}

pub(crate) fn kernel(name: &str) -> &'static TpKernel {
    // SAFETY: every name is a static NUL-terminated string.
    kernels()
        .iter()
        .find(|k| unsafe { CStr::from_ptr(k.name) }.to_str() == Ok(name))
        .expect("a kernel of that name")
}

pub(crate) fn absent() -> TpValue {
    TpValue { present: 0, boolean: 0, integer: 0, number: 0.0, data: ptr::null(), len: 0 }
}

pub(crate) fn integer(n: i64) -> TpValue {
    TpValue { present: 1, integer: n, ..absent() }
}

pub(crate) fn number(n: f64) -> TpValue {
    TpValue { present: 1, number: n, ..absent() }
}

pub(crate) fn boolean(b: bool) -> TpValue {
    TpValue { present: 1, boolean: u32::from(b), ..absent() }
}

/// A string or bytes value borrowing `b` (which must outlive the call).
pub(crate) fn data(b: &[u8]) -> TpValue {
    TpValue { present: 1, data: b.as_ptr(), len: b.len(), ..absent() }
}

/// `make_params`: the status and what it stored (NULL if nothing).
pub(crate) fn make_params(k: &TpKernel, values: &[TpValue], fake: &mut Fake) -> (i32, *mut c_void) {
    let mut out = ptr::null_mut();
    let host = fake.host();
    // SAFETY: the kernel's function with live values, out-pointer and host.
    let status =
        unsafe { (k.make_params.unwrap())(values.as_ptr(), values.len() as u32, &mut out, &host) };
    (status, out)
}

/// `start`: the status and what it stored (NULL if nothing).
pub(crate) fn start(
    k: &TpKernel,
    params: *const c_void,
    hint: u64,
    fake: &mut Fake,
) -> (i32, *mut c_void) {
    let mut out = ptr::null_mut();
    let host = fake.host();
    // SAFETY: the kernel's function, with parameters it made (or NULL), a
    // live out-pointer and host.
    let status = unsafe { (k.start.unwrap())(params, hint, &mut out, &host) };
    (status, out)
}

pub(crate) fn update(k: &TpKernel, state: *mut c_void, chunk: &[u8], fake: &mut Fake) -> i32 {
    let host = fake.host();
    // SAFETY: a state this kernel made, a live chunk and host.
    unsafe { (k.update.unwrap())(state, chunk.as_ptr(), chunk.len(), &host) }
}

pub(crate) fn finish(k: &TpKernel, state: *mut c_void, fake: &mut Fake) -> i32 {
    let host = fake.host();
    // SAFETY: a state this kernel made, a live host.
    unsafe { (k.finish.unwrap())(state, &host) }
}

pub(crate) fn drop_state(k: &TpKernel, state: *mut c_void) {
    // SAFETY: a state this kernel made, dropped once.
    unsafe { (k.drop_state.unwrap())(state) }
}

pub(crate) fn drop_params(k: &TpKernel, params: *mut c_void) {
    // SAFETY: parameters this kernel made, dropped once.
    unsafe { (k.drop_params.unwrap())(params) }
}

/// Parameters from no values (the kernels without a schema).
pub(crate) fn no_params(k: &TpKernel) -> *mut c_void {
    let mut fake = Fake::new();
    let (status, params) = make_params(k, &[], &mut fake);
    assert_eq!((status, fake.failure()), (abi::TP_OK, None));
    params
}

/// A whole task: parameters from `values`, the chunks, `finish`: the status
/// of the first failing call (or `TP_OK`) and the fake.
pub(crate) fn run(name: &str, values: &[TpValue], chunks: &[&[u8]], mut fake: Fake) -> (i32, Fake) {
    let k = kernel(name);
    let (status, params) = make_params(k, values, &mut fake);
    if status != abi::TP_OK {
        return (status, fake);
    }
    let (mut status, state) = start(k, params, u64::MAX, &mut fake);
    if status == abi::TP_OK {
        for chunk in chunks {
            status = update(k, state, chunk, &mut fake);
            if status != abi::TP_OK {
                break;
            }
        }
        if status == abi::TP_OK {
            status = finish(k, state, &mut fake);
        }
        drop_state(k, state);
    }
    drop_params(k, params);
    (status, fake)
}
