//! Cancel flags: one shared by the tasks of a batch (`postMany()`,
//! `map()`), one by the posts of an AbortSignal (lib/engine/aborts.js).
//!
//! Every task of a batch carries the batch's flag, every post made with a
//! signal the signal's: when a batch fails or a signal fires,
//! `cancelFlagged` takes the flag's queued tasks out in one pass and raises
//! it, which stops the running ones at their next chunk;
//! `cancelAllFlagged` does the same for many flags (every batch of a signal
//! that fired), still in one pass. A flag per signal rather than per task
//! keeps a post's cancellation to one shared handle: no allocation, and
//! nothing kept per slot. A task's share of the flag is taken here, on the
//! JS thread, and let go there too, when its completion is delivered
//! (tidepool_core::Completion::cancel): the share's count never moves
//! between cores, and the workers only read the flag, which `CancelFlag`
//! keeps on a cache line apart from the count.

use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use std::sync::Arc;
use tidepool_core::CancelFlag;

use napi::sys;

use crate::handles::{share, shared, Shared};
use crate::refusal::{Refusal, ERR_INVALID_ARG_TYPE, ERR_TIDEPOOL_INTERNAL};

/// A cancel flag (every task of its batch or signal carries it) travels as
/// a tagged External of its own kind. The tag changes with the layout of
/// what it holds: an addon of another version loaded in the same process
/// (another copy of the package) tags its flags as they are laid out
/// there, and one of them passed here must be refused, not read as ours.
impl Shared for CancelFlag {
    const TAG: sys::napi_type_tag =
        sys::napi_type_tag { lower: 0x5f4c_a9a7_dc07_eccc, upper: 0x2a03_f6cc_5489_ccf8 };
}

/// A new cancel flag for one batch or signal, as a tagged External that
/// owns a share of it (its queued and running tasks own the others).
///
/// # Safety
/// `env` must be the live env of the current call.
pub(crate) unsafe fn new_flag(env: sys::napi_env) -> Result<sys::napi_value, Refusal> {
    // SAFETY: forwarded contract.
    unsafe { share(env, Arc::new(CancelFlag::new())) }
        .ok_or_else(|| Refusal::new(ERR_TIDEPOOL_INTERNAL, "could not make a cancel flag"))
}

/// The flag behind a handle from [`new_flag`] (a share of it).
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn flag_of(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Result<Arc<CancelFlag>, Refusal> {
    // SAFETY: forwarded contract.
    unsafe { shared::<CancelFlag>(env, value) }
        .ok_or_else(|| bad_call("a cancel flag must be a handle from cancelFlag()"))
}

/// The flags behind an Array of handles from [`new_flag`] (lib/engine/'s
/// own Array: no getter runs while it is read).
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub(crate) unsafe fn flags_of(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Result<Vec<Arc<CancelFlag>>, Refusal> {
    let refusal = || bad_call("the cancel flags must be an Array of handles from cancelFlag()");
    let mut is_array = false;
    // SAFETY: live env/value, out-pointer to a local.
    if unsafe { sys::napi_is_array(env, value, &mut is_array) } != sys::Status::napi_ok || !is_array
    {
        return Err(refusal());
    }
    let mut len = 0u32;
    // SAFETY: live env/value (an Array), out-pointer to a local.
    if unsafe { sys::napi_get_array_length(env, value, &mut len) } != sys::Status::napi_ok {
        return Err(refusal());
    }
    let mut flags = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut element = ptr::null_mut();
        // SAFETY: live env/value, index in bounds, out-pointer to a local.
        if unsafe { sys::napi_get_element(env, value, i, &mut element) } != sys::Status::napi_ok {
            return Err(refusal());
        }
        // SAFETY: live env; `element` is a live value of this call.
        flags.push(unsafe { flag_of(env, element) }?);
    }
    Ok(flags)
}

/// Why a flag (or an Array of them) was refused: the same words whichever
/// raw function it was given to.
fn bad_call(what: &str) -> Refusal {
    Refusal::new(ERR_INVALID_ARG_TYPE, what)
}

/// Raises a flag.
pub(crate) fn raise(flag: &AtomicBool) {
    flag.store(true, Ordering::Relaxed);
}
