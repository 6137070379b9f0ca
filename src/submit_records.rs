//! `submitRecords`: `postRecords()` on the native side, a chunk of the
//! records of one binary in one N-API call; its arguments are declared by
//! [`SubmitRecordsArgs`].
//!
//! lib/engine/ checks the binary and the records' lengths before anything
//! is queued, and keeps the binary reachable until the chunk's last task
//! settles. Here each record's bytes become a task's input in place
//! (`tidepool_core::Records`): no copy, and no JavaScript object per
//! record.

use std::ptr;

use napi::sys;
use tidepool_core::Records;

use crate::binary;
use crate::inner::Inner;
use crate::refusal::uint32_or_throw;
use crate::submit_many::queue_chunk;
use crate::wire::{Refusal, SubmitRecordsArgs, ERR_INVALID_ARG_TYPE};

/// The `submitRecords` function's callback (see [`SubmitRecordsArgs`]).
pub(crate) unsafe extern "C" fn submit_records_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = SubmitRecordsArgs::MIN;
    let mut argv = [ptr::null_mut(); SubmitRecordsArgs::MIN];
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; out-pointers to locals.
    let status = unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data)
    };
    if status != sys::Status::napi_ok || data.is_null() {
        let refusal = Refusal::new(ERR_INVALID_ARG_TYPE, "submitRecords: a bad call");
        refusal.throw(env);
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments passed (`argc` may count more than were read)
    // are live values of this call.
    let outcome = unsafe {
        SubmitRecordsArgs::read(env, &argv[..argc.min(SubmitRecordsArgs::MIN)])
            .and_then(|args| submit_records(inner, env, &args))
    };
    // SAFETY: live env of this call.
    unsafe { uint32_or_throw(env, outcome) }
}

/// The body of `submitRecords`: how many tasks were queued (as `submitMany`).
///
/// # Safety
/// `env` must be the live env of the current call, and `args` read from its
/// arguments.
unsafe fn submit_records(
    inner: &Inner,
    env: sys::napi_env,
    args: &SubmitRecordsArgs,
) -> Result<u32, Refusal> {
    // SAFETY: live env and value; lib/engine/ keeps it reachable until the
    // chunk's last task is delivered, and checked it is not resizable.
    let whole = unsafe { binary::input_of(env, args.data) }?;
    let records = Records::new(&whole);
    let first = args.start as usize;
    // A record's offsets are in the whole; `data` begins at byte `at` of it.
    let within = |(from, to): (usize, usize)| {
        records.get(from.checked_sub(args.at)?, to.checked_sub(args.at)?)
    };
    let record = |index: usize| {
        args.cuts.range(first + index).and_then(within).ok_or_else(|| {
            Refusal::new(
                ERR_INVALID_ARG_TYPE,
                format!(
                    "submitRecords: record {} is not within the {} bytes from byte {}",
                    first + index,
                    records.len(),
                    args.at
                ),
            )
        })
    };
    // SAFETY: forwarded contract.
    unsafe { queue_chunk(inner, env, &args.batch, args.count as usize, record) }
}
