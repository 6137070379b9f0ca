//! The errors the raw functions throw (see the module doc of `wire`, the
//! boundary they are part of).

use napi::sys;

use crate::napi_util::throw_placed;

/// Why a raw function refuses a call: the `code` and message of the error
/// it throws ([`Refusal::throw`]: a `TypeError` for
/// [`ERR_INVALID_ARG_TYPE`] and [`ERR_INVALID_STATE`], as Node throws
/// them, an `Error` otherwise), and for a detached binary its place.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) code: &'static str,
    pub(crate) message: String,
    /// Where the detached binary is, when that is the reason: lib/ names
    /// it from this (lib/engine/binary.js `refusalOf`) instead of looking
    /// for it again.
    pub(crate) place: Option<Place>,
}

/// A binary's place in a raw call: the error's `binary` (which of the
/// call's binaries: 0 for `submit`, the index among a chunk's for
/// `submitMany`) and `part` (its element in an Array; -1: not in one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) binary: u32,
    pub(crate) part: i32,
}

impl Refusal {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal { code, message: message.into(), place: None }
    }

    /// The binary at `part` of a call's binary is detached.
    pub(crate) fn detached(part: i32) -> Refusal {
        Refusal {
            code: ERR_INVALID_STATE,
            message: "the binary's ArrayBuffer is detached".to_owned(),
            place: Some(Place { binary: 0, part }),
        }
    }

    /// This refusal was met reading the call's binary number `binary`.
    pub(crate) fn in_binary(mut self, binary: u32) -> Refusal {
        if let Some(place) = &mut self.place {
            place.binary = binary;
        }
        self
    }

    /// Throws it as a JS error (see [`throw_placed`]).
    pub(crate) fn throw(&self, env: sys::napi_env) {
        throw_placed(env, self.code, &self.message, self.place.map(|p| (p.binary, p.part)));
    }

    /// As a napi-rs error, for the napi-rs methods (`CODE: message`).
    pub(crate) fn into_napi(self) -> napi::Error {
        napi::Error::new(napi::Status::InvalidArg, format!("{}: {}", self.code, self.message))
    }
}

/// What a raw function returns: `number`, or `undefined` after throwing the
/// refusal it met.
///
/// # Safety
/// `env` must be the live env of the current call.
pub(crate) unsafe fn uint32_or_throw(
    env: sys::napi_env,
    outcome: Result<u32, Refusal>,
) -> sys::napi_value {
    match outcome {
        Ok(number) => {
            let mut result = std::ptr::null_mut();
            // SAFETY: live env; out-pointer to a local.
            unsafe { sys::napi_create_uint32(env, number, &mut result) };
            result
        }
        Err(refusal) => {
            refusal.throw(env);
            std::ptr::null_mut()
        }
    }
}

/// An argument is not what the function takes: the count, a number, a
/// handle, a binary.
pub(crate) const ERR_INVALID_ARG_TYPE: &str = "ERR_INVALID_ARG_TYPE";
/// A binary's ArrayBuffer is detached ([`Refusal::detached`]: lib/engine/
/// then throws post()'s own error for it, at the refusal's place).
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
    Refusal::new(ERR_TIDEPOOL_CLOSED, "The pool is closed and accepts no new tasks")
}

/// The environment is being torn down: nothing is touched any more.
pub(crate) fn shutting_down() -> Refusal {
    Refusal::new(ERR_TIDEPOOL_CLOSED, "the environment is shutting down")
}
