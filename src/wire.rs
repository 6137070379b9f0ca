//! The wire between lib/ and this binding: what the JavaScript side must
//! agree with byte for byte, declared in this one file (lib/ mirrors it).

use tidepool_core::kernels::INLINE;

/// Why a raw function refuses a call: `(code, message)` of the error it
/// throws.
pub(crate) type Refusal = (&'static str, String);

// The batch delivery: the memory lib/pool.js shares with the delivery.

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
/// entry's text. Not a task error
/// of the core (`TaskError::code` numbers those from 1): the kernel
/// succeeded, and only the delivery refuses its result.
pub const BUFFER_TOO_LARGE_CODE: u8 = 254;
