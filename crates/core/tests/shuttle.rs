//! Interleaving tests of the pool's wake / park / spawn / retire / shutdown
//! protocol under Shuttle's randomized scheduler (a thread may be preempted at
//! every lock, condvar and atomic operation of the protocol).
//!
//!   cargo test -p tidepool-core --features shuttle --test shuttle
//!
//! Each test runs its scenario many times with different schedules and checks
//! that every task completes exactly once, nothing hangs (Shuttle reports a
//! deadlock if every thread is blocked) and the pool shuts down cleanly.
//!
//! Shuttle does not model time: a `wait_timeout` never times out. So every
//! timed wait of the supervisor (the idle timeout it keeps while extras
//! live) is, here, a sleep that only a nudge from `submit` ends, and a
//! missing nudge strands tasks. Checked by hand: without the nudge for "queue
//! longer than the threads" (Pool::submit), the lone-task test below fails.
#![cfg(feature = "shuttle")]

use std::collections::HashSet;
use std::time::{Duration, Instant};

use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::sync::Arc;
use tidepool_core::kernels;
use tidepool_core::{Completion, Input, Pool, PoolConfig, Task};

mod common;

const ITERATIONS: usize = 300;

/// The shared test configuration, with every delay at zero so that Shuttle
/// explores the wake protocol rather than timeouts.
fn config(min: usize, max: usize, idle_timeout: Duration) -> PoolConfig {
    let mut config = common::config(min, max);
    config.policy.spawn_delay = Duration::ZERO;
    config.policy.idle_timeout = idle_timeout;
    config.policy.check_interval = Duration::from_micros(10);
    config.spin = Duration::ZERO;
    config
}

fn task(slot: u32) -> Task {
    Task::new(
        slot,
        kernels::find("crc32").unwrap(),
        Input::Owned(vec![slot as u8; 16]),
        Instant::now(),
    )
}

/// Drains until `n` completions arrived, yielding to the scheduler between
/// looks; asserts each slot completes exactly once.
fn collect(pool: &Pool, n: usize) -> Vec<Completion> {
    let mut all = Vec::new();
    let mut buf = Vec::new();
    let mut looks = 0;
    while all.len() < n {
        pool.take_completions(&mut buf);
        all.append(&mut buf);
        looks += 1;
        assert!(looks < 100_000, "a task was stranded: {} of {n} completed", all.len());
        shuttle::thread::yield_now();
    }
    let slots: HashSet<u32> = all.iter().map(|c| c.slot).collect();
    assert_eq!(slots.len(), all.len(), "a task completed twice");
    all
}

fn counting_waker() -> (tidepool_core::Waker, Arc<AtomicUsize>) {
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = wakes.clone();
    (
        Box::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }),
        wakes,
    )
}

#[test]
fn submit_wake_park_never_strands_a_task() {
    shuttle::check_random(
        || {
            let (waker, wakes) = counting_waker();
            let pool = Pool::new(config(1, 2, Duration::from_secs(60)), waker).unwrap();
            for slot in 0..4 {
                pool.submit(task(slot)).unwrap();
                shuttle::thread::yield_now();
            }
            let done = collect(&pool, 4);
            assert!(done.iter().all(|c| c.outcome.is_ok()));
            assert!(wakes.load(Ordering::SeqCst) >= 1, "the consumer was never woken");
            pool.close();
            pool.join();
            assert!(pool.is_terminated());
        },
        ITERATIONS,
    );
}

#[test]
fn retire_racing_with_submit_loses_nothing() {
    shuttle::check_random(
        || {
            let (waker, _) = counting_waker();
            // Extras retire as soon as they are idle, while tasks keep coming.
            let pool = Pool::new(config(1, 2, Duration::ZERO), waker).unwrap();
            for slot in 0..6 {
                pool.submit(task(slot)).unwrap();
                if slot % 2 == 1 {
                    shuttle::thread::yield_now();
                }
            }
            collect(&pool, 6);
            pool.close();
            pool.join();
            assert_eq!(pool.stats(false).threads, 0);
        },
        ITERATIONS,
    );
}

#[test]
fn abort_racing_with_running_tasks_settles_each_once() {
    shuttle::check_random(
        || {
            let (waker, _) = counting_waker();
            let pool = Pool::new(config(2, 2, Duration::from_secs(60)), waker).unwrap();
            for slot in 0..5 {
                pool.submit(task(slot)).unwrap();
            }
            shuttle::thread::yield_now();
            let returned = pool.abort();
            pool.join();
            let mut done = Vec::new();
            pool.take_completions(&mut done);
            let mut seen: HashSet<u32> = returned.iter().copied().collect();
            assert_eq!(seen.len(), returned.len());
            for c in &done {
                assert!(
                    seen.insert(c.slot),
                    "slot {} both returned and completed, or completed twice",
                    c.slot
                );
            }
            assert_eq!(seen.len(), 5, "every task is either handed back or completed");
            assert!(pool.is_terminated());
            assert!(pool.submit(task(9)).is_err());
        },
        ITERATIONS,
    );
}

/// Of `tasks` tasks, every one not `removed` from the queue completes
/// exactly once (the removed ones never do), and the pool then shuts down
/// with nothing more to deliver.
fn every_other_completes_once(pool: &Pool, tasks: usize, removed: &HashSet<u32>) {
    let done = collect(pool, tasks - removed.len());
    for c in &done {
        assert!(!removed.contains(&c.slot), "a removed task still completed");
    }
    pool.close();
    pool.join();
    let mut rest = Vec::new();
    pool.take_completions(&mut rest);
    assert!(rest.is_empty(), "more completions than tasks");
}

/// Cancels `wanted` of `tasks` tasks while `max` threads run them, the way
/// the binding cancels a signal's posts: they share the signal's flag; those
/// still queued are taken out in one pass (`remove_queued_with`), then the
/// flag is raised for those a thread took meanwhile. Every other task must
/// then complete exactly once, and the removed ones never.
fn cancel_scenario(max: usize, tasks: u32, wanted: &'static [u32]) {
    shuttle::check_random(
        move || {
            let (waker, _) = counting_waker();
            let pool = Pool::new(config(1, max, Duration::from_secs(60)), waker).unwrap();
            let signal = std::sync::Arc::new(tidepool_core::CancelFlag::new());
            for slot in 0..tasks {
                let mut t = task(slot);
                if wanted.contains(&slot) {
                    t.cancel = Some(signal.clone());
                }
                pool.submit(t).unwrap();
            }
            shuttle::thread::yield_now();
            let removed: HashSet<u32> = pool.remove_queued_with(&signal).into_iter().collect();
            signal.store(true, std::sync::atomic::Ordering::Relaxed);
            every_other_completes_once(&pool, tasks as usize, &removed);
        },
        ITERATIONS,
    );
}

#[test]
fn cancel_racing_with_a_worker_taking_the_task_settles_each_once() {
    cancel_scenario(1, 4, &[1, 3]);
}

#[test]
fn cancel_of_a_signal_s_tasks_racing_with_workers_settles_each_once() {
    cancel_scenario(2, 6, &[0, 2, 3, 5]);
}

#[test]
fn without_core_threads_a_parked_extra_takes_a_lone_task() {
    shuttle::check_random(
        || {
            let (waker, _) = counting_waker();
            // minThreads 0: the only threads are extras, spawned under load.
            let pool = Pool::new(config(0, 2, Duration::from_secs(60)), waker).unwrap();
            pool.submit(task(0)).unwrap();
            collect(&pool, 1);
            // Let the thread park, then post one task alone.
            for _ in 0..4 {
                shuttle::thread::yield_now();
            }
            pool.submit(task(1)).unwrap();
            collect(&pool, 1);
            pool.close();
            pool.join();
            assert!(pool.is_terminated());
        },
        ITERATIONS,
    );
}

#[test]
fn room_freed_in_a_full_queue_is_never_lost() {
    shuttle::check_random(
        || {
            let (waker, wakes) = counting_waker();
            let mut cfg = config(1, 1, Duration::from_secs(60));
            // One place: the thread always takes its task from a full queue.
            cfg.max_queue = 1;
            let pool = Pool::new(cfg, waker).unwrap();
            pool.submit(task(0)).unwrap();
            // The consumer: drain, then read the room flag (as the binding does).
            let mut room = false;
            let mut done = Vec::new();
            let mut buf = Vec::new();
            let mut looks = 0;
            while done.is_empty() || !room {
                pool.take_completions(&mut buf);
                room |= pool.take_room_freed();
                done.append(&mut buf);
                looks += 1;
                assert!(looks < 100_000, "room freed but never seen (done {})", done.len());
                shuttle::thread::yield_now();
            }
            assert!(wakes.load(Ordering::SeqCst) >= 1);
            pool.close();
            pool.join();
        },
        ITERATIONS,
    );
}

#[test]
fn close_with_tasks_queued_and_no_thread_still_runs_them() {
    shuttle::check_random(
        || {
            let (waker, _) = counting_waker();
            // minThreads 0: no thread yet when close() comes.
            let pool = Pool::new(config(0, 1, Duration::from_secs(60)), waker).unwrap();
            pool.submit(task(0)).unwrap();
            pool.submit(task(1)).unwrap();
            pool.close();
            collect(&pool, 2);
            pool.join();
            assert!(pool.is_terminated());
            assert_eq!(pool.stats(false).queued, 0);
        },
        ITERATIONS,
    );
}

#[test]
fn a_batch_wakes_parked_threads_and_none_of_it_is_stranded() {
    // Two core threads, both parked; a batch arrives in one submit_many.
    shuttle::check_random(
        || {
            let (waker, _) = counting_waker();
            let pool = Pool::new(config(2, 2, Duration::from_secs(60)), waker).unwrap();
            shuttle::thread::yield_now();
            let mut batch: Vec<Task> = (0..5).map(task).collect();
            assert_eq!(pool.submit_many(&mut batch), Some(5));
            assert!(batch.is_empty());
            let done = collect(&pool, 5);
            assert!(done.iter().all(|c| c.outcome.is_ok()));
            pool.close();
            pool.join();
            assert!(pool.is_terminated());
        },
        ITERATIONS,
    );
}

#[test]
fn cancelling_a_batch_racing_with_workers_settles_each_task_once() {
    // The binding's batch cancel: queued tasks of the flag out in one pass,
    // then the flag raised for those a thread took meanwhile.
    shuttle::check_random(
        || {
            let (waker, _) = counting_waker();
            let pool = Pool::new(config(1, 2, Duration::from_secs(60)), waker).unwrap();
            let flag = std::sync::Arc::new(tidepool_core::CancelFlag::new());
            let mut batch: Vec<Task> = (0..6)
                .map(|slot| {
                    let mut t = task(slot);
                    t.cancel = Some(flag.clone());
                    t
                })
                .collect();
            pool.submit_many(&mut batch).unwrap();
            shuttle::thread::yield_now();
            let removed: HashSet<u32> = pool.remove_queued_with(&flag).into_iter().collect();
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
            every_other_completes_once(&pool, 6, &removed);
        },
        ITERATIONS,
    );
}

#[test]
fn a_job_in_parts_racing_with_small_tasks_settles_each_once() {
    // A BLAKE3 task above its split size posts its parts on the board;
    // idle threads help while the queue is empty and leave as soon as
    // small tasks queue. Every part runs once (the digest is the whole
    // input's), every task settles once, and close() ends the pool.
    let big = vec![7u8; (4 << 20) + 1];
    let blake3 = kernels::find("blake3").unwrap();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let want = kernels::get(blake3)
        .unwrap()
        .compute(&Input::Owned(big.clone()), &kernels::RunContext::new(&cancel))
        .unwrap();
    shuttle::check_random(
        move || {
            let (waker, _) = counting_waker();
            let pool = Pool::new(config(1, 3, Duration::from_secs(60)), waker).unwrap();
            pool.submit(Task::new(9, blake3, Input::Owned(big.clone()), Instant::now())).unwrap();
            for slot in 0..3 {
                shuttle::thread::yield_now();
                pool.submit(task(slot)).unwrap();
            }
            let done = collect(&pool, 4);
            let digest = done.iter().find(|c| c.slot == 9).unwrap().outcome.as_ref().unwrap();
            assert_eq!(digest.as_bytes(), want.as_bytes());
            assert!(done.iter().all(|c| c.outcome.is_ok()));
            pool.close();
            pool.join();
            assert!(pool.is_terminated());
        },
        ITERATIONS / 10,
    );
}
