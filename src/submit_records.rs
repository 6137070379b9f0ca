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
use tidepool_core::{Input, Inputs, RawSlice, Records};

use crate::binary;
use crate::inner::Inner;
use crate::refusal::uint32_or_throw;
use crate::submit_many::{listed, queue_chunk};
use crate::wire::{Cuts, Refusal, SubmitRecordsArgs, ERR_INVALID_ARG_TYPE};

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
    let outside = |index: usize| {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            format!(
                "submitRecords: record {} is not within the {} bytes from byte {}",
                first + index,
                records.len(),
                args.at
            ),
        )
    };
    // Record `index` of the chunk: its bytes in `data` (a record's offsets
    // are in the whole, and `data` begins at byte `at` of it), checked.
    let bounds = |index: usize| {
        args.cuts
            .range(first + index)
            .and_then(|(from, to)| Some((from.checked_sub(args.at)?, to.checked_sub(args.at)?)))
            .filter(|&(from, to)| from <= to && to <= records.len())
            .ok_or_else(|| outside(index))
    };
    let record = |index: usize| {
        let (from, to) = bounds(index)?;
        records.get(from, to).ok_or_else(|| outside(index))
    };
    // A packed task's records of one slice are cut where it runs: no value
    // per record here.
    let read_group = |start: usize, n: usize| match &whole {
        Input::One(slice) => cut_in(slice, bounds, &args.cuts, start, n),
        _ => listed(record, start, n),
    };
    // SAFETY: forwarded contract.
    unsafe { queue_chunk(inner, env, &args.batch, args.count as usize, record, read_group) }
}

/// Records `start..start + n` (at least one) of `slice`, whose bytes
/// `bounds` gives and checks, as a packed task's inputs.
fn cut_in(
    slice: &RawSlice,
    bounds: impl Fn(usize) -> Result<(usize, usize), Refusal>,
    cuts: &Cuts,
    start: usize,
    n: usize,
) -> Result<Inputs, Refusal> {
    let (from, _) = bounds(start)?;
    let last = start + n - 1;
    let (inputs, to) = match *cuts {
        // Every record between the first and the last is within as they are.
        Cuts::Fixed(each) => {
            // (Refused: the error names the first record that is not within.)
            let (_, to) = bounds(last)
                .map_err(|e| (start..last).find_map(|index| bounds(index).err()).unwrap_or(e))?;
            (Inputs::even(slice.range(from, to), each, n), to)
        }
        // Each record begins where the one before it ends.
        Cuts::Offsets(_) => {
            let mut ends = Vec::with_capacity(n);
            for index in start..=last {
                ends.push(bounds(index)?.1 - from);
            }
            let to = from + ends[n - 1];
            (Inputs::cut(slice.range(from, to), ends.into_boxed_slice()), to)
        }
    };
    inputs.ok_or_else(|| {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            format!("submitRecords: records {start}..={last} are not back to back in bytes {from}..{to}"),
        )
    })
}
