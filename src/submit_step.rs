//! `submitStep`, the N-API call that queues one step of a stream's chunk
//! (lib/streams/tasks.js through lib/engine/); its arguments are declared by
//! [`SubmitStepArgs`].

use std::ptr;
use std::time::Instant;

use napi::sys;
use tidepool_core::{Mode, Refused, Stream, StreamChunk, Task};

use crate::binary;
use crate::inner::Inner;
use crate::napi_util::throw;
use crate::refusal::uint32_or_throw;
use crate::wire::{self, Refusal, SubmitStepArgs, ERR_INVALID_ARG_TYPE};

/// The `submitStep` function's callback (see [`SubmitStepArgs`]).
pub(crate) unsafe extern "C" fn submit_step_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = SubmitStepArgs::MAX;
    let mut argv = [ptr::null_mut(); SubmitStepArgs::MAX];
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; out-pointers to locals.
    let status = unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data)
    };
    if status != sys::Status::napi_ok || data.is_null() {
        throw(env, ERR_INVALID_ARG_TYPE, SubmitStepArgs::USAGE);
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments passed (`argc` may count more than were read)
    // are live values of this call.
    let outcome = unsafe {
        SubmitStepArgs::read(env, &argv[..argc.min(SubmitStepArgs::MAX)])
            .and_then(|args| submit_step(inner, env, args))
    };
    // SAFETY: live env of this call.
    unsafe { uint32_or_throw(env, outcome) }
}

/// The body of `submitStep`: the queue length after the task was queued,
/// or 0 when the queue was full (nothing queued).
///
/// # Safety
/// `env` must be the live env of the current call, and `args` read from its
/// arguments.
unsafe fn submit_step(
    inner: &Inner,
    env: sys::napi_env,
    args: SubmitStepArgs,
) -> Result<u32, Refusal> {
    // SAFETY: live env and value.
    let stream =
        unsafe { crate::handles::shared::<Stream>(env, args.stream) }.ok_or_else(|| {
            Refusal::new(
                ERR_INVALID_ARG_TYPE,
                "submitStep: the stream must be a handle from newStream()",
            )
        })?;
    if inner.is_torn_down() {
        return Err(wire::shutting_down());
    }
    // SAFETY: live env and value; lib/engine/ keeps `data` reachable until the
    // completion for `slot` is delivered.
    let input = unsafe { binary::input_of(env, args.data) }?;
    let mut task = Task::new(args.slot, stream.kernel(), input, Instant::now());
    task.mode = Mode::Stream(Box::new(StreamChunk {
        stream,
        seq: args.seq,
        end: args.end,
        budget: args.budget,
    }));
    task.cancel = args.flag.clone();
    let queued = match inner.pool().submit(task) {
        Ok(queued) => queued,
        Err(Refused::Full(_)) => return Ok(0),
        Err(Refused::Closed(_)) => return Err(wire::closed()),
    };
    inner.task_queued();
    Ok(queued.min(u32::MAX as usize) as u32)
}
