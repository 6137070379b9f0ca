//! The raw ABI's rules for hosts and rooms (raw.rs's kernels).

use tidepool_core::kernels::{self, KernelError, Params};
use tidepool_kernel_sdk::abi::{self};

use crate::kernels::*;
use crate::raw;

fn raw(name: &str, data: &[u8], limit: usize) -> Result<Vec<u8>, KernelError> {
    // SAFETY: the raw library's descriptor, leaked by `raw::library`.
    unsafe { kernels::register(raw::library()) }.unwrap();
    run(name, &Params::NONE, data, limit)
}

#[test]
fn rooms_are_never_empty_and_a_short_room_may_end_in_too_large() {
    let data = [b'z'; 300];
    assert_eq!(raw("raw/ops", &data, 1000).unwrap(), data, "unfilled(0) lends at least a byte");
    assert_eq!(
        raw("raw/ops", &data, 299),
        Err(KernelError::TooLarge { limit: 299 }),
        "then NULL at the limit"
    );
    let units = [b'u'; 12];
    assert_eq!(raw("raw/ops", &units, 12).unwrap(), units);
    assert_eq!(
        raw("raw/ops", &units, 11),
        Err(KernelError::TooLarge { limit: 11 }),
        "a room shorter than a unit"
    );
}

#[test]
fn an_ignored_refusal_or_a_null_write_fails_the_task() {
    assert_eq!(
        raw("raw/ops", b"i", 50),
        Err(KernelError::TooLarge { limit: 50 }),
        "no result with a hole in it"
    );
    let err = raw("raw/ops", b"n", 50).unwrap_err();
    assert!(
        matches!(err, KernelError::Failed { ref code, ref message } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.contains("NULL")),
        "{err:?}"
    );
}

#[test]
fn a_state_handed_over_is_dropped_even_when_its_start_broke_a_rule() {
    let before = raw::DROPPED.load(std::sync::atomic::Ordering::SeqCst);
    let err = raw("raw/misuse", b"x", 64).unwrap_err();
    assert!(
        matches!(err, KernelError::Failed { ref code, .. } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT"),
        "{err:?}"
    );
    assert!(
        raw::DROPPED.load(std::sync::atomic::Ordering::SeqCst) > before,
        "the library's state was given back to it"
    );
}

#[test]
fn host_functions_may_be_called_from_the_kernels_own_threads() {
    let out = raw("raw/ops", b"t", 1 << 20).unwrap();
    assert_eq!(out.len(), 4000);
    for t in 0..4u8 {
        assert_eq!(out.iter().filter(|&&b| b == t).count(), 1000);
    }
}

fn contract_error(err: &KernelError, kernel: &str, what: &str) -> bool {
    matches!(err, KernelError::Failed { code, message }
        if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.starts_with(&format!("kernel '{kernel}' ")) && message.contains(what))
}

// The tests below use raw/keep, raw/meddle and raw/from-start, each in one
// test only: a misuse is reported by its kernel's next call, which another
// test running at the same time could make.

#[test]
fn a_host_kept_past_its_call_writes_into_no_other_task_and_its_kernel_is_told() {
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(raw("raw/keep", b"k", 64).unwrap(), b"kept");
    // The next task on this thread: before hosts were checked, the kept
    // pointer read this call's host (same stack slot) and "EVIL" landed in
    // its output.
    assert_eq!(
        raw("raw/meddle", b"m", 64).unwrap(),
        b"clean",
        "the other task's output is untouched"
    );
    assert_eq!(raw::STALE_STATUS.load(SeqCst), abi::TP_ERROR, "the late write was refused");
    // The kernel whose host it was hears of it at its next call.
    let err = raw("raw/keep", b"k", 64).unwrap_err();
    assert!(
        contract_error(
            &err,
            "raw/keep",
            "called its host's write after the call it was lent to had returned"
        ),
        "{err:?}"
    );
    assert_eq!(raw("raw/keep", b"k", 64).unwrap(), b"kept", "reported once");
    // Tasks in between do not make the kept host any less stale.
    for _ in 0..10 {
        raw("raw/ops", b"x", 64).unwrap();
    }
    raw::STALE_STATUS.store(-1, SeqCst);
    assert_eq!(raw("raw/meddle", b"m", 64).unwrap(), b"clean");
    assert_eq!(raw::STALE_STATUS.load(SeqCst), abi::TP_ERROR);
    assert!(contract_error(&raw("raw/keep", b"k", 64).unwrap_err(), "raw/keep", "write"));
}

#[test]
fn a_host_kept_from_start_and_used_in_update_fails_that_task() {
    use std::sync::atomic::Ordering::SeqCst;
    // The kept pointer, and a copy of its ctx: both stale in update.
    for input in [b"p", b"c"] {
        raw::FROM_START_STATUS.store(-1, SeqCst);
        let err = raw("raw/from-start", input, 64).unwrap_err();
        assert_eq!(raw::FROM_START_STATUS.load(SeqCst), abi::TP_ERROR, "{}", input[0] as char);
        assert!(contract_error(&err, "raw/from-start", "write after the call"), "{err:?}");
    }
}
