//! A large result becomes a Buffer: the kernel's own output vector, lent
//! to JavaScript as an external buffer and freed by its finalizer when the
//! Buffer is collected, so nothing is copied between the kernel and
//! JavaScript (the choice and its measurements are in
//! docs/benchmarks-history.md, "Large results"). Where external buffers are
//! not allowed (some embedders refuse them, and the `copy-large-results`
//! feature forces this for measuring), the vector is copied once into a
//! Buffer Node allocates.
//!
//! Node refuses a Buffer longer than `buffer.constants.MAX_LENGTH` by
//! calling its finalizer before returning; the delivery never asks for one
//! (see [`buffer_max_length`]), and [`lend`] survives it anyway, which
//! `probeBufferRefusal` lets a test check against a real Node.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use napi::sys;

/// The longest Buffer Node can make (`buffer.constants.MAX_LENGTH`): no
/// larger result is ever handed to `napi_create_external_buffer`, which
/// refuses it in a way that frees the memory it was lent (see [`lend`]).
/// lib/addon/binding.js sets it when it loads the addon ([`set_buffer_max_length`]);
/// until then, 1 GiB, less than any 64-bit Node's (a smaller limit only
/// refuses a result Node could have held, never crashes).
static BUFFER_MAX_LENGTH: AtomicUsize = AtomicUsize::new(1 << 30);

/// See [`BUFFER_MAX_LENGTH`].
pub(crate) fn buffer_max_length() -> usize {
    BUFFER_MAX_LENGTH.load(Ordering::Relaxed)
}

/// Sets [`BUFFER_MAX_LENGTH`] for the process: lib/addon/binding.js passes
/// `buffer.constants.MAX_LENGTH`; a test passes less, to see a result past
/// the limit refused without making one of gigabytes.
pub(crate) fn set_buffer_max_length(max: usize) {
    BUFFER_MAX_LENGTH.store(max, Ordering::Relaxed);
}

/// A large result lent to JavaScript: the kernel's vector, boxed (the box's
/// address is the finalizer's hint), and how far the lending went, which
/// decides who frees the box.
struct Lent {
    bytes: Vec<u8>,
    stage: AtomicU8,
}

/// `napi_create_external_buffer` is running.
const CREATING: u8 = 0;
/// The Buffer exists: its finalizer frees the box.
const ARMED: u8 = 1;
/// The finalizer ran during a creation that failed (Node calls it before
/// returning when it refuses the length, node_buffer.cc `Buffer::New`) and
/// freed nothing: the box is [`lend`]'s again, and Node forgot it.
const FINALIZED_DURING_CALL: u8 = 2;
/// The creation failed after Node took the finalizer, which has not run
/// yet (a Node that defers it to an immediate, or a failure past the
/// length check): the finalizer frees the box when it runs.
const ABANDONED: u8 = 3;

/// What [`lend`] made of a large result.
struct Lending {
    /// The Buffer, when Node made it.
    buffer: Option<sys::napi_value>,
    /// The vector, when Node refused it and will never touch it again.
    back: Option<Vec<u8>>,
    /// `napi_create_external_buffer`'s status.
    status: sys::napi_status,
    /// Node called the finalizer before the creation returned.
    finalized_during_call: bool,
}

/// Lends `bytes` to JavaScript as an external Buffer, without a copy.
/// Never called with more than [`buffer_max_length`] bytes by the delivery;
/// [`probe_refusal`] calls it with more on purpose.
///
/// # Safety
/// JS thread of `env`, inside an open handle scope.
unsafe fn lend(env: sys::napi_env, bytes: Vec<u8>) -> Lending {
    let len = bytes.len();
    let data = bytes.as_ptr() as *mut c_void;
    let lent = Box::into_raw(Box::new(Lent { bytes, stage: AtomicU8::new(CREATING) }));
    let mut buffer = ptr::null_mut();
    // SAFETY: `data` points at `len` initialized bytes owned by `*lent`,
    // whose heap memory moves with neither the box nor its vector and which
    // nothing writes. The box is the finalizer's to free once the Buffer
    // exists; before that (or if it never does) `stage` says whose it is.
    let status = unsafe {
        sys::napi_create_external_buffer(env, len, data, Some(free_large), lent.cast(), &mut buffer)
    };
    // SAFETY: until one side frees it, the box is alive: the finalizer frees
    // it only past CREATING, which only this function leaves below.
    let stage = unsafe { &(*lent).stage };
    if status == sys::Status::napi_ok {
        // Node calls the finalizer only when the Buffer is collected (not
        // before this handle scope closes) or at environment teardown (not
        // during a call on the JS thread): it has not run.
        stage.store(ARMED, Ordering::Release);
        return Lending { buffer: Some(buffer), back: None, status, finalized_during_call: false };
    }
    // The failed call may have thrown (Node's ERR_BUFFER_TOO_LARGE): the
    // caller decides what the task gets, so nothing stays pending.
    let mut error = ptr::null_mut();
    // SAFETY: JS thread of `env`.
    unsafe { sys::napi_get_and_clear_last_exception(env, &mut error) };
    // Whether Node kept the finalizer: the statuses below are returned
    // before napi_create_external_buffer makes its finalizer record (its
    // preamble, its argument checks, an embedder without external buffers);
    // a pending exception after the record was made comes with a Buffer.
    let never_taken = matches!(
        status,
        sys::Status::napi_invalid_arg
            | sys::Status::napi_no_external_buffers_allowed
            | sys::Status::napi_cannot_run_js
    ) || (status == sys::Status::napi_pending_exception && buffer.is_null());
    match stage.compare_exchange(CREATING, ABANDONED, Ordering::AcqRel, Ordering::Acquire) {
        // The finalizer will run later and free the box, vector included.
        Ok(_) if !never_taken => {
            Lending { buffer: None, back: None, status, finalized_during_call: false }
        }
        // Node never had the box, or already gave it back.
        Ok(_) | Err(_) => {
            // SAFETY: FINALIZED_DURING_CALL: Node called the finalizer once,
            // which left the box alone, and calls it no more; `never_taken`:
            // Node never kept the hint. Either way the box is ours alone.
            let lent = unsafe { Box::from_raw(lent) };
            let finalized_during_call = lent.stage.load(Ordering::Acquire) == FINALIZED_DURING_CALL;
            Lending { buffer: None, back: Some(lent.bytes), status, finalized_during_call }
        }
    }
}

/// The finalizer of a large result's Buffer: frees the kernel's vector,
/// unless Node calls it while refusing the Buffer (see [`lend`]).
unsafe extern "C" fn free_large(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    let lent = hint.cast::<Lent>();
    // SAFETY: `hint` is the box `lend` leaked for this Buffer only, alive
    // until freed below (ARMED, ABANDONED: this is its last use) or by
    // `lend` after this returns (CREATING: `lend` waits for the call).
    let stage = unsafe { &(*lent).stage };
    if stage
        .compare_exchange(CREATING, FINALIZED_DURING_CALL, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        return; // the creation is failing: the box goes back to `lend`
    }
    // SAFETY: ARMED or ABANDONED: the finalizer owns the box, and Node
    // calls it once.
    let lent = unsafe { Box::from_raw(lent) };
    crate::reclaim::free(lent.bytes);
}

/// A large result as a Buffer: `bytes` itself, lent to JavaScript and freed
/// by [`free_large`] when the Buffer is collected; or, where external
/// buffers are refused, one copy; `undefined` when neither could be made
/// (lib/engine/ then rejects the task).
///
/// # Safety
/// JS thread of `env`, inside an open handle scope.
pub(crate) unsafe fn large_result(env: sys::napi_env, bytes: Vec<u8>) -> sys::napi_value {
    let mut value = ptr::null_mut();
    let len = bytes.len();
    let bytes = if cfg!(feature = "copy-large-results") || len > buffer_max_length() {
        Some(bytes)
    } else {
        // SAFETY: as documented for this function.
        let lending = unsafe { lend(env, bytes) };
        if let Some(buffer) = lending.buffer {
            return buffer;
        }
        lending.back
    };
    let copied = bytes.filter(|b| b.len() <= buffer_max_length()).is_some_and(|bytes| {
        // SAFETY: JS thread of `env`; `bytes` is valid for `len` bytes during the call.
        let status = unsafe {
            sys::napi_create_buffer_copy(
                env,
                len,
                bytes.as_ptr().cast(),
                ptr::null_mut(),
                &mut value,
            )
        };
        crate::reclaim::free(bytes);
        status == sys::Status::napi_ok
    });
    if !copied {
        // Out of memory: clear what the failed call may have thrown.
        let mut error = ptr::null_mut();
        // SAFETY: JS thread of `env`.
        unsafe { sys::napi_get_and_clear_last_exception(env, &mut error) };
        // SAFETY: JS thread of `env`.
        unsafe { sys::napi_get_undefined(env, &mut value) };
    }
    value
}

/// What `probeBufferRefusal(length)` saw: [`lend`] of `length` zero bytes
/// without the length check of the delivery, so that a test can watch
/// Node refuse a length past `buffer.constants.MAX_LENGTH` for real.
#[napi_derive::napi(object)]
pub struct BufferRefusal {
    /// Node made the Buffer (the length was not past its limit).
    pub created: bool,
    /// `napi_create_external_buffer`'s status.
    pub status: u32,
    /// Node called the finalizer before the creation returned.
    pub finalized_during_call: bool,
    /// The bytes of the vector handed back whole (0 if it was not).
    pub returned: f64,
}

/// See [`BufferRefusal`]. `None` when `length` zero bytes cannot be
/// allocated. They are never touched: `calloc`'s fresh pages cost no
/// memory until written, so a vector one byte past 4 GiB costs nothing.
///
/// # Safety
/// JS thread of `env`, inside an open handle scope.
pub(crate) unsafe fn probe_refusal(env: sys::napi_env, length: usize) -> Option<BufferRefusal> {
    let layout = std::alloc::Layout::array::<u8>(length).ok().filter(|l| l.size() > 0)?;
    // SAFETY: a layout of non-zero size.
    let data = unsafe { std::alloc::alloc_zeroed(layout) };
    if data.is_null() {
        return None;
    }
    // SAFETY: `length` zeroed (initialized) bytes just allocated by the
    // global allocator with the layout a Vec<u8> of that capacity has.
    let bytes = unsafe { Vec::from_raw_parts(data, length, length) };
    // SAFETY: as documented for this function.
    let lending = unsafe { lend(env, bytes) };
    Some(BufferRefusal {
        created: lending.buffer.is_some(),
        status: lending.status as u32,
        finalized_during_call: lending.finalized_during_call,
        returned: lending.back.map_or(0.0, |b| b.len() as f64),
    })
}
