//! The wire between lib/ and this binding: what the JavaScript side must
//! agree with byte for byte, declared in this one file (lib/ mirrors it).
//!
//! * The raw functions' positional arguments. `submit`, `submitMany`,
//!   `submitStep` and `makeParams` are plain N-API functions, not napi-rs
//!   methods, so nothing checks their arguments but the code here: for each
//!   one a struct below is its table, one field per argument in order, and
//!   that struct's `read` is the only code that looks at the arguments.
//! * The errors they throw: [`Refusal`], the codes, the shared messages.
//! * How a failed task's error is encoded for lib/errors.js.
//! * Slots (below).
//! * The batch delivery: the meta array, the slab, the batch callback.
//!
//! What the `#[napi]` functions and methods take and return is declared by
//! their Rust signatures, which napi-rs converts and checks (src/binding.d.ts
//! is what it makes of them).
//!
//! # Slots
//!
//! A task's slot is a uint32 that lib/engine/ chooses. The binding never
//! reads anything into it: it hands it back in the meta entry of the task's
//! completion, and in what `destroy()`, `cancelFlagged()`,
//! `cancelAllFlagged()` and `dropOldest()` return. `submitMany` gives its task
//! `i` the slot `firstSlot + i` and refuses a chunk whose last slot would
//! not fit a uint32. (lib/engine/ numbers single tasks from 0 and a batch's
//! tasks from 2^31, chunk by chunk; the binding relies on neither.)
//!
//! # Other answers
//!
//! Declared where they are made, as they have no arguments to read:
//! `kernelTable()` (a kernel's facts per line, in id order; lib.rs),
//! `loadKernelLibrary()` / `loadKernelHandle()` (`"<first id> <count>"` or
//! `"!<CODE> <message>"`; loader.rs), a refused `makeParams` (an Array
//! `[kind, name, expected]`; params.rs), `streamReport()` (the core's
//! `Report::pack`: input bytes taken × 4 + 0 done, 1 paused, 2 ended;
//! streams.rs) and `streamInline()` (a Buffer, or the string `"<code>
//! <detail>"` of the task error that ended the stream; streams.rs).
//!
//! The files: `args.rs` (one table per raw function), `entries.rs` (the batch
//! delivery's meta words, slab and callback arguments), `task_error.rs`
//! (a failed task's code and detail text); the errors the raw functions
//! throw are src/refusal.rs's, below the wire.

mod args;
mod entries;
mod records;
mod task_error;

pub(crate) use args::*;
pub(crate) use entries::*;
pub(crate) use records::*;
// Refusals live below the wire (src/refusal.rs): what reads a handle for
// it (cancel_flag.rs) refuses with them too.
pub(crate) use crate::refusal::*;
pub(crate) use task_error::{code as task_code, encode as encode_task_error};
