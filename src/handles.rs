//! Small owners of raw N-API handles, each call checked for its status.
//!
//! Every method must run on the JS thread of the environment the handle was
//! made in, while that environment is alive; the types cannot check that,
//! hence the `unsafe` constructors: whoever makes one promises to use it only
//! there (all of them live in `Inner`, which only the JS thread touches).

use std::cell::Cell;
use std::ptr;

use napi::{check_status, sys, Result};

/// A `napi_ref`: keeps a JS value alive while its count is above 0.
pub(crate) struct Reference {
    env: sys::napi_env,
    raw: sys::napi_ref,
}

impl Reference {
    /// A reference to `value` with `count` strong counts (0: weak).
    ///
    /// # Safety
    /// JS thread of the live `env`; `value` a live value of the current call.
    /// The reference must only be used on that thread while `env` lives.
    pub(crate) unsafe fn new(env: sys::napi_env, value: sys::napi_value, count: u32) -> Result<Reference> {
        let mut raw = ptr::null_mut();
        // SAFETY: forwarded contract; out-pointer to a local.
        check_status!(unsafe { sys::napi_create_reference(env, value, count, &mut raw) })?;
        Ok(Reference { env, raw })
    }

    /// The value, or `None` if a weak reference's value was collected.
    pub(crate) fn value(&self) -> Option<sys::napi_value> {
        let mut value = ptr::null_mut();
        // SAFETY: `new`'s contract; out-pointer to a local.
        let status = unsafe { sys::napi_get_reference_value(self.env, self.raw, &mut value) };
        (status == sys::Status::napi_ok && !value.is_null()).then_some(value)
    }

    /// One more strong count.
    pub(crate) fn strengthen(&self) -> Result<()> {
        let mut count = 0;
        // SAFETY: `new`'s contract; out-pointer to a local.
        check_status!(unsafe { sys::napi_reference_ref(self.env, self.raw, &mut count) })
    }

    /// One strong count less.
    pub(crate) fn weaken(&self) -> Result<()> {
        let mut count = 0;
        // SAFETY: `new`'s contract; out-pointer to a local.
        check_status!(unsafe { sys::napi_reference_unref(self.env, self.raw, &mut count) })
    }

    /// Deletes the reference (call once, from the owner's Drop).
    pub(crate) fn delete(&self) -> Result<()> {
        // SAFETY: `new`'s contract; the owner calls this once, last.
        check_status!(unsafe { sys::napi_delete_reference(self.env, self.raw) })
    }
}

/// The threadsafe function that wakes the JS thread. The raw handle is also
/// handed to the workers' waker, which only calls it (a thread-safe call);
/// everything here runs on the JS thread.
pub(crate) struct Tsfn {
    env: sys::napi_env,
    raw: Cell<sys::napi_threadsafe_function>,
}

impl Tsfn {
    /// Wraps a threadsafe function created in `env`.
    ///
    /// # Safety
    /// `raw` was created in the live `env`; the methods run on its JS thread.
    pub(crate) unsafe fn new(env: sys::napi_env, raw: sys::napi_threadsafe_function) -> Tsfn {
        Tsfn { env, raw: Cell::new(raw) }
    }

    /// Keeps the event loop alive while the function may still be called.
    pub(crate) fn hold(&self) -> Result<()> {
        // SAFETY: `new`'s contract.
        check_status!(unsafe { sys::napi_ref_threadsafe_function(self.env, self.raw.get()) })
    }

    /// Lets the event loop end even though the function exists.
    pub(crate) fn release_hold(&self) -> Result<()> {
        // SAFETY: `new`'s contract.
        check_status!(unsafe { sys::napi_unref_threadsafe_function(self.env, self.raw.get()) })
    }

    /// Releases the function for good (once; later calls do nothing). Every
    /// thread that could call it must have been joined first.
    pub(crate) fn release(&self) -> Result<()> {
        let raw = self.raw.replace(ptr::null_mut());
        if raw.is_null() {
            return Ok(());
        }
        // SAFETY: `new`'s contract; `raw` is released exactly once (it was
        // swapped out above) and no thread calls it any more.
        check_status!(unsafe { sys::napi_release_threadsafe_function(raw, sys::ThreadsafeFunctionReleaseMode::abort) })
    }
}
