//! How a failed task reaches JavaScript: the core's [`TaskError`] value,
//! encoded here (and only here) as a small code and a detail text, which
//! lib/errors.js's `taskError` turns into the Node-style error. The codes
//! go to lib/ by name (`taskErrorCodes()`); 0 is a result, and the
//! delivery's own codes (entries.rs) stay above them.

use std::borrow::Cow;

use tidepool_core::kernels::{format_errno, KernelError};
use tidepool_core::TaskError;

/// A task error's code in its meta word, by kind.
pub(crate) mod code {
    /// A kernel panicked (caught by the worker, or by a loaded library).
    pub(crate) const PANIC: u8 = 1;
    /// Stopped by its signal, its batch, or destroy().
    pub(crate) const CANCELLED: u8 = 2;
    /// The kernel refused the input.
    pub(crate) const INVALID_INPUT: u8 = 3;
    /// Waited longer than maxQueueAgeMs; never ran.
    pub(crate) const EXPIRED: u8 = 4;
    /// Ran longer than its timeoutMs.
    pub(crate) const TIMED_OUT: u8 = 5;
    /// Its output would pass maxOutputBytes.
    pub(crate) const TOO_LARGE: u8 = 6;
    /// Corrupt or truncated for the kernel's format.
    pub(crate) const FORMAT: u8 = 7;
    /// A loaded kernel failed with its own code.
    pub(crate) const FAILED: u8 = 8;
    /// postFile() could not read its file.
    pub(crate) const IO: u8 = 9;
    /// A packed result of another length than the batch's others.
    pub(crate) const UNEQUAL_LENGTH: u8 = 10;
}

/// The code and detail text of `error`. The detail's shape depends on the
/// code: for TOO_LARGE the limit in decimal; for FORMAT "CODE ERRNO
/// message" (node:zlib's errno for the code, 0: none); for FAILED "CODE
/// message"; for IO "syscall errno name"; for UNEQUAL_LENGTH "expected
/// got" in decimal; otherwise the words (lib/ makes
/// its own message for CANCELLED, EXPIRED and TIMED_OUT).
pub(crate) fn encode(error: &TaskError) -> (u8, Cow<'_, str>) {
    match error {
        TaskError::Panic(m) => (code::PANIC, m.into()),
        TaskError::Expired => {
            (code::EXPIRED, "the task waited in the queue longer than maxQueueAgeMs".into())
        }
        TaskError::UnequalLength { expected, got } => {
            (code::UNEQUAL_LENGTH, format!("{expected} {got}").into())
        }
        TaskError::Kernel(e) => match e {
            KernelError::Panic(m) => (code::PANIC, m.into()),
            KernelError::Cancelled => (code::CANCELLED, "the task was cancelled".into()),
            KernelError::InvalidInput(m) => (code::INVALID_INPUT, m.into()),
            KernelError::TimedOut => {
                (code::TIMED_OUT, "the task ran longer than its timeoutMs".into())
            }
            KernelError::TooLarge { limit } => (code::TOO_LARGE, limit.to_string().into()),
            KernelError::Format { code, message } => (
                code::FORMAT,
                format!("{code} {} {message}", format_errno(code).unwrap_or(0)).into(),
            ),
            KernelError::Failed { code, message } => {
                (code::FAILED, format!("{code} {message}").into())
            }
            KernelError::Io { syscall, errno, name } => {
                (code::IO, format!("{syscall} {errno} {name}").into())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_code_and_detail() {
        let format = TaskError::Kernel(KernelError::Format {
            code: "Z_DATA_ERROR",
            message: "incorrect header check".into(),
        });
        assert_eq!(
            encode(&format),
            (code::FORMAT, "Z_DATA_ERROR -3 incorrect header check".into())
        );
        let io = TaskError::Kernel(KernelError::Io { syscall: "open", errno: 2, name: "ENOENT" });
        assert_eq!(encode(&io), (code::IO, "open 2 ENOENT".into()));
        assert_eq!(
            encode(&TaskError::Kernel(KernelError::TooLarge { limit: 10 })),
            (code::TOO_LARGE, "10".into())
        );
        assert_eq!(
            encode(&TaskError::Panic("boom".into())).0,
            encode(&TaskError::Kernel(KernelError::Panic("boom".into()))).0
        );
    }
}
