//! Close, abort, drop, and threads that fail to start.

use std::time::{Duration, Instant};

use tidepool_core::kernels::KernelError;
use tidepool_core::{Pool, PoolConfig, PoolEvent, TaskError};

use crate::common::config;
use crate::helpers::*;

#[test]
fn abort_returns_queued_and_cancels_running() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    // A minute's sleep: it settles within collect()'s 10 s only if the
    // abort stopped it (how soon is bench/run.js's "abort: running 1 GiB").
    pool.submit(task(0, "sleep", micros(60_000_000))).unwrap();
    wait_until_busy(&pool);
    pool.submit(task(1, "sha256", vec![0; 10])).unwrap();
    pool.submit(task(2, "sha256", vec![0; 10])).unwrap();
    let mut queued = pool.abort();
    queued.sort();
    assert_eq!(queued, vec![1, 2]);
    let done = collect(&pool, &signal, 1);
    assert_eq!(done[0].slot, 0);
    assert_eq!(done[0].outcome, Err(TaskError::Kernel(KernelError::Cancelled)));
    pool.join();
    assert!(pool.is_terminated());
    assert!(pool.submit(task(3, "sha256", vec![])).is_err(), "no tasks after abort");
}

#[test]
fn close_finishes_the_queue_then_terminates() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 2), signal.waker()).unwrap();
    for slot in 0..100 {
        pool.submit(task(slot, "spin", micros(200))).unwrap();
    }
    pool.close();
    assert!(pool.submit(task(100, "sha256", vec![])).is_err());
    let done = collect(&pool, &signal, 100);
    assert!(done.iter().all(|c| c.outcome.is_ok()));
    pool.join();
    assert!(pool.is_terminated());
    assert_eq!(pool.stats(false).threads, 0);
}

#[test]
fn dropping_a_busy_pool_joins_quickly() {
    let signal = Signal::default();
    let pool = Pool::new(config(2, 2), signal.waker()).unwrap();
    // A minute each: drop() returns well before that only if it stopped
    // them (how soon is a benchmark's question, not this test's).
    for slot in 0..4 {
        pool.submit(task(slot, "spin", micros(60_000_000))).unwrap();
    }
    wait_for("both threads to run a task", || pool.stats(false).busy_threads == 2);
    let t = Instant::now();
    drop(pool);
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "drop waited for its kernels: {:?}",
        t.elapsed()
    );
}

#[test]
fn a_thread_that_fails_to_start_leaves_the_pool_working() {
    let signal = Signal::default();
    let pool = Pool::new(PoolConfig { fail_spawns_after: Some(1), ..config(1, 2) }, signal.waker())
        .unwrap();
    let t = Instant::now();
    for slot in 0..300 {
        pool.submit(task(slot, "spin", micros(200))).unwrap();
    }
    let done = collect(&pool, &signal, 300);
    let backlog = t.elapsed();
    assert!(done.iter().all(|c| c.outcome.is_ok()));
    let stats = pool.stats(false);
    assert_eq!(stats.threads, 1);
    assert!(stats.spawn_errors >= 1);
    // Backoff: ~60 ms of backlog must not cause dozens of attempts. Its
    // waits double from 10 ms up to 1 s, so over the backlog's time (longer
    // on a busy machine) no more than these attempts fit.
    let fit = backoff_attempts(backlog).max(6);
    assert!(stats.spawn_errors <= fit, "{} attempts in {backlog:?}", stats.spawn_errors);
    let mut events = Vec::new();
    pool.take_events(&mut events);
    assert!(events.iter().any(
        |e| matches!(e, PoolEvent::SpawnError { threads: 1, error } if error.contains("EAGAIN"))
    ));
}

/// The most thread starts that fit in `time` under the spawn backoff
/// (supervisor.rs: 10 ms after the first failure, doubling up to 1 s).
fn backoff_attempts(time: Duration) -> u64 {
    let (mut attempts, mut at, mut wait) = (1, Duration::ZERO, Duration::from_millis(10));
    while at + wait <= time {
        at += wait;
        attempts += 1;
        wait = (wait * 2).min(Duration::from_secs(1));
    }
    attempts
}

#[test]
fn no_core_thread_at_all_is_an_error_not_a_hang() {
    let signal = Signal::default();
    let err = Pool::new(PoolConfig { fail_spawns_after: Some(0), ..config(1, 2) }, signal.waker())
        .err()
        .expect("must fail");
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
}
