//! The lifecycle glue of a `NativePool`: who owns its JS-thread state, and
//! how the threads are stopped before anything they use goes away.
//!
//! # Ownership and teardown
//!
//! [`Inner`] holds everything the JS thread needs. It is shared (`Rc`) by the
//! JS object and by the threadsafe function (TSFN) that workers use to wake the
//! JS thread; whichever goes last frees it. Worker threads never see `Inner`:
//! they only hold the raw TSFN handle, inside the core pool's waker.
//!
//! The TSFN handle must not be used after Node frees it, so every path that
//! can free it first stops and joins the worker threads:
//!
//! * GC of the JS object: `Drop` aborts + joins (the pool is idle then, since
//!   pending tasks keep it strongly referenced), then releases the TSFN.
//! * Environment teardown (process exit, a Worker ending): our cleanup hook,
//!   registered after the TSFN's own so that it runs before it, aborts running
//!   kernels (they stop within one chunk) and joins. Nothing else is touched
//!   afterwards (`torn_down`).
//!
//! # Keeping the process alive
//!
//! While tasks are pending (or a close/destroy is in progress) the TSFN is
//! ref'd, so the event loop waits for the results, and the JS batch callback is
//! held strongly, so the pool cannot be collected under running tasks. When the
//! pool goes idle both are released: an idle pool neither keeps the process
//! alive nor escapes garbage collection.

use std::ffi::c_void;
use std::rc::Rc;

use napi::sys;

use crate::inner::Inner;

/// The raw TSFN handle, moved into the core pool's waker.
pub(crate) struct TsfnHandle(pub(crate) sys::napi_threadsafe_function);
// SAFETY: N-API documents napi_call_threadsafe_function as callable from any
// thread; the handle outlives every worker thread (see the module docs).
unsafe impl Send for TsfnHandle {}
// SAFETY: as above; the handle is only passed to thread-safe N-API calls.
unsafe impl Sync for TsfnHandle {}

/// Frees the TSFN's share of `Inner` when Node finalizes the TSFN.
pub(crate) unsafe extern "C" fn tsfn_finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the pointer produced by `Rc::into_raw` in the
    // constructor, and Node calls this finalizer exactly once.
    drop(unsafe { Rc::from_raw(data as *const Inner) });
}

/// Environment teardown: stop and join the threads before the heap (and the
/// TSFN) go away, since workers may be reading JS memory right now.
pub(crate) unsafe extern "C" fn env_teardown(arg: *mut c_void) {
    // SAFETY: `arg` points at an `Inner` kept alive by the TSFN's Rc, which
    // Node finalizes only after this hook (hooks run in reverse order of
    // registration, and this one was added after the TSFN was created).
    let inner = unsafe { &*(arg as *const Inner) };
    inner.tear_down();
    if let Some(pool) = inner.pool.get() {
        pool.abort();
        pool.join();
    }
}

/// Finalizer of the `submit` function: releases its share of `Inner`.
pub(crate) unsafe extern "C" fn drop_inner_share(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Rc::into_raw` in `submitter`; called once.
    drop(unsafe { Rc::from_raw(data as *const Inner) });
}
