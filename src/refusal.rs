//! The errors the raw functions throw (see the module doc of `wire`, the
//! boundary they are part of).

/// Why a raw function refuses a call: the `code` and message of the error
/// it throws ([`throw`](crate::napi_util::throw): a `TypeError` for
/// [`ERR_INVALID_ARG_TYPE`] and [`ERR_INVALID_STATE`], as Node throws
/// them, an `Error` otherwise).
pub(crate) type Refusal = (&'static str, String);

/// An argument is not what the function takes: the count, a number, a
/// handle, a binary.
pub(crate) const ERR_INVALID_ARG_TYPE: &str = "ERR_INVALID_ARG_TYPE";
/// A binary's ArrayBuffer is detached (lib/engine/ then throws post()'s own
/// error for it).
pub(crate) const ERR_INVALID_STATE: &str = "ERR_INVALID_STATE";
/// The pool accepts no new tasks ([`closed`]), or its environment is
/// shutting down ([`shutting_down`]).
pub(crate) const ERR_TIDEPOOL_CLOSED: &str = "ERR_TIDEPOOL_CLOSED";
/// What a correct lib/ never meets: a handle that could not be made,
/// parameters made for another kernel or already given to a task.
pub(crate) const ERR_TIDEPOOL_INTERNAL: &str = "ERR_TIDEPOOL_INTERNAL";
/// `streamInline()` could not allocate its output.
pub(crate) const ERR_MEMORY_ALLOCATION_FAILED: &str = "ERR_MEMORY_ALLOCATION_FAILED";

/// The pool was closed or destroyed: no task is queued.
pub(crate) fn closed() -> Refusal {
    (ERR_TIDEPOOL_CLOSED, "The pool is closed and accepts no new tasks".to_owned())
}

/// The environment is being torn down: nothing is touched any more.
pub(crate) fn shutting_down() -> Refusal {
    (ERR_TIDEPOOL_CLOSED, "the environment is shutting down".to_owned())
}
