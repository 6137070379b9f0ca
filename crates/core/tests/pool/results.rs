//! A task's result: each once, with its own output; a panic, an output limit, packed inputs, the stats.

use std::collections::HashMap;
use std::time::Duration;

use tidepool_core::kernels::{self, KernelError};
use tidepool_core::{Input, Pool, Task, TaskError};

use crate::common::config;
use crate::helpers::*;

#[test]
fn every_task_completes_once_with_its_own_digest() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 2), signal.waker()).unwrap();
    let n = 20_000u32;
    let mut expected = HashMap::new();
    for slot in 0..n {
        let data = slot.to_le_bytes().repeat((slot % 7 + 1) as usize);
        expected.insert(slot, kernels::find("sha256").map(|_| sha256_hex(&data)).unwrap());
        pool.submit(task(slot, "sha256", data)).unwrap();
    }
    let done = collect(&pool, &signal, n as usize);
    assert_eq!(done.len(), n as usize);
    for c in done {
        let want = expected.remove(&c.slot).expect("each slot completes exactly once");
        assert_eq!(format!("{:?}", c.outcome.unwrap()), want);
    }
    assert!(expected.is_empty());
}

fn sha256_hex(data: &[u8]) -> String {
    use std::sync::atomic::AtomicBool;
    let flag = AtomicBool::new(false);
    let out = kernels::get(kernels::find("sha256").unwrap())
        .unwrap()
        .compute(&Input::Owned(data.to_vec()), &kernels::RunContext::new(&flag))
        .unwrap();
    format!("{out:?}")
}

#[test]
fn a_panicking_kernel_fails_only_its_task() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    pool.submit(task(0, "panic", vec![1, 2, 3])).unwrap();
    pool.submit(task(1, "sha256", b"abc".to_vec())).unwrap();
    let mut done = collect(&pool, &signal, 2);
    done.sort_by_key(|c| c.slot);
    match &done[0].outcome {
        Err(TaskError::Panic(m)) => assert!(m.contains("on purpose"), "{m}"),
        other => panic!("expected a panic, got {other:?}"),
    }
    assert!(done[1].outcome.is_ok());
    assert_eq!(pool.stats(false).threads, 1, "the thread survives the panic");
}

#[test]
fn large_outputs_come_back_whole_and_the_output_limit_holds() {
    let signal = Signal::default();
    let mut cfg = config(1, 1);
    cfg.max_output_bytes = 1 << 20;
    let pool = Pool::new(cfg, signal.waker()).unwrap();
    let big: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
    pool.submit(task(0, "echo", big.clone())).unwrap();
    let mut over = big.clone();
    over.push(0);
    pool.submit(task(1, "echo", over)).unwrap();
    pool.submit(task(2, "sha256", b"abc".to_vec())).unwrap();
    let mut done = collect(&pool, &signal, 3);
    done.sort_by_key(|c| c.slot);
    let first = done[0].outcome.as_ref().unwrap();
    assert!(first.is_spilled());
    assert_eq!(first.as_bytes(), &big[..]);
    assert_eq!(done[1].outcome, Err(TaskError::Kernel(KernelError::TooLarge { limit: 1 << 20 })));
    assert!(!done[2].outcome.as_ref().unwrap().is_spilled(), "digests stay inline");
}

/// A packed task of `inputs` (see `Mode::Packed`) in `slot`.
fn packed(slot: u32, kernel: &str, inputs: Vec<Vec<u8>>) -> Task {
    packed_as(slot, kernel, inputs, false)
}

/// [`packed`], its outputs of their own lengths when `sized`.
fn packed_as(slot: u32, kernel: &str, inputs: Vec<Vec<u8>>, sized: bool) -> Task {
    let mut t = task(slot, kernel, Vec::new());
    let inputs = tidepool_core::Inputs::list(inputs.into_iter().map(Input::Owned).collect());
    t.mode = tidepool_core::Mode::Packed(Box::new(tidepool_core::Packed { inputs, sized }));
    t
}

#[test]
fn a_sized_packed_task_tells_each_output_s_length_after_them() {
    let signal = Signal::default();
    let mut cfg = config(1, 1);
    cfg.max_output_bytes = 64;
    let pool = Pool::new(cfg, signal.waker()).unwrap();
    let inputs = vec![vec![1; 4], vec![], vec![3; 9], vec![4; 1]];
    pool.submit(packed_as(10, "echo", inputs.clone(), true)).unwrap();
    // The limit holds per input, and a failure names its input.
    pool.submit(packed_as(20, "echo", vec![vec![1; 64], vec![2; 65]], true)).unwrap();
    let mut done = collect(&pool, &signal, 2);
    done.sort_by_key(|c| c.slot);
    let mut want: Vec<u8> = inputs.concat();
    for input in &inputs {
        want.extend_from_slice(&(input.len() as u32).to_le_bytes());
    }
    assert_eq!(done[0].slot, 10);
    assert_eq!(done[0].outcome.as_ref().unwrap().as_bytes(), &want[..]);
    assert_eq!(done[1].slot, 21);
    assert_eq!(done[1].outcome, Err(TaskError::Kernel(KernelError::TooLarge { limit: 64 })));
}

#[test]
fn a_packed_task_gives_each_input_s_output_back_to_back() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 2), signal.waker()).unwrap();
    let inputs: Vec<Vec<u8>> = (0..64u32).map(|i| i.to_le_bytes().repeat(i as usize)).collect();
    pool.submit(packed(1000, "sha256", inputs.clone())).unwrap();
    pool.submit(packed(2000, "sleep", vec![micros(1), micros(1)])).unwrap();
    let mut done = collect(&pool, &signal, 2);
    done.sort_by_key(|c| c.slot);
    assert_eq!(done[0].slot, 1000, "a whole packed task completes in its own slot");
    let want: String = inputs.iter().map(|i| sha256_hex(i)).collect();
    assert_eq!(format!("{:?}", done[0].outcome.as_ref().unwrap()), want);
    assert_eq!(done[1].outcome.as_ref().unwrap().as_bytes(), b"", "empty outputs pack to none");
}

#[test]
fn a_packed_task_fails_in_the_slot_of_the_input_that_failed() {
    let signal = Signal::default();
    let mut cfg = config(1, 1);
    cfg.max_output_bytes = 64;
    let pool = Pool::new(cfg, signal.waker()).unwrap();
    // The third input's output is longer than the first's.
    pool.submit(packed(10, "echo", vec![vec![1; 4], vec![2; 4], vec![3; 5], vec![4; 4]])).unwrap();
    // The second input's output is past the output limit (per input).
    pool.submit(packed(20, "echo", vec![vec![1; 64], vec![2; 65]])).unwrap();
    // The first input panics; the thread lives on.
    pool.submit(packed(30, "panic", vec![vec![1], vec![2]])).unwrap();
    let mut timed = packed(40, "spin", vec![micros(1), micros(5_000_000), micros(1)]);
    timed.timeout = Some(Duration::from_millis(30));
    pool.submit(timed).unwrap();
    let mut done = collect(&pool, &signal, 4);
    done.sort_by_key(|c| c.slot);
    assert_eq!(done[0].slot, 12);
    assert_eq!(done[0].outcome, Err(TaskError::UnequalLength { expected: 4, got: 5 }));
    assert_eq!(done[1].slot, 21);
    assert_eq!(done[1].outcome, Err(TaskError::Kernel(KernelError::TooLarge { limit: 64 })));
    assert_eq!(done[2].slot, 30);
    assert!(matches!(done[2].outcome, Err(TaskError::Panic(_))), "{:?}", done[2].outcome);
    assert_eq!(done[3].slot, 41, "the timeout counts per input");
    assert_eq!(done[3].outcome, Err(TaskError::Kernel(KernelError::TimedOut)));
    assert_eq!(pool.stats(false).threads, 1);
}

#[test]
fn a_stats_reset_starts_stats_afresh_but_the_totals_only_grow() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    for slot in 0..10 {
        pool.submit(task(slot, "sleep", micros(2_000))).unwrap();
    }
    collect(&pool, &signal, 10);
    let first = pool.stats(true);
    assert_eq!((first.wait.count(), first.run.count()), (10, 10));
    assert!(first.run.sum() >= Duration::from_millis(20), "{:?}", first.run.sum());
    let reset = pool.stats(false);
    assert_eq!((reset.run.count(), reset.run.max()), (0, Duration::ZERO), "the maximum was reset");
    assert_eq!(reset.wait.max(), Duration::ZERO);
    for slot in 10..13 {
        pool.submit(task(slot, "sleep", micros(1_000))).unwrap();
    }
    collect(&pool, &signal, 3);
    let second = pool.stats(false);
    assert_eq!(second.run.count(), 3, "since the reset");
    let totals = pool.totals();
    let (wait, run) = (totals.wait, totals.run);
    assert_eq!((wait.count(), run.count()), (13, 13), "the totals count from creation");
    assert!(run.sum() >= first.run.sum() + Duration::from_millis(3));
    let bounds = [Duration::from_nanos((1 << 20) - 1), Duration::from_nanos((1 << 40) - 1)];
    // Every run took a millisecond or more (2^20 ns is 1.05 ms): none below the first bound, all below the second.
    let buckets = run.cumulative(&bounds);
    assert!(buckets[0] <= 3, "{buckets:?}");
    assert_eq!(buckets[1], 13);
    pool.close();
}
