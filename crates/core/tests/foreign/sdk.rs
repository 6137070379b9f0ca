//! Kernels written with the SDK: registered, run, checked, on a pool.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use tidepool_core::kernels::{
    self, KernelError, ParamError, Params, RawParams, RawValue, RunContext, Sink,
};
use tidepool_core::{Input, Pool, Task, TaskError};

use crate::common;
use crate::kernels::*;

#[test]
fn a_library_registers_once_after_the_built_ins() {
    let first = ids();
    assert_eq!(first.len(), 3);
    assert!(first.iter().all(|&id| id as usize >= kernels::BUILTIN.len()));
    assert_eq!(ids(), first, "registering the same library again returns its ids");
    let names: Vec<&str> = first.iter().map(|&id| kernels::get(id).unwrap().name()).collect();
    assert_eq!(names, ["test/sum", "test/repeat", "test/misbehave"]);
    assert!(kernels::all().any(|k| k.name() == "test/sum"));
}

#[test]
fn loaded_kernels_run_with_their_defaults_or_checked_parameters() {
    let data: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
    let sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
    assert_eq!(run("test/sum", &Params::NONE, &data, 64).unwrap(), sum.to_le_bytes());
    let scaled = params("test/sum", vec![("scale", RawValue::Number(3.0))]).unwrap();
    assert_eq!(run("test/sum", &scaled, &data, 64).unwrap(), (3 * sum).to_le_bytes());
    let big = params("test/repeat", vec![("repeat", RawValue::BigInt(1))]).unwrap();
    assert_eq!(
        run("test/repeat", &big, &data, usize::MAX).unwrap(),
        data,
        "a bigint is an integer too"
    );
}

#[test]
fn output_in_place_is_every_byte_in_order() {
    let data: Vec<u8> = (0..(kernels::CHUNK + 1000) as u32).map(|i| (i * 7 % 256) as u8).collect();
    let twice = params("test/repeat", vec![("repeat", RawValue::Number(2.0))]).unwrap();
    let out = run("test/repeat", &twice, &data, usize::MAX).unwrap();
    // Each input chunk, twice, in order.
    let mut want = Vec::new();
    for piece in data.chunks(kernels::CHUNK) {
        want.extend_from_slice(piece);
        want.extend_from_slice(piece);
    }
    assert_eq!(out, want);
}

#[test]
fn the_schema_is_checked_before_the_kernel_sees_the_values() {
    let err = params("test/sum", vec![("scael", RawValue::Number(1.0))]).unwrap_err();
    assert!(
        matches!(err, ParamError::Unknown { ref name, known: ["scale"] } if name == "scael"),
        "{err:?}"
    );
    let err = params("test/sum", vec![("scale", RawValue::Number(1001.0))]).unwrap_err();
    assert!(matches!(err, ParamError::Range { name: "scale", .. }), "{err:?}");
    let err = params("test/sum", vec![("scale", RawValue::Text("3"))]).unwrap_err();
    assert!(matches!(err, ParamError::Type { name: "scale", .. }), "{err:?}");
    let err = params("test/repeat", vec![]).unwrap_err();
    assert!(
        matches!(err, ParamError::Missing { name: "repeat", expected: "an integer >= 1 and <= 4" }),
        "{err:?}"
    );
    let err = params(
        "test/repeat",
        vec![("repeat", RawValue::Number(1.0)), ("mode", RawValue::Text("fancy"))],
    )
    .unwrap_err();
    assert_eq!(
        err,
        ParamError::Refused { message: "mode must be 'plain', not 'fancy' (ERR_TEST_MODE)".into() }
    );
    // A task without parameters of a kernel with a required one fails (the
    // binding refuses it before it is queued; this is the kernel's own guard).
    let err = run("test/repeat", &Params::NONE, b"x", 64).unwrap_err();
    assert!(matches!(err, KernelError::InvalidInput(ref m) if m.contains("repeat")), "{err:?}");
}

#[test]
fn parameters_of_another_kernel_are_refused() {
    let of_sum = params("test/sum", vec![("scale", RawValue::Number(2.0))]).unwrap();
    let err = run("test/repeat", &of_sum, b"x", 64).unwrap_err();
    assert!(
        matches!(err, KernelError::InvalidInput(ref m) if m.contains("another kernel")),
        "{err:?}"
    );
    let builtin = kernels::get(kernels::find("xxh64").unwrap())
        .unwrap()
        .params(&RawParams::new(vec![("seed", RawValue::Number(1.0))]))
        .unwrap();
    assert!(run("test/sum", &builtin, b"x", 64).is_err());
}

#[test]
fn errors_panics_and_broken_rules_become_task_errors() {
    assert_eq!(
        run("test/misbehave", &Params::NONE, b"f", 64),
        Err(KernelError::Failed {
            code: "ERR_TEST_BAD".into(),
            message: "the input starts with f".into()
        })
    );
    assert_eq!(
        run("test/misbehave", &Params::NONE, b"pp", 64),
        Err(KernelError::Panic("on purpose: 2".into()))
    );
    let bad_code = run("test/misbehave", &Params::NONE, b"c", 64).unwrap_err();
    assert_eq!(
        bad_code,
        KernelError::Failed {
            code: "ERR_TIDEPOOL_KERNEL_FAILED".into(),
            message: "bad code".into()
        }
    );
    let lie = run("test/misbehave", &Params::NONE, b"l", 64).unwrap_err();
    assert!(
        matches!(lie, KernelError::Failed { ref code, ref message } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.contains("neither")),
        "{lie:?}"
    );
    let over = run("test/misbehave", &Params::NONE, b"o", 1 << 20).unwrap_err();
    assert!(
        matches!(over, KernelError::Failed { ref code, ref message } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.contains("committed 1000000")),
        "{over:?}"
    );
    assert_eq!(run("test/misbehave", &Params::NONE, b"x", 64).unwrap(), b"done");
}

#[test]
fn the_output_limit_holds_for_loaded_kernels() {
    let once = params("test/repeat", vec![("repeat", RawValue::Number(1.0))]).unwrap();
    assert_eq!(
        run("test/repeat", &once, &[7; 1000], 1000).unwrap(),
        vec![7; 1000],
        "exactly at the limit passes"
    );
    assert_eq!(
        run("test/repeat", &once, &[7; 1001], 1000),
        Err(KernelError::TooLarge { limit: 1000 })
    );
    assert_eq!(run("test/sum", &Params::NONE, b"abc", 7), Err(KernelError::TooLarge { limit: 7 }));
}

#[test]
fn cancellation_and_deadlines_reach_a_kernel_that_checks() {
    let pool_flag = AtomicBool::new(false);
    let task_flag = AtomicBool::new(true);
    let spin = kernel("test/misbehave");
    let input = Input::Owned(b"s".to_vec());
    let ctx = RunContext::for_task(&pool_flag, Some(&task_flag), None);
    assert_eq!(
        spin.run(&Params::NONE, &input, &ctx, &mut Sink::new(64)),
        Err(KernelError::Cancelled)
    );
    let ctx =
        RunContext::for_task(&pool_flag, None, Some(Instant::now() + Duration::from_millis(20)));
    assert_eq!(
        spin.run(&Params::NONE, &input, &ctx, &mut Sink::new(64)),
        Err(KernelError::TimedOut)
    );
}

#[test]
fn a_stream_state_fed_across_calls_equals_the_one_shot_run() {
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let sum = kernel("test/sum");
    let scaled = params("test/sum", vec![("scale", RawValue::Number(5.0))]).unwrap();
    let mut state = sum.start(&scaled, None).unwrap();
    drop(scaled); // the state keeps its parameters alive
    let mut out = Sink::new(64);
    for piece in [&b"ab"[..], b"", b"cdef"] {
        state.update(piece, &mut out, &ctx).unwrap();
    }
    state.finish(&mut out, &ctx).unwrap();
    let want = 5 * b"abcdef".iter().map(|&b| u64::from(b)).sum::<u64>();
    assert_eq!(out.into_output().as_bytes(), want.to_le_bytes());
}

#[test]
fn a_pool_runs_loaded_kernels_and_survives_their_panics() {
    ids();
    let pool = Pool::new(common::config(1, 2), Box::new(|| {})).unwrap();
    let sum = kernels::find("test/sum").unwrap();
    let bad = kernels::find("test/misbehave").unwrap();
    let n = 10_000u32;
    for slot in 0..n {
        let (kernel, data) =
            if slot % 100 == 0 { (bad, b"p".to_vec()) } else { (sum, slot.to_le_bytes().to_vec()) };
        pool.submit(Task::new(slot, kernel, Input::Owned(data), Instant::now())).unwrap();
    }
    let mut seen = vec![false; n as usize];
    let mut buf = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut left = n;
    while left > 0 {
        assert!(Instant::now() < deadline, "{left} tasks never completed");
        pool.take_completions(&mut buf);
        for c in buf.drain(..) {
            assert!(
                !std::mem::replace(&mut seen[c.slot as usize], true),
                "slot {} completed twice",
                c.slot
            );
            left -= 1;
            match c.outcome {
                Err(TaskError::Kernel(KernelError::Panic(m))) => {
                    assert!(c.slot % 100 == 0 && m.contains("on purpose"), "{m}")
                }
                Ok(out) => {
                    let want: u64 = c.slot.to_le_bytes().iter().map(|&b| u64::from(b)).sum();
                    assert_eq!(out.as_bytes(), want.to_le_bytes());
                }
                Err(e) => panic!("slot {}: {e}", c.slot),
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(pool.stats(false).threads >= 1, "the threads survive the panics");
    pool.close();
    pool.join();
}
