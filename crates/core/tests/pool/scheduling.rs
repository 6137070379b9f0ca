//! No task waits for another: batches shared, results handed over as made.

use std::sync::Arc;

use tidepool_core::Pool;

use crate::common::config;
use crate::helpers::*;

/// Teaches `pool` that its tasks are tiny (its workers then take them in
/// batches).
fn teach_tiny(pool: &Pool, signal: &Signal) {
    for slot in 0..5_000 {
        pool.submit(task(10_000 + slot, "sha256", vec![7; 64])).unwrap();
    }
    collect(pool, signal, 5_000);
}

/// Tasks posted together with a long one, after the pool learned that its
/// tasks are tiny, are taken in one batch: none waits for the long one,
/// whether taken before it (its result is handed over anyway) or after it
/// (another thread takes it from the batch).
#[test]
fn no_task_of_a_batch_waits_for_a_long_one_beside_it() {
    for (min, max) in [(1, 4), (2, 2)] {
        let signal = Signal::default();
        let pool = Pool::new(config(min, max), signal.waker()).unwrap();
        teach_tiny(&pool, &signal);
        let long = Arc::new(tidepool_core::CancelFlag::new());
        let mut tasks = vec![task(0, "sha256", vec![1; 64]), held(1, &long)];
        tasks.extend((2..8).map(|slot| task(slot, "sha256", vec![slot as u8; 64])));
        pool.submit_many(&mut tasks).unwrap();
        // The long task holds its thread until released: the seven others
        // complete meanwhile (a hang guard of 10 s otherwise).
        let done = collect(&pool, &signal, 7);
        let mut slots: Vec<u32> = done.iter().map(|c| c.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, vec![0, 2, 3, 4, 5, 6, 7], "{min}..={max} threads");
        release(&long);
        let last = collect(&pool, &signal, 1);
        assert_eq!(last[0].slot, 1);
        assert_eq!(pool.stats(false).queued, 0);
    }
}

/// With one thread, what ran before a long task is handed over while it
/// runs, even when more tasks wait behind it (the results held back for
/// them are woken for by the supervisor).
#[test]
fn a_result_held_back_is_handed_over_while_a_long_task_runs() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    teach_tiny(&pool, &signal);
    let long = Arc::new(tidepool_core::CancelFlag::new());
    let mut tasks =
        vec![task(0, "sha256", vec![1; 64]), held(1, &long), task(2, "sha256", vec![2; 64])];
    pool.submit_many(&mut tasks).unwrap();
    let first = collect(&pool, &signal, 1);
    assert_eq!(first[0].slot, 0);
    let stats = pool.stats(false);
    assert_eq!((stats.busy_threads, stats.queued), (1, 1), "the long task runs, one waits");
    release(&long);
    let rest = collect(&pool, &signal, 2);
    let mut slots: Vec<u32> = rest.iter().map(|c| c.slot).collect();
    slots.sort_unstable();
    assert_eq!(slots, vec![1, 2]);
}
