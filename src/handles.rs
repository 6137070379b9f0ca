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
    pub(crate) unsafe fn new(
        env: sys::napi_env,
        value: sys::napi_value,
        count: u32,
    ) -> Result<Reference> {
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
        check_status!(unsafe {
            sys::napi_release_threadsafe_function(raw, sys::ThreadsafeFunctionReleaseMode::abort)
        })
    }
}

/// What can travel to JavaScript as a shared, type-tagged External: an `Arc`
/// share of it, given back when the External is collected. The tag tells
/// our Externals of each kind apart from every other External, so one
/// passed back can be trusted to hold a `Self`.
pub(crate) trait Shared: Send + Sync + Sized + 'static {
    /// This kind's tag (random; a new one whenever `Self`'s layout changes).
    const TAG: sys::napi_type_tag;

    /// Native memory one of these holds, reported to V8 when its External
    /// is made (`napi_adjust_external_memory`), so that the collector
    /// feels what a small JS object keeps alive.
    fn external_bytes(&self) -> usize {
        0
    }

    /// The bytes reported for this value and not yet given back, given
    /// back now (0 after the first call): by whoever learns first that
    /// the memory is gone, at the latest the External's finalizer.
    fn take_external_bytes(&self) -> usize {
        0
    }
}

/// Tells V8 that `bytes` more (`grow`) or fewer bytes of native memory live;
/// returns V8's count of them all (0 bytes: only reads it).
///
/// # Safety
/// `env` must be a live env, on its JS thread.
pub(crate) unsafe fn report_external(env: sys::napi_env, bytes: usize, grow: bool) -> i64 {
    let change = bytes.min(i64::MAX as usize) as i64;
    let mut total = 0i64;
    // SAFETY: the caller's contract; out-pointer to a local. A failure
    // leaves V8's count as it was: nothing to undo.
    unsafe {
        sys::napi_adjust_external_memory(env, if grow { change } else { -change }, &mut total)
    };
    total
}

/// `value` as a tagged External owning one `Arc` share of it.
///
/// # Safety
/// `env` must be the live env of the current call (JS thread).
pub(crate) unsafe fn share<T: Shared>(
    env: sys::napi_env,
    value: std::sync::Arc<T>,
) -> Option<sys::napi_value> {
    let bytes = value.external_bytes();
    let data = std::sync::Arc::into_raw(value);
    let mut external = ptr::null_mut();
    // SAFETY: live env; `data` is a leaked Arc share that `unshare::<T>`
    // gives back exactly once, when the External is collected (or now, if
    // it was not made). The tag is set before JavaScript sees the value.
    unsafe {
        if sys::napi_create_external(
            env,
            data as *mut std::ffi::c_void,
            Some(unshare::<T>),
            ptr::null_mut(),
            &mut external,
        ) != sys::Status::napi_ok
        {
            drop(std::sync::Arc::from_raw(data));
            return None;
        }
        // Reported before the tag: from here the finalizer, which reports
        // the same bytes back, runs whatever happens.
        if bytes > 0 {
            report_external(env, bytes, true);
        }
        if sys::napi_type_tag_object(env, external, &T::TAG) != sys::Status::napi_ok {
            return None; // untagged: `shared` refuses it; its finalizer frees it
        }
    }
    Some(external)
}

unsafe extern "C" fn unshare<T: Shared>(
    env: sys::napi_env,
    data: *mut std::ffi::c_void,
    _hint: *mut std::ffi::c_void,
) {
    // SAFETY: `data` came from `Arc::into_raw` in `share::<T>` (the
    // finalizer is registered for that type only); finalizers run once.
    let value = unsafe { std::sync::Arc::from_raw(data as *const T) };
    // SAFETY: Node calls a finalizer on the env's JS thread, with the env
    // live (at the latest, during its teardown); `share` reported these
    // bytes when it made the External this finalizer belongs to, and
    // nothing gave them back yet (take_external_bytes gives them once).
    let bytes = value.take_external_bytes();
    if bytes > 0 {
        // SAFETY: as above.
        unsafe { report_external(env, bytes, false) };
    }
    drop(value);
}

/// One more share of what an External from [`share`] holds; `None` for any
/// other value.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn shared<T: Shared>(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Option<std::sync::Arc<T>> {
    let mut tagged = false;
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    // SAFETY: live env/value; out-pointers to locals. The tag is checked
    // first: only then is the External's data known to be a `T` of ours.
    unsafe {
        if sys::napi_check_object_type_tag(env, value, &T::TAG, &mut tagged) != sys::Status::napi_ok
            || !tagged
            || sys::napi_get_value_external(env, value, &mut data) != sys::Status::napi_ok
            || data.is_null()
        {
            return None;
        }
    }
    let data = data as *const T;
    // SAFETY: a `T`-tagged External's data is an Arc share made by `share`,
    // released only by its finalizer, which cannot run while `value` is in
    // use: taking one more share of it is sound.
    unsafe {
        std::sync::Arc::increment_strong_count(data);
        Some(std::sync::Arc::from_raw(data))
    }
}
