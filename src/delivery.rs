//! Completion delivery: the JS-thread side of the threadsafe function.
//!
//! Workers only push to the core's completion queue; the first push of a batch
//! triggers one `napi_call_threadsafe_function`. When Node runs [`deliver`] on
//! the JS thread, it takes everything that is ready, writes up to
//! [`BATCH_CAPACITY`] completions into memory shared with lib/engine/ (a
//! `Uint32Array` of `[slot, code << 24 | length]` pairs and a byte slab with
//! the results back to back, as wire/entries.rs declares them), and calls
//! lib/engine/'s batch callback once per such chunk. lib/engine/ then
//! settles every task of the chunk in a plain loop. No JS object is created
//! here per task with a small result.
//!
//! A result past [`SLAB_RESULT_MAX`] bytes does not go through the slab.
//! Its entry carries [`LARGE_CODE`] and the result is the next element of
//! an array of Buffers passed with the chunk, each made by
//! [`large_result`](crate::large_result) from the kernel's own vector.
//!
//! A result longer than any Buffer Node can make (`buffer.constants.MAX_LENGTH`,
//! which only a stream's task can reach) is never handed to Node: its entry
//! carries [`BUFFER_TOO_LARGE_CODE`] and the task rejects with Node's
//! `ERR_BUFFER_TOO_LARGE`.

use std::ffi::c_void;
use std::ptr;

use napi::sys;
use tidepool_core::Output;
use tidepool_core::PoolEvent;

use crate::inner::Inner;
use crate::large_result::{buffer_max_length, large_result};
use crate::wire::{
    meta_word, BatchCall, BATCH_CAPACITY, BUFFER_TOO_LARGE_CODE, LARGE_CODE, SLAB_BYTES,
};

/// Large-result bytes handed over per call into Node. Making a Buffer of a
/// large result (and settling its task) costs the JS thread time in
/// proportion to the results, so one call with a batch of them held the
/// event loop for milliseconds; past this budget the rest of the batch
/// waits for the next turn of the event loop (lib/engine/ asks for it with
/// `setImmediate`), so timers and I/O run in between.
const LARGE_BYTES_PER_CALL: usize = 4 << 20;
/// What each large result counts against that budget besides its bytes:
/// making its Buffer and settling its task cost the same whatever its
/// size, so without it a call of many small large results would hold the
/// event loop as long as one of many big ones.
const LARGE_RESULT_COST: usize = 64 * 1024;
/// How much more a byte costs when the pool's encoding makes a string of
/// each result (lib/engine/'s `toString('hex')` and the like).
const STRING_BYTE_COST: usize = 4;
/// Longest error text passed through the slab.
const MAX_ERROR_BYTES: usize = 1024;
/// Longest result copied through the slab; a longer one is lent to
/// JavaScript as a Buffer of its own. A Buffer lent from Rust costs an
/// external allocation and a finalizer (and work for the collector) where
/// a copy of a few KiB costs less: a task of many messages' digests (a
/// few KiB) goes through the slab. At most the slab, so that it always
/// fits an empty one.
pub(crate) const SLAB_RESULT_MAX: usize = SLAB_BYTES / 4;

/// The TSFN's `call_js` callback.
pub(crate) unsafe extern "C" fn deliver(
    env: sys::napi_env,
    _js: sys::napi_value,
    context: *mut c_void,
    _data: *mut c_void,
) {
    if env.is_null() || context.is_null() {
        return; // the TSFN is being finalized: nothing to deliver to
    }
    // SAFETY: `context` is the Rc<Inner> pointer owned by the TSFN, alive until
    // tsfn_finalize, which Node calls only after the last call_js.
    let inner = unsafe { &*(context as *const Inner) };
    // While a delivery is deferred to a later turn, lib/engine/'s scheduled
    // `deliver()` takes what the threads add meanwhile (Node may run this
    // callback many times in one turn: each would hand over a budget).
    if inner.is_torn_down() || inner.deferred.get() {
        return;
    }
    // SAFETY: we are on the JS thread of `inner.env` (== env).
    unsafe { deliver_batch(env, inner) };
}

/// Writes one completion into the shared arrays. Returns false if the slab
/// has no room for it (the chunk is then handed over first).
///
/// # Safety
/// `inner.meta` / `inner.slab` must point at the live shared arrays.
unsafe fn write_entry(
    inner: &Inner,
    index: usize,
    used: &mut usize,
    slot: u32,
    code: u8,
    bytes: &[u8],
) -> bool {
    if *used + bytes.len() > SLAB_BYTES {
        return false;
    }
    // SAFETY: index < BATCH_CAPACITY and the meta array has 2 * BATCH_CAPACITY
    // u32s; `used + len <= SLAB_BYTES`, the slab's checked minimum size. Only
    // the JS thread touches these arrays, and JS is not running right now.
    unsafe {
        *inner.meta.add(2 * index) = slot;
        *inner.meta.add(2 * index + 1) = meta_word(code, bytes.len());
        ptr::copy_nonoverlapping(bytes.as_ptr(), inner.slab.add(*used), bytes.len());
    }
    *used += bytes.len();
    true
}

/// Cuts `text` to at most `max` bytes on a character boundary.
fn truncate(text: &str, max: usize) -> &[u8] {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text.as_bytes()[..end]
}

/// # Safety
/// Must run on the JS thread of `env`, which must be `inner.env`.
pub(crate) unsafe fn deliver_batch(env: sys::napi_env, inner: &Inner) {
    let pool = inner.pool();
    // Never re-entered in practice (lib/engine/ calls `deliver()` from a
    // setImmediate, not from the batch callback); if it were, the outer
    // call delivers everything anyway.
    let Ok(mut scratch) = inner.scratch.try_borrow_mut() else {
        return;
    };
    let (batch, events) = &mut *scratch;
    // `take_completions` reports termination seen before the take, so a terminated
    // pool's last completions are always in this batch.
    let terminated = pool.take_completions(batch) && inner.is_closing();
    pool.take_events(events);
    // A worker made room in a full queue: call JS even with nothing else
    // to deliver, so posts waiting for room (queueFull: 'wait') get in.
    let room = pool.take_room_freed();
    if batch.is_empty() && events.is_empty() && !terminated && !room {
        return;
    }

    let mut scope = ptr::null_mut();
    // SAFETY: (whole block) JS thread, live env; every napi_value used was
    // created in this scope; `callback` is a reference created in this env.
    unsafe {
        sys::napi_open_handle_scope(env, &mut scope);
        let callback = inner.callback.value().unwrap_or(ptr::null_mut());
        let mut undefined = ptr::null_mut();
        sys::napi_get_undefined(env, &mut undefined);
        let mut events_arg = if events.is_empty() { undefined } else { events_to_js(env, events) };

        let max_length = buffer_max_length();
        let mut next = 0;
        // The budget spent so far in this call (see LARGE_BYTES_PER_CALL).
        let mut large_bytes = 0;
        loop {
            let mut count = 0;
            let mut used = 0;
            let mut large = undefined;
            let mut large_count = 0;
            while next < batch.len() && count < BATCH_CAPACITY && large_bytes < LARGE_BYTES_PER_CALL
            {
                let c = &mut batch[next];
                let slot = c.slot;
                let fits = match &mut c.outcome {
                    // Longer than any Buffer Node can make: refused here, with
                    // Node's error, before anything is asked of Node.
                    Ok(out) if out.as_bytes().len() > max_length => {
                        let fits = write_entry(
                            inner,
                            count,
                            &mut used,
                            slot,
                            BUFFER_TOO_LARGE_CODE,
                            max_length.to_string().as_bytes(),
                        );
                        if fits {
                            let bytes = std::mem::replace(out, Output::EMPTY)
                                .into_spilled()
                                .unwrap_or_default();
                            large_bytes += LARGE_RESULT_COST;
                            crate::reclaim::free(bytes);
                        }
                        fits
                    }
                    Ok(out) if out.as_bytes().len() > SLAB_RESULT_MAX => {
                        if large_count == 0 {
                            sys::napi_create_array(env, &mut large);
                        }
                        let bytes = std::mem::replace(out, Output::EMPTY)
                            .into_spilled()
                            .unwrap_or_default();
                        let per_byte = if inner.string_results { STRING_BYTE_COST } else { 1 };
                        large_bytes += LARGE_RESULT_COST + bytes.len() * per_byte;
                        define_element(env, large, large_count, large_result(env, bytes));
                        large_count += 1;
                        write_entry(inner, count, &mut used, slot, LARGE_CODE, &[])
                    }
                    Ok(out) => write_entry(inner, count, &mut used, slot, 0, out.as_bytes()),
                    Err(e) => {
                        let (code, detail) = crate::wire::encode_task_error(e);
                        write_entry(
                            inner,
                            count,
                            &mut used,
                            slot,
                            code,
                            truncate(&detail, MAX_ERROR_BYTES),
                        )
                    }
                };
                if !fits {
                    break;
                }
                count += 1;
                next += 1;
            }
            let last = next == batch.len();
            // Budget spent with completions left: they go in a later call,
            // which lib/engine/ schedules (and until which the threads' wake-ups
            // deliver nothing).
            let later = !last && large_bytes >= LARGE_BYTES_PER_CALL;
            inner.deferred.set(later);
            inner.tasks_done(count);
            if !callback.is_null() {
                let call = BatchCall {
                    count: count as u32,
                    events: events_arg,
                    terminated: last && terminated,
                    large,
                    later,
                };
                let argv = call.argv(env);
                let mut result = ptr::null_mut();
                let status = sys::napi_call_function(
                    env,
                    undefined,
                    callback,
                    argv.len(),
                    argv.as_ptr(),
                    &mut result,
                );
                if status != sys::Status::napi_ok {
                    // lib/engine/ never lets user code throw through here; if it
                    // happens anyway, report it as an uncaught exception and
                    // go on delivering the rest of the batch.
                    let mut error = ptr::null_mut();
                    if sys::napi_get_and_clear_last_exception(env, &mut error)
                        == sys::Status::napi_ok
                        && !error.is_null()
                    {
                        sys::napi_fatal_exception(env, error);
                    }
                }
            }
            events_arg = undefined;
            if last || later {
                break;
            }
        }
        // What was not delivered stays for the next call (which takes new
        // completions after it; a terminated pool is reported once the last
        // of them is delivered, as `take_completions` says so again then).
        batch.drain(..next);
        events.clear();
        if terminated && batch.is_empty() {
            inner.end_closing();
        }
        inner.update_hold();
        sys::napi_close_handle_scope(env, scope);
    }
}

/// `[{ type, threadId, threads, reason | error }]` for the thread events.
///
/// # Safety
/// JS thread of `env`, inside an open handle scope.
unsafe fn events_to_js(env: sys::napi_env, events: &[PoolEvent]) -> sys::napi_value {
    // SAFETY: as documented for this function; all values are created here.
    unsafe {
        let mut array = ptr::null_mut();
        sys::napi_create_array_with_length(env, events.len(), &mut array);
        for (i, e) in events.iter().enumerate() {
            let mut obj = ptr::null_mut();
            sys::napi_create_object(env, &mut obj);
            let (kind, thread_id, threads, text) = match e {
                PoolEvent::Spawn { thread_id, threads, reason } => {
                    ("spawn", Some(*thread_id), *threads, reason.as_str())
                }
                PoolEvent::Retire { thread_id, threads, reason } => {
                    ("retire", Some(*thread_id), *threads, reason.as_str())
                }
                PoolEvent::SpawnError { threads, error } => {
                    ("spawnError", None, *threads, error.as_str())
                }
            };
            set_str(env, obj, c"type", kind);
            if let Some(id) = thread_id {
                set_u32(env, obj, c"threadId", id);
                set_str(env, obj, c"reason", text);
            } else {
                set_str(env, obj, c"error", text);
            }
            set_u32(env, obj, c"threads", threads as u32);
            define_element(env, array, i as u32, obj);
        }
        array
    }
}

/// Defines `obj[key]` (or `obj[name]` when `key` is null) as an own data
/// property. `napi_set_element` / `napi_set_named_property` assign, and an
/// assignment runs (or is swallowed by) any accessor a caller put on
/// `Array.prototype` or `Object.prototype` for that key: a large result or
/// an event would then never reach lib/engine/.
///
/// # Safety
/// JS thread of `env`; `obj`, `value` (and `name`, when used) live values.
unsafe fn define(
    env: sys::napi_env,
    obj: sys::napi_value,
    key: *const std::ffi::c_char,
    name: sys::napi_value,
    value: sys::napi_value,
) {
    let descriptor = sys::napi_property_descriptor {
        utf8name: key,
        name,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
            | sys::PropertyAttributes::enumerable
            | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    // SAFETY: as documented; one descriptor that outlives the call.
    unsafe { sys::napi_define_properties(env, obj, 1, &descriptor) };
}

/// `array[index] = value`, defined (see [`define`]).
///
/// # Safety
/// As [`define`].
unsafe fn define_element(
    env: sys::napi_env,
    array: sys::napi_value,
    index: u32,
    value: sys::napi_value,
) {
    let text = index.to_string();
    let mut name = ptr::null_mut();
    // SAFETY: JS thread, live env; `text` is ASCII of the given length.
    unsafe {
        sys::napi_create_string_utf8(
            env,
            text.as_ptr() as *const _,
            text.len() as isize,
            &mut name,
        );
        define(env, array, ptr::null(), name, value);
    }
}

unsafe fn set_str(env: sys::napi_env, obj: sys::napi_value, key: &std::ffi::CStr, value: &str) {
    let mut v = ptr::null_mut();
    // SAFETY: JS thread, live env and object; `value` is valid UTF-8 of the given length.
    unsafe {
        sys::napi_create_string_utf8(env, value.as_ptr() as *const _, value.len() as isize, &mut v);
        define(env, obj, key.as_ptr(), ptr::null_mut(), v);
    }
}

unsafe fn set_u32(env: sys::napi_env, obj: sys::napi_value, key: &std::ffi::CStr, value: u32) {
    let mut v = ptr::null_mut();
    // SAFETY: JS thread, live env and object.
    unsafe {
        sys::napi_create_uint32(env, value, &mut v);
        define(env, obj, key.as_ptr(), ptr::null_mut(), v);
    }
}
