//! The batch delivery: the meta array, the slab and the batch callback's
//! arguments.

use std::ptr;

use napi::sys;
use tidepool_core::kernels::INLINE;

// lib/engine/ allocates a `Uint32Array` of `2 * BATCH_CAPACITY` (the meta
// array) and a Buffer of `SLAB_BYTES` (the slab), as `batchLayout()` says,
// and passes both to `new NativePool()`. Per call of its batch callback,
// entry `i` of the call is `meta[2 * i]` (the task's slot) and
// `meta[2 * i + 1]` (its meta word, [`meta_word`]); the entries' bytes lie
// in the slab back to back from offset 0, in entry order.

/// Completions handed to JavaScript per callback.
pub const BATCH_CAPACITY: usize = 256;
/// Result bytes per callback: room for a full chunk of the largest digests.
pub const SLAB_BYTES: usize = BATCH_CAPACITY * INLINE;
/// The code of an entry whose result is the next large Buffer (task error
/// codes are small numbers; 0 is a result in the slab).
pub const LARGE_CODE: u8 = 255;
/// The code of an entry whose result was longer than any Buffer Node can
/// make ([`buffer_max_length`](crate::large_result::buffer_max_length)):
/// the task rejects with Node's `ERR_BUFFER_TOO_LARGE`, the limit in the
/// entry's text. Not a task error of the core (`wire/task_error.rs numbers
/// those from 1): the kernel succeeded, and only the delivery refuses its
/// result.
pub const BUFFER_TOO_LARGE_CODE: u8 = 254;

/// Where the code starts in a meta word; below it, the entry's length.
pub(crate) const CODE_SHIFT: u32 = 24;
/// The length bits of a meta word.
pub(crate) const LENGTH_MASK: u32 = (1 << CODE_SHIFT) - 1;
// No entry is longer than the slab, so every length fits its bits.
const _: () = assert!(SLAB_BYTES <= LENGTH_MASK as usize);

/// The meta word of an entry: `code << 24 | length`. Code 0: the result,
/// `length` bytes in the slab; a task error's code (`taskErrorCodes()`):
/// its detail text (UTF-8) in the slab; [`LARGE_CODE`]: no bytes, the
/// result is the next Buffer of the call's `large`;
/// [`BUFFER_TOO_LARGE_CODE`]: the limit, in decimal, in the slab.
pub(crate) fn meta_word(code: u8, length: usize) -> u32 {
    (code as u32) << CODE_SHIFT | length as u32
}

/// The arguments of lib/engine/'s batch callback, in order:
/// `onBatch(count, events, terminated, large, later)`, called with
/// `undefined` as `this`.
pub(crate) struct BatchCall {
    /// 0: the entries written into the meta array and slab for this call.
    pub(crate) count: u32,
    /// 1: the thread events since the last call, an Array of `{ type,
    /// threadId, threads, reason }` / `{ type: 'spawnError', threads,
    /// error }`, or `undefined` (no events, or not the first call of a
    /// batch).
    pub(crate) events: sys::napi_value,
    /// 2: the pool has terminated after close() or destroy(), and this
    /// call holds its last completions.
    pub(crate) terminated: bool,
    /// 3: an Array of Buffers, one per [`LARGE_CODE`] entry in entry order
    /// (an element is `undefined` when its Buffer could not be made), or
    /// `undefined` when there is none.
    pub(crate) large: sys::napi_value,
    /// 4: completions are left for a later turn of the event loop:
    /// lib/engine/ calls `deliver()` from a `setImmediate`.
    pub(crate) later: bool,
}

impl BatchCall {
    /// The callback's `argv`.
    ///
    /// # Safety
    /// JS thread of the live `env`, inside an open handle scope.
    pub(crate) unsafe fn argv(&self, env: sys::napi_env) -> [sys::napi_value; 5] {
        let mut argv = [ptr::null_mut(); 5];
        // SAFETY: as documented; out-pointers into a local array.
        unsafe {
            sys::napi_create_uint32(env, self.count, &mut argv[0]);
            argv[1] = self.events;
            sys::napi_get_boolean(env, self.terminated, &mut argv[2]);
            argv[3] = self.large;
            sys::napi_get_boolean(env, self.later, &mut argv[4]);
        }
        argv
    }
}
