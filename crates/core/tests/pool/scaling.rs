//! Threads added under load and retired after it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tidepool_core::{Pool, PoolEvent, Task};

use crate::common::config;
use crate::helpers::*;

#[test]
fn a_load_step_is_seen_while_the_supervisor_waits_out_an_idle_timeout() {
    // With only busy extras the supervisor sleeps for an eighth of the idle
    // timeout (here 30 s); a burst posted meanwhile must still bring a
    // spawn within spawn_delay, not when that sleep ends.
    let signal = Signal::default();
    let mut cfg = config(1, 4);
    cfg.policy.idle_timeout = Duration::from_secs(240);
    let pool = Pool::new(cfg, signal.waker()).unwrap();
    let hold = Arc::new(tidepool_core::CancelFlag::new());
    // The core thread takes a task that holds it; then the two queued
    // behind it bring one extra (no more: the queue is never longer than
    // the threads again), which ends on a held task too: queue empty, both
    // threads busy until the test lets them go. (Queued before the core
    // thread took the first, the three could bring two extras on a busy
    // machine.) The 10 ms task between makes the mean run time the
    // burst's, so that the burst needs more threads whenever the
    // supervisor looks at it.
    pool.submit(held(0, &hold)).unwrap();
    wait_until_busy(&pool);
    pool.submit(task(1, "sleep", micros(10_000))).unwrap();
    pool.submit(held(2, &hold)).unwrap();
    assert_eq!(collect(&pool, &signal, 1)[0].slot, 1);
    wait_for("both threads busy with the held tasks, the queue empty", || {
        let s = pool.stats(false);
        s.threads == 2 && s.busy_threads == 2 && s.queued == 0
    });
    // The supervisor goes into its long wait at its next look (it does not
    // say when: a burst that comes first only makes this test easy).
    std::thread::sleep(Duration::from_millis(50));
    for slot in 3..13 {
        pool.submit(task(slot, "sleep", micros(10_000))).unwrap();
    }
    // Both threads held, only a new one runs the burst: at once if the
    // burst was seen when posted, else in 30 s, past wait_for's guard.
    wait_for("a third thread for the burst", || pool.stats(false).threads >= 3);
    collect(&pool, &signal, 10);
    release(&hold);
    collect(&pool, &signal, 2);
}

#[test]
fn grows_under_load_and_shrinks_back_to_core_threads() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 2), signal.waker()).unwrap();
    for slot in 0..400 {
        pool.submit(task(slot, "spin", micros(100))).unwrap();
    }
    collect(&pool, &signal, 400);
    let mut events = Vec::new();
    pool.take_events(&mut events);
    // The default rule's spawn (or the article's age test, before a run time is known).
    assert!(
        events.iter().any(|e| matches!(e, PoolEvent::Spawn { reason, .. } if matches!(reason.as_str(), "demand" | "queue-age"))),
        "{events:?}"
    );
    assert_eq!(pool.stats(false).spawned, 2);
    // Idle extras retire after idle_timeout (50 ms).
    let t = Instant::now();
    while pool.stats(false).threads > 1 {
        assert!(t.elapsed() < Duration::from_secs(5), "extra thread never retired");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Its event is sent once it has left (after `threads` fell).
    wait_for("the retirement's event", || {
        pool.take_events(&mut events);
        events.iter().any(|e| matches!(e, PoolEvent::Retire { threads: 1, .. }))
    });
    assert_eq!(pool.stats(false).retired, 1);
}

#[test]
fn trickle_does_not_spawn() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 2), signal.waker()).unwrap();
    for slot in 0..20 {
        pool.submit(task(slot, "sha256", vec![0; 64])).unwrap();
        collect(&pool, &signal, 1);
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(pool.stats(false).spawned, 1);
}

#[test]
fn submit_many_wakes_enough_threads_for_a_batch() {
    let signal = Signal::default();
    // Nobody else wakes a parked thread for a queued task for a minute (the
    // supervisor, once the oldest task is spawn_delay old): both threads
    // run the batch only if submit_many woke both.
    let mut cfg = config(2, 2);
    cfg.policy.spawn_delay = Duration::from_secs(60);
    let pool = Pool::new(cfg, signal.waker()).unwrap();
    wait_for("both core threads", || pool.stats(false).threads == 2);
    // Both park once idle (a spinning one would take a task unwoken; the
    // pool does not say which are parked, so this only makes it likely).
    std::thread::sleep(Duration::from_millis(20));
    let hold = Arc::new(tidepool_core::CancelFlag::new());
    let mut batch: Vec<Task> = (0..2).map(|slot| held(slot, &hold)).collect();
    pool.submit_many(&mut batch).unwrap();
    wait_for("both parked core threads to be woken", || pool.stats(false).busy_threads == 2);
    release(&hold);
    assert_eq!(collect(&pool, &signal, 2).len(), 2);
}

#[test]
fn a_thread_that_only_runs_parts_of_other_tasks_is_not_idle() {
    // One big BLAKE3 job at a time, each waited for: the core thread runs
    // every task, and the extra started for their parts only helps. Helping
    // is work: the extra's idle time, which retirement by idleness goes by,
    // starts when it last helped, not when it first parked. (It kept the
    // latter once, and retired every idle timeout in the middle of the jobs.)
    //
    // Judged by what the pool reports, not by a race against the idle
    // timeout (a minute here: nothing retires): the parts its helpers ran,
    // and since when its idle extra has been idle, an instant of the same
    // clock as this thread's. A job the extra helped with was submitted
    // before it last helped, so its idle time must start after the submit,
    // however late this thread or the extra is scheduled.
    let signal = Signal::default();
    let mut config = config(1, 2);
    // A thread for the parts as soon as they wait: a release build's job
    // may be over within the default delay.
    config.policy.spawn_delay = Duration::ZERO;
    config.policy.idle_timeout = Duration::from_secs(60);
    let pool = Pool::new(config, signal.waker()).unwrap();
    let data = vec![7u8; 4 * 1024 * 1024];
    let mut jobs = 0;
    // Runs one job, waited for; returns its slot.
    let mut job = |pool: &Pool| {
        let slot = jobs;
        jobs += 1;
        pool.submit(task(slot, "blake3", data.clone())).unwrap();
        collect(pool, &signal, 1);
        slot
    };
    // Jobs until a thread was started for their parts; then it parks.
    wait_for("a thread for the parts", || {
        job(&pool);
        pool.stats(false).threads == 2
    });
    let mut events = Vec::new();
    pool.take_events(&mut events);
    assert!(
        events.iter().any(|e| matches!(e, PoolEvent::Spawn { threads: 2, .. })),
        "no thread was started for the parts: {events:?}"
    );
    wait_for("the extra to park idle", || pool.stats(false).idle_extra_since.is_some());
    // Jobs until three were helped by the extra (it may be scheduled too
    // late for a job's parts: then the core thread ran them all).
    let mut helped = 0;
    wait_for("the extra to help with three jobs", || {
        let before = pool.stats(false).parts_helped;
        let submitted = Instant::now();
        let slot = job(&pool);
        if pool.stats(false).parts_helped == before {
            return false;
        }
        // Its parts are done (the task completed after its helpers left):
        // it parks again, idle since then.
        wait_for("the extra to park again", || pool.stats(false).idle_extra_since.is_some());
        let since = pool.stats(false).idle_extra_since.unwrap();
        assert!(
            since >= submitted,
            "the extra helped with job {slot}, yet counts as idle since {:?} before it was submitted",
            submitted - since
        );
        helped += 1;
        helped == 3
    });
}
