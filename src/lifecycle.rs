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

use std::ffi::{c_void, CStr};
use std::ptr;
use std::rc::Rc;

use napi::bindgen_prelude::{FromNapiValue, Unknown};
use napi::{check_status, sys, Env, Error, Result, Status};
use tidepool_core::{Pool, PoolConfig};

use crate::delivery;
use crate::handles::Tsfn;
use crate::inner::Inner;

/// The raw TSFN handle, moved into the core pool's waker.
struct TsfnHandle(sys::napi_threadsafe_function);
// SAFETY: N-API documents napi_call_threadsafe_function as callable from any
// thread; the handle outlives every worker thread (see the module docs).
unsafe impl Send for TsfnHandle {}
// SAFETY: as above; the handle is only passed to thread-safe N-API calls.
unsafe impl Sync for TsfnHandle {}

/// Frees the TSFN's share of `Inner` when Node finalizes the TSFN.
unsafe extern "C" fn tsfn_finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the pointer produced by `Rc::into_raw` in
    // `start`, and Node calls this finalizer exactly once.
    drop(unsafe { Rc::from_raw(data as *const Inner) });
}

/// Environment teardown: stop and join the threads before the heap (and the
/// TSFN) go away, since workers may be reading JS memory right now.
unsafe extern "C" fn env_teardown(arg: *mut c_void) {
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

/// Finalizer of a [`bound_function`]: releases its share of `Inner`.
unsafe extern "C" fn drop_inner_share(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Rc::into_raw` in `bound_function`; called once.
    drop(unsafe { Rc::from_raw(data as *const Inner) });
}

/// Starts the pool of a new `NativePool` (called by its constructor, on the
/// JS thread of `env`): the TSFN that wakes the JS thread (owning a share
/// of `inner`), the core pool's threads, then the teardown hook. When the
/// threads cannot start, the TSFN and references are released as when a
/// `NativePool` is dropped.
pub(crate) fn start(env: &Env, inner: &Rc<Inner>, config: PoolConfig) -> Result<()> {
    let raw_env = env.raw();
    let context = Rc::into_raw(inner.clone()) as *mut c_void;
    let mut tsfn = ptr::null_mut();
    let mut name = ptr::null_mut();
    // SAFETY: live env; `context` stays valid until tsfn_finalize frees it.
    let created = unsafe {
        check_status!(sys::napi_create_string_utf8(raw_env, c"tidepool".as_ptr(), 8, &mut name))
            .and_then(|_| {
                check_status!(sys::napi_create_threadsafe_function(
                    raw_env,
                    ptr::null_mut(),
                    ptr::null_mut(),
                    name,
                    0,
                    1,
                    context,
                    Some(tsfn_finalize),
                    context,
                    Some(delivery::deliver),
                    &mut tsfn,
                ))
            })
    };
    if let Err(e) = created {
        // SAFETY: the TSFN was not created, so this is the only owner.
        drop(unsafe { Rc::from_raw(context as *const Inner) });
        return Err(e);
    }
    // SAFETY: created just above in this live env; used on this thread.
    let _ = inner.tsfn.set(unsafe { Tsfn::new(raw_env, tsfn) });
    // Idle pools must not keep the process alive: start unref'd.
    if let Some(tsfn) = inner.tsfn.get() {
        let _ = tsfn.release_hold();
    }

    let handle = TsfnHandle(tsfn);
    let waker = Box::new(move || {
        let h = &handle;
        // SAFETY: see TsfnHandle. A failure (closing) only happens during
        // shutdown, when nobody waits for the batch any more.
        unsafe {
            sys::napi_call_threadsafe_function(
                h.0,
                ptr::null_mut(),
                sys::ThreadsafeFunctionCallMode::nonblocking,
            )
        };
    });
    let pool = match Pool::new(config, waker) {
        Ok(pool) => pool,
        Err(e) => {
            stop_and_release(inner); // releases the TSFN and references
            return Err(Error::new(
                Status::GenericFailure,
                format!("could not start pool threads: {e}"),
            ));
        }
    };
    let _ = inner.pool.set(pool);
    // SAFETY: live env; `Inner` outlives the hook (see env_teardown).
    check_status!(unsafe {
        sys::napi_add_env_cleanup_hook(
            raw_env,
            Some(env_teardown),
            Rc::as_ptr(inner) as *mut c_void,
        )
    })?;
    Ok(())
}

/// A plain N-API function whose callback data is a share of `Inner`.
pub(crate) fn bound_function<'env>(
    env: &'env Env,
    inner: &Rc<Inner>,
    name: &CStr,
    callback: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
) -> Result<Unknown<'env>> {
    let raw_env = env.raw();
    let data = Rc::into_raw(inner.clone()) as *mut c_void;
    let mut function = ptr::null_mut();
    // SAFETY: live env; `data` is a leaked Rc<Inner> that the finalizer
    // added right below frees exactly once, after the last call.
    unsafe {
        let created = check_status!(sys::napi_create_function(
            raw_env,
            name.as_ptr(),
            name.to_bytes().len() as isize,
            Some(callback),
            data,
            &mut function
        ))
        .and_then(|_| {
            check_status!(sys::napi_add_finalizer(
                raw_env,
                function,
                data,
                Some(drop_inner_share),
                ptr::null_mut(),
                ptr::null_mut()
            ))
        });
        if let Err(e) = created {
            drop(Rc::from_raw(data as *const Inner));
            return Err(e);
        }
        Unknown::from_napi_value(raw_env, function)
    }
}

/// What dropping a `NativePool` does (GC of its JS object, or a constructor
/// that failed): stops and joins the threads, then releases the TSFN and
/// the references, each once. Nothing when the environment is torn down.
pub(crate) fn stop_and_release(inner: &Rc<Inner>) {
    if inner.is_torn_down() {
        return; // env_teardown already stopped everything; N-API is gone.
    }
    if let Some(pool) = inner.pool.get() {
        pool.abort();
        pool.join();
    }
    // SAFETY: JS thread (finalizer or constructor failure), live env; the
    // hook was added with this very pointer (removing one never added is
    // a no-op).
    unsafe {
        sys::napi_remove_env_cleanup_hook(
            inner.env,
            Some(env_teardown),
            Rc::as_ptr(inner) as *mut c_void,
        )
    };
    // The threads are joined, so nobody calls the TSFN again; each handle
    // is released exactly once, here. Failures leave nothing to undo.
    if let Some(tsfn) = inner.tsfn.get() {
        let _ = tsfn.release();
    }
    let _ = inner.callback.delete();
    for r in &inner.buffers {
        let _ = r.delete();
    }
}
