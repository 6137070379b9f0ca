//! The policy driven by a fake clock: each rule's decisions (whole loads
//! replayed through the simulator are sim_tests.rs').

use super::*;

pub(super) fn cfg() -> PolicyConfig {
    PolicyConfig {
        min_threads: 1,
        max_threads: 4,
        spawn_delay: Duration::from_millis(10),
        idle_timeout: Duration::from_millis(100),
        check_interval: Duration::from_millis(5),
        rule: SpawnRule::QueueAge,
    }
}

pub(super) fn obs(t0: Instant, now_ms: u64) -> Observation {
    Observation {
        now: t0 + Duration::from_millis(now_ms),
        queued: 0,
        oldest_enqueued: None,
        threads: 1,
        spawning: false,
        last_spawn: None,
        spawn_backoff_until: None,
        mean_run: None,
        newest_idle_extra: None,
        arrival_rate: 0.0,
        recent_arrival_rate: 0.0,
        threads_needed: None,
        junior_extra: None,
        memory_waiting: 0,
    }
}

#[test]
fn no_spawn_attempt_while_backing_off_after_a_failure() {
    let t0 = Instant::now();
    let loaded = Observation { queued: 1000, oldest_enqueued: Some(t0), ..obs(t0, 1000) };
    let backing_off = Observation {
        spawn_backoff_until: Some(t0 + Duration::from_millis(1010)),
        ..loaded.clone()
    };
    assert_eq!(decide(&backing_off, &cfg()).action, Action::None);
    let after = Observation { now: t0 + Duration::from_millis(1010), ..backing_off };
    assert_eq!(decide(&after, &cfg()).action, Action::Spawn(SpawnReason::QueueAge));
}

#[test]
fn no_thread_is_started_while_threads_wait_for_working_memory() {
    let t0 = Instant::now();
    let loaded = Observation { queued: 1000, oldest_enqueued: Some(t0), ..obs(t0, 1000) };
    let demand = PolicyConfig { rule: SpawnRule::Demand, ..cfg() };
    let ran = Observation { mean_run: Some(Duration::from_millis(10)), ..loaded.clone() };
    assert_eq!(decide(&loaded, &cfg()).action, Action::Spawn(SpawnReason::QueueAge));
    assert_eq!(decide(&ran, &demand).action, Action::Spawn(SpawnReason::Demand));
    // One thread waits for memory: another would wait beside it.
    let waiting = Observation { memory_waiting: 1, threads: 2, ..loaded };
    assert_eq!(decide(&waiting, &cfg()).action, Action::None);
    assert_eq!(decide(&Observation { memory_waiting: 1, ..ran }, &demand).action, Action::None);
    // ...but the supervisor looks again while tasks are queued.
    assert!(decide(&waiting, &cfg()).next_check.is_some());
    // Core threads are started whatever the memory.
    let below_core = Observation { threads: 0, ..waiting };
    assert_eq!(decide(&below_core, &cfg()).action, Action::Spawn(SpawnReason::Core));
}

#[test]
fn extras_wait_until_the_core_threads_fall_behind() {
    let c = cfg();
    assert!(!extras_may_take(0, Duration::from_secs(1), &c), "nothing queued");
    assert!(
        !extras_may_take(1, Duration::from_millis(5), &c),
        "young task: a core thread gets to it"
    );
    assert!(!extras_may_take(100, Duration::from_millis(5), &c), "young queue: the core keeps up");
    assert!(extras_may_take(2, Duration::from_millis(11), &c));
}

#[test]
fn a_lone_task_waits_no_longer_than_spawn_delay_while_an_extra_idles() {
    // The core thread is busy with a long task; one small task is queued
    // and an extra thread is parked (fake clock: t0 is the post).
    let t0 = Instant::now();
    let c = cfg();
    let lone = |ms| Observation {
        threads: 2,
        queued: 1,
        oldest_enqueued: Some(t0),
        newest_idle_extra: Some((1, t0)),
        ..obs(t0, ms)
    };
    assert!(!extras_may_take(1, oldest_age(&lone(0)), &c));
    // The supervisor looks again periodically, and at the latest when
    // the task turns spawn_delay (10 ms) old...
    assert_eq!(decide(&lone(0), &c).next_check, Some(c.check_interval));
    assert_eq!(decide(&lone(7), &c).next_check, Some(Duration::from_millis(3)));
    // ...and then the extra may take it.
    assert!(extras_may_take(1, oldest_age(&lone(11)), &c));
}

#[test]
fn without_core_threads_extras_take_work_at_once() {
    let c = PolicyConfig { min_threads: 0, ..cfg() };
    assert!(extras_may_take(1, Duration::ZERO, &c));
    assert!(!extras_may_take(0, Duration::ZERO, &c));
}

#[test]
fn backlog_rule_weighs_queue_length_by_run_time() {
    let t0 = Instant::now();
    let backlog = PolicyConfig { rule: SpawnRule::Backlog, ..cfg() };
    let base = Observation {
        queued: 50,
        oldest_enqueued: Some(t0),
        mean_run: Some(Duration::from_millis(1)),
        ..obs(t0, 11)
    };
    // 50 tasks of 1 ms on one thread: 50 ms to drain, and waiting: spawn.
    assert_eq!(decide(&base, &backlog).action, Action::Spawn(SpawnReason::Backlog));
    // 50 tasks of 10 µs drain in 0.5 ms < spawn_delay: no spawn.
    let tiny = Observation { mean_run: Some(Duration::from_micros(10)), ..base.clone() };
    assert_eq!(decide(&tiny, &backlog).action, Action::None);
    // Not yet waited one spawn delay: no spawn.
    let fresh = Observation { now: t0 + Duration::from_millis(5), ..base.clone() };
    assert_eq!(decide(&fresh, &backlog).action, Action::None);
    // With 3 threads the article's rule wants 30 ms of age; the backlog
    // rule does not multiply by the thread count.
    let three = Observation { threads: 3, ..base.clone() };
    assert_eq!(decide(&three, &backlog).action, Action::Spawn(SpawnReason::Backlog));
    assert_eq!(decide(&three, &cfg()).action, Action::None);
    // No run time known yet: falls back to the age test.
    let unknown = Observation { mean_run: None, ..base };
    assert_eq!(decide(&unknown, &backlog).action, Action::Spawn(SpawnReason::QueueAge));
}

#[test]
fn looks_again_when_the_oldest_task_crosses_a_threshold() {
    let t0 = Instant::now();
    let c = PolicyConfig { check_interval: Duration::from_millis(5), ..cfg() };
    // 2 threads, spawn threshold 20 ms, oldest task 18 ms old: look in 2 ms.
    let o = Observation { threads: 2, queued: 10, oldest_enqueued: Some(t0), ..obs(t0, 18) };
    assert_eq!(decide(&o, &c).next_check, Some(Duration::from_millis(2)));
    // A parked extra and a 7 ms old queue: the extras' gate opens at 10 ms.
    let e = Observation {
        threads: 2,
        queued: 10,
        oldest_enqueued: Some(t0),
        newest_idle_extra: Some((1, t0)),
        ..obs(t0, 7)
    };
    assert_eq!(decide(&e, &c).next_check, Some(Duration::from_millis(3)));
    // Thresholds already behind: the periodic check.
    let late = Observation { threads: 4, ..o.clone() };
    let late = Observation { now: t0 + Duration::from_millis(100), ..late };
    assert_eq!(decide(&late, &c).next_check, Some(Duration::from_millis(5)));
}

#[test]
fn starts_core_threads_first() {
    let t0 = Instant::now();
    let o = Observation { threads: 0, ..obs(t0, 0) };
    assert_eq!(decide(&o, &cfg()).action, Action::Spawn(SpawnReason::Core));
}

#[test]
fn no_spawn_until_queue_is_old_and_longer_than_threads() {
    let t0 = Instant::now();
    // Long queue, but young.
    let young = Observation { queued: 50, oldest_enqueued: Some(t0), ..obs(t0, 5) };
    assert_eq!(decide(&young, &cfg()).action, Action::None);
    // Old, but no more tasks than threads.
    let short = Observation { queued: 1, oldest_enqueued: Some(t0), ..obs(t0, 500) };
    assert_eq!(decide(&short, &cfg()).action, Action::None);
    // Old and long: spawn.
    let both = Observation { queued: 50, oldest_enqueued: Some(t0), ..obs(t0, 11) };
    assert_eq!(decide(&both, &cfg()).action, Action::Spawn(SpawnReason::QueueAge));
    // With 2 threads the age threshold doubles.
    let two = Observation { threads: 2, ..both.clone() };
    assert_eq!(decide(&two, &cfg()).action, Action::None);
    let two_later =
        Observation { threads: 2, ..Observation { now: t0 + Duration::from_millis(21), ..both } };
    assert_eq!(decide(&two_later, &cfg()).action, Action::Spawn(SpawnReason::QueueAge));
}

#[test]
fn one_spawn_at_a_time_spaced_and_capped() {
    let t0 = Instant::now();
    let loaded = Observation { queued: 1000, oldest_enqueued: Some(t0), ..obs(t0, 1000) };
    let spawning = Observation { spawning: true, ..loaded.clone() };
    assert_eq!(decide(&spawning, &cfg()).action, Action::None);
    let recent =
        Observation { last_spawn: Some(t0 + Duration::from_millis(995)), ..loaded.clone() };
    assert_eq!(decide(&recent, &cfg()).action, Action::None);
    let capped = Observation { threads: 4, ..loaded };
    assert_eq!(decide(&capped, &cfg()).action, Action::None);
}

#[test]
fn idle_extras_retire_after_timeout_and_core_never() {
    let t0 = Instant::now();
    let idle = Observation { threads: 2, newest_idle_extra: Some((1, t0)), ..obs(t0, 50) };
    let d = decide(&idle, &cfg());
    assert_eq!(d.action, Action::None);
    // The next look: the next replay's (the others may be underused), or
    // the thread's idle time up, whichever comes first.
    let c = cfg();
    let replay = (c.idle_timeout / 8).max(c.check_interval);
    assert_eq!(d.next_check, Some(replay.min(Duration::from_millis(50))));
    let later = Observation { now: t0 + Duration::from_millis(100), ..idle };
    assert_eq!(decide(&later, &cfg()).action, Action::Retire(1, RetireReason::IdleTimeout));
    // Only core threads left: nothing to do, sleep until nudged.
    let core_only = obs(t0, 10_000);
    assert_eq!(decide(&core_only, &cfg()), Decision { action: Action::None, next_check: None });
}
