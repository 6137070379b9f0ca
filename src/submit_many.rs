//! `submitMany`: `postMany()` and `map()` on the native side, a whole chunk
//! of tasks in one N-API call; its arguments are declared by
//! [`SubmitManyArgs`].
//!
//! lib/engine/ checks a batch whole before anything is queued and keeps each
//! chunk's binaries reachable until the chunk's last task settles; a chunk's
//! tasks have consecutive slots from `firstSlot`. Here the chunk's binaries,
//! passed as arguments, are read into tasks that are queued under one lock
//! (`Pool::submit_many`).

use std::ptr;
use std::time::Instant;

use napi::sys;
use tidepool_core::kernels::{self, Packing};
use tidepool_core::{Input, Inputs, Mode, Packed, Task};

use crate::binary;
use crate::cancel_flag::flag_of;
use crate::inner::Inner;
use crate::refusal::uint32_or_throw;
use crate::wire::{self, submit_many_refusal, Refusal, SubmitManyArgs};

/// The `submitMany` function's callback (see [`SubmitManyArgs`]).
pub(crate) unsafe extern "C" fn submit_many_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = 0;
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; asks for the count only.
    let status = unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, ptr::null_mut(), ptr::null_mut(), &mut data)
    };
    if status != sys::Status::napi_ok || !SubmitManyArgs::takes(argc) || data.is_null() {
        SubmitManyArgs::bad_count().throw(env);
        return ptr::null_mut();
    }
    let mut argv = vec![ptr::null_mut(); argc];
    let mut got = argc;
    // SAFETY: as above; `argv` has room for `argc` values.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut got,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || got != argc {
        submit_many_refusal("could not read its arguments").throw(env);
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments are live values of this call, all of them read.
    let outcome =
        unsafe { SubmitManyArgs::read(env, &argv).and_then(|args| submit_many(inner, env, &args)) };
    // SAFETY: live env of this call.
    unsafe { uint32_or_throw(env, outcome) }
}

/// The body of `submitMany`: how many tasks were queued.
///
/// # Safety
/// `env` must be the live env of the current call, and `args` read from its
/// arguments.
unsafe fn submit_many(
    inner: &Inner,
    env: sys::napi_env,
    args: &SubmitManyArgs,
) -> Result<u32, Refusal> {
    // The binaries are arguments: no JavaScript runs between reading the
    // first and the last, so none can detach one already read. A refusal
    // names the binary by its index among the chunk's.
    let read = |index: usize| {
        // SAFETY: live env and value, kept reachable by lib/engine/ until
        // the chunk's last task is delivered.
        unsafe { binary::input_of(env, args.binaries[index]) }
            .map_err(|refusal| refusal.in_binary(index as u32))
    };
    let read_group = |first: usize, n: usize| listed(read, first, n);
    // SAFETY: forwarded contract.
    unsafe { queue_chunk(inner, env, args, args.binaries.len(), read, read_group) }
}

/// Inputs `first..first + n` as read by `read`, one value each.
pub(crate) fn listed(
    read: impl Fn(usize) -> Result<Input, Refusal>,
    first: usize,
    n: usize,
) -> Result<Inputs, Refusal> {
    let mut list = Vec::with_capacity(n);
    for index in first..first + n {
        list.push(read(index)?);
    }
    Ok(Inputs::list(list.into_boxed_slice()))
}

/// Queues a chunk of `count` inputs (`read(i)` gives input `i`, and
/// `read_group(first, n)` inputs `first..first + n` as a packed task's) as
/// the tasks of `args`' batch: one each, or `args.group` to a packed task, task
/// `i` in slot `args.first_slot + i`, all with the batch's flag and
/// params. Returns how many tasks were queued (the queue may fill part way).
/// `submitMany`'s and `submitRecords`' shared body.
///
/// # Safety
/// `env` must be the live env of the current call, and `args` read from its
/// arguments.
pub(crate) unsafe fn queue_chunk(
    inner: &Inner,
    env: sys::napi_env,
    args: &SubmitManyArgs,
    count: usize,
    read: impl Fn(usize) -> Result<Input, Refusal>,
    read_group: impl Fn(usize, usize) -> Result<Inputs, Refusal>,
) -> Result<u32, Refusal> {
    if inner.is_torn_down() {
        return Err(wire::shutting_down());
    }
    // SAFETY: live env/value.
    let flag = unsafe { flag_of(env, args.flag) }?;
    if count == 0 {
        return Ok(0);
    }
    let params = match args.params {
        None => Default::default(),
        // SAFETY: live env and value.
        Some(params) => unsafe { crate::params::take(env, params, args.kernel) }?,
    };
    let now = Instant::now();
    let group = args.group;
    // A packed task of a kernel whose outputs have lengths of their own
    // tells them after the outputs (lib/engine/batches.js splits by them).
    let sized = kernels::get(args.kernel).is_some_and(|k| k.facts().packing == Packing::Sized);
    let mut tasks = Vec::with_capacity(count.div_ceil(group));
    for (first, slot) in (0..count).step_by(group).zip((args.first_slot..).step_by(group)) {
        let (input, mode) = if group == 1 {
            (read(first)?, Mode::Once)
        } else {
            let inputs = read_group(first, group.min(count - first))?;
            (Input::Owned(Vec::new()), Mode::Packed(Box::new(Packed { inputs, sized })))
        };
        tasks.push(Task {
            slot,
            kernel: args.kernel,
            params: params.clone(),
            input,
            enqueued_at: now,
            cancel: Some(flag.clone()),
            timeout: args.timeout,
            max_output: args.max_output,
            mode,
        });
    }
    let all = tasks.len();
    let Some(_) = inner.pool().submit_many(&mut tasks) else {
        return Err(wire::closed());
    };
    let queued = all - tasks.len();
    inner.tasks_queued(queued);
    Ok(queued as u32)
}
