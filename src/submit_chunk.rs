//! `submitChunk`, the N-API call that queues one step of a stream's chunk
//! (lib/stream-tasks.js through lib/pool.js).

use std::ptr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use napi::sys;
use tidepool_core::{ChunkEnd, Mode, Refused, Stream, StreamChunk, Task};

use crate::binary;
use crate::inner::Inner;
use crate::napi_util::throw;
use crate::wire::Refusal;

/// `submitChunk(slot, stream, data, end, budget, seq)`: queues one step of
/// chunk `seq` of `stream` (a handle from `newStream()`): `data` (a binary
/// or an Array of binaries, kept reachable by lib/pool.js until the task is
/// delivered), then `end` (-1: the stream's last chunk, 0: nothing, a
/// flush kind the codec checked in JS); the task stops once its output
/// passes `budget` bytes. The task can always be cancelled alone
/// (`cancel([slot])`: the stream's `destroy()`). Returns the queue length
/// after it, or 0 when the queue was full.
pub(crate) unsafe extern "C" fn submit_chunk_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 6;
    let mut argv = [ptr::null_mut(); 6];
    let mut data = ptr::null_mut();
    // SAFETY: live env and callback info of this call; out-pointers to locals.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
    if status != sys::Status::napi_ok || argc < 6 || data.is_null() {
        throw(env, "ERR_INVALID_ARG_TYPE", "submitChunk(slot, stream, data, end, budget, seq) takes six arguments");
        return ptr::null_mut();
    }
    // SAFETY: `data` is the Rc<Inner> share owned by this function object,
    // alive for as long as the function can be called.
    let inner = unsafe { &*(data as *const Inner) };
    // SAFETY: the arguments are live values of this call.
    match unsafe { submit_chunk(inner, env, argv) } {
        Ok(queued) => {
            let mut result = ptr::null_mut();
            // SAFETY: live env; out-pointer to a local.
            unsafe { sys::napi_create_uint32(env, queued, &mut result) };
            result
        }
        Err((code, message)) => {
            throw(env, code, &message);
            ptr::null_mut()
        }
    }
}

/// # Safety
/// `env` and `argv` must be the live env and arguments of the current call.
unsafe fn submit_chunk(inner: &Inner, env: sys::napi_env, argv: [sys::napi_value; 6]) -> Result<u32, Refusal> {
    let mut slot = 0u32;
    let mut end = 0i32;
    let mut budget = 0.0f64;
    let mut seq = 0.0f64;
    // SAFETY: live env and values; out-pointers to locals.
    let numbers_ok = unsafe {
        sys::napi_get_value_uint32(env, argv[0], &mut slot) == sys::Status::napi_ok
            && sys::napi_get_value_int32(env, argv[3], &mut end) == sys::Status::napi_ok
            && sys::napi_get_value_double(env, argv[4], &mut budget) == sys::Status::napi_ok
            && sys::napi_get_value_double(env, argv[5], &mut seq) == sys::Status::napi_ok
    };
    let in_range = seq >= 0.0 && budget >= 1.0;
    if !numbers_ok || !in_range {
        return Err(("ERR_INVALID_ARG_TYPE", "submitChunk: slot, end, budget and seq must be numbers".to_owned()));
    }
    // SAFETY: live env and value.
    let stream = unsafe { crate::handles::shared::<Stream>(env, argv[1]) }
        .ok_or(("ERR_INVALID_ARG_TYPE", "submitChunk: the stream must be a handle from newStream()".to_owned()))?;
    if inner.is_torn_down() {
        return Err(("ERR_TIDEPOOL_CLOSED", "the environment is shutting down".to_owned()));
    }
    // SAFETY: live env and value; lib/pool.js keeps `data` reachable until the
    // completion for `slot` is delivered.
    let input = unsafe { binary::input_of(env, argv[2]) }?;
    let end = match end {
        -1 => ChunkEnd::Last,
        0 => ChunkEnd::More,
        kind => ChunkEnd::Flush(kind as u32),
    };
    let budget = if budget.is_finite() { budget as usize } else { usize::MAX };
    let mut task = Task::new(slot, stream.kernel(), input, Instant::now());
    task.mode = Mode::Stream(Box::new(StreamChunk { stream, seq: seq as u64, end, budget }));
    let flag = Arc::new(AtomicBool::new(false));
    task.cancel = Some(flag.clone());
    let queued = match inner.pool().submit(task) {
        Ok(queued) => queued,
        Err(Refused::Full(_)) => return Ok(0),
        Err(Refused::Closed(_)) => return Err(("ERR_TIDEPOOL_CLOSED", "The pool is closed and accepts no new tasks".to_owned())),
    };
    inner.task_queued(slot, Some(flag));
    Ok(queued.min(u32::MAX as usize) as u32)
}
