//! The library side of the ABI: descriptors made at compile time from a
//! [`Kernel`], and the `extern "C"` functions tidepool calls, each of which
//! catches panics (since Rust 1.81 a panic escaping an `extern "C"` function
//! aborts the process) and turns errors into a status.

use std::any::Any;
use std::cell::Cell;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use crate::abi::{self, TpHost, TpKernel, TpLibrary, TpParamSpec, TpValue};
use crate::{Context, Error, Kernel, Output, Param, Transform, Values};

/// The descriptor of kernel `K` (used by [`export_kernels!`](crate::export_kernels)).
pub const fn descriptor<K: Kernel>() -> TpKernel {
    TpKernel {
        name: K::NAME.as_ptr(),
        flags: if K::EXPANDS { abi::TP_KERNEL_EXPANDS } else { 0 },
        param_count: K::PARAMS.len() as u32,
        // `Param` is `repr(transparent)` over `TpParamSpec`.
        params: K::PARAMS.as_ptr().cast::<TpParamSpec>(),
        make_params: Some(make_params::<K>),
        drop_params: Some(drop_params::<K>),
        start: Some(start::<K>),
        update: Some(update::<K>),
        finish: Some(finish::<K>),
        drop_state: Some(drop_state::<K>),
    }
}

/// The library descriptor over `kernels` (used by [`export_kernels!`](crate::export_kernels)).
pub const fn library(kernels: &'static [TpKernel]) -> TpLibrary {
    TpLibrary {
        abi_version: abi::ABI_VERSION,
        size: size_of::<TpLibrary>() as u32,
        kernel_count: kernels.len() as u32,
        kernel_size: size_of::<TpKernel>() as u32,
        kernels: kernels.as_ptr(),
    }
}

thread_local! {
    /// True while this thread runs a kernel function.
    static IN_KERNEL: Cell<bool> = const { Cell::new(false) };
}

/// Keeps kernel panics off stderr (each becomes a rejected task, with its
/// message) and leaves every other panic of the library to the hook it had.
/// This library's own hook: a library has its own copy of std.
fn quiet_kernel_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_KERNEL.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning its error or panic into a status (reported through
/// `host`).
fn guard(host: *const TpHost, f: impl FnOnce(&TpHost) -> Result<(), Error>) -> i32 {
    if host.is_null() {
        return abi::TP_ERROR;
    }
    // SAFETY: tidepool passes a host valid for the whole call.
    let host = unsafe { &*host };
    quiet_kernel_panics();
    let outer = IN_KERNEL.with(|k| k.replace(true));
    let result = catch_unwind(AssertUnwindSafe(|| f(host)));
    IN_KERNEL.with(|k| k.set(outer));
    match result {
        Ok(Ok(())) => abi::TP_OK,
        Ok(Err(e)) => e.report(host),
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            // A payload whose destructor panics would unwind out of here:
            // leak it instead (a panic's payload is small).
            std::mem::forget(payload);
            let code = "ERR_TIDEPOOL_PANIC";
            // SAFETY: live host; the code and message are live byte ranges.
            unsafe {
                (host.fail)(host.ctx, code.as_ptr(), code.len(), message.as_ptr(), message.len())
            };
            abi::TP_PANIC
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "the kernel panicked".to_owned()
    }
}

/// Runs a destructor, swallowing a panic (nothing can be reported from a
/// drop, and unwinding must not cross the boundary).
fn quietly(f: impl FnOnce()) {
    quiet_kernel_panics();
    let outer = IN_KERNEL.with(|k| k.replace(true));
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        std::mem::forget(payload);
    }
    IN_KERNEL.with(|k| k.set(outer));
}

unsafe extern "C" fn make_params<K: Kernel>(
    values: *const TpValue,
    count: u32,
    out: *mut *mut c_void,
    host: *const TpHost,
) -> i32 {
    guard(host, |_| {
        let values: &[TpValue] = if count == 0 || values.is_null() {
            &[]
        } else {
            // SAFETY: tidepool passes `count` values, live for this call.
            unsafe { std::slice::from_raw_parts(values, count as usize) }
        };
        if values.len() != K::PARAMS.len() || out.is_null() {
            return Err(Error::new(
                "ERR_TIDEPOOL_KERNEL_CONTRACT",
                "make_params got values that do not match the kernel's schema",
            ));
        }
        let params: K::Params = K::params(&Values::new(K::PARAMS, values))?;
        // SAFETY: `out` is tidepool's live out-pointer for this call.
        unsafe { *out = Box::into_raw(Box::new(params)).cast() };
        Ok(())
    })
}

unsafe extern "C" fn drop_params<K: Kernel>(params: *mut c_void) {
    if !params.is_null() {
        // SAFETY: `params` came from `make_params::<K>` (a `Box<K::Params>`),
        // and tidepool drops each exactly once.
        quietly(|| drop(unsafe { Box::from_raw(params.cast::<K::Params>()) }));
    }
}

unsafe extern "C" fn start<K: Kernel>(
    params: *const c_void,
    len_hint: u64,
    out: *mut *mut c_void,
    host: *const TpHost,
) -> i32 {
    guard(host, |_| {
        if params.is_null() || out.is_null() {
            return Err(Error::new("ERR_TIDEPOOL_KERNEL_CONTRACT", "start got no parameters"));
        }
        // SAFETY: `params` came from `make_params::<K>` and lives while
        // tasks made with it run; it is only read.
        let params = unsafe { &*params.cast::<K::Params>() };
        let state: K::State = K::start(params, (len_hint != u64::MAX).then_some(len_hint))?;
        // SAFETY: `out` is tidepool's live out-pointer for this call.
        unsafe { *out = Box::into_raw(Box::new(state)).cast() };
        Ok(())
    })
}

unsafe extern "C" fn update<K: Kernel>(
    state: *mut c_void,
    data: *const u8,
    len: usize,
    host: *const TpHost,
) -> i32 {
    guard(host, |host| {
        let chunk: &[u8] = if len == 0 || data.is_null() {
            &[]
        } else {
            // SAFETY: tidepool passes a live input range for this call.
            unsafe { std::slice::from_raw_parts(data, len) }
        };
        // SAFETY: `state` came from `start::<K>`; tidepool uses a state on
        // one thread at a time and never after `drop_state`.
        let state = unsafe { &mut *state.cast::<K::State>() };
        state.update(chunk, &mut Output::new(host), &Context::new(host))
    })
}

unsafe extern "C" fn finish<K: Kernel>(state: *mut c_void, host: *const TpHost) -> i32 {
    guard(host, |host| {
        // SAFETY: as in `update`.
        let state = unsafe { &mut *state.cast::<K::State>() };
        state.finish(&mut Output::new(host), &Context::new(host))
    })
}

unsafe extern "C" fn drop_state<K: Kernel>(state: *mut c_void) {
    if !state.is_null() {
        // SAFETY: `state` came from `start::<K>` (a `Box<K::State>`), and
        // tidepool drops each exactly once.
        quietly(|| drop(unsafe { Box::from_raw(state.cast::<K::State>()) }));
    }
}

// `Param` must stay a transparent wrapper: `descriptor` hands its array over
// as `TpParamSpec`s.
const _: () = assert!(size_of::<Param>() == size_of::<TpParamSpec>());
