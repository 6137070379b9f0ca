//! The supervisor thread: runs the scaling [`policy`](crate::policy) on what
//! it observes, starts threads one at a time (with backoff when the OS
//! refuses), retires idle extras and wakes parked ones when the core threads
//! fall behind.

use std::time::{Duration, Instant};

use super::state::{
    extras_allowed, newest_idle_extra, note_exit, pick_parked, Lifecycle, Seat, Shared, State,
};
use super::worker::{worker_main, HOLD_COMPLETIONS};
use super::{PoolEvent, THREAD_NAME_PREFIX};
use crate::policy::{self, Action, Observation, RetireReason, SpawnReason};
use crate::sync::thread;
use crate::sync::Arc;

/// Starts one worker in a free seat. Called by the constructor and the supervisor.
pub(super) fn spawn_worker(shared: &Arc<Shared>, reason: SpawnReason) -> std::io::Result<()> {
    let mut st = shared.lock();
    let Some(seat) = st.seats.iter().position(|s| !s.occupied) else {
        return Ok(());
    };
    let thread_id = st.next_thread_id;
    st.next_thread_id += 1;
    let generation = st.next_generation;
    st.next_generation += 1;
    let core = st.threads < shared.config.policy.min_threads;
    st.seats[seat] = Seat { occupied: true, thread_id, generation, core, ..Seat::default() };
    st.threads += 1;
    st.spawning = true;
    // Counted before the thread exists: it may run before we lock again.
    st.starting += 1;
    st.last_spawn = Some(Instant::now());
    drop(st);

    let injected_failure =
        shared.config.fail_spawns_after.is_some_and(|n| shared.lock().spawned >= n);
    let spawned = if injected_failure {
        Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "Resource temporarily unavailable (EAGAIN, injected)",
        ))
    } else {
        let worker_shared = shared.clone();
        thread::Builder::new()
            .name(format!("{THREAD_NAME_PREFIX}{thread_id}"))
            .spawn(move || worker_main(&worker_shared, seat))
    };

    let mut st = shared.lock();
    match spawned {
        Ok(handle) => {
            // The OS thread exists and `threads` counts it: the next spawn
            // need not wait for it to be scheduled, which on a busy
            // machine takes longer than making it.
            st.spawning = false;
            st.spawned += 1;
            st.spawns_by_reason[reason.index()] += 1;
            st.spawn_failures_in_a_row = 0;
            if st.seats[seat].exited {
                st.finished.push(handle);
            } else {
                st.seats[seat].handle = Some(handle);
            }
            let threads = st.threads;
            drop(st);
            shared.emit(PoolEvent::Spawn { thread_id, threads, reason });
            Ok(())
        }
        Err(e) => {
            st.seats[seat] = Seat::default();
            st.threads -= 1;
            st.spawning = false;
            st.starting -= 1;
            st.spawn_errors += 1;
            // Back off before the next attempt: 10 ms, doubling up to 1 s, so
            // a system out of threads is not asked again every check.
            let backoff = Duration::from_millis(10 << st.spawn_failures_in_a_row.min(7))
                .min(Duration::from_secs(1));
            st.spawn_failures_in_a_row += 1;
            st.spawn_backoff_until = Some(Instant::now() + backoff);
            let threads = st.threads;
            drop(st);
            shared.emit(PoolEvent::SpawnError { threads, error: e.to_string() });
            shared.exit_cv.notify_all();
            Err(e)
        }
    }
}

pub(super) fn supervisor_main(shared: &Arc<Shared>) {
    let cfg = shared.config.policy.clone();
    let mut st = shared.lock();
    while supervising(&st) {
        let now = Instant::now();
        if st.replay.due(now, &cfg) {
            let mean_run = shared.mean_run().map(|ns| Duration::from_nanos(ns as u64));
            let age = now.saturating_duration_since(shared.epoch);
            let input =
                policy::ReplayInput::of(&st.arrivals, shared.millis(now), age, mean_run, &cfg);
            st.replay.at = Some(now);
            st.replay.needed = None;
            if let Some(input) = input {
                // The replay runs without the lock: the counts are copied,
                // and submits go on meanwhile.
                drop(st);
                let needed = input.needed();
                st = shared.lock();
                st.replay.needed = Some(needed);
                // Look again from the top: close() or tasks queued
                // meanwhile saw an awake supervisor and did not wait for it
                // to hear, so it must check the lifecycle again and judge
                // the queue by the clock as it is now.
                continue;
            }
        }
        // Parts of a running task that idle threads may take: once per look.
        let parts = shared.parts.backlog();
        let obs = observe(shared, &st, now, parts);
        let mut decision = policy::decide(&obs, &cfg);
        // Work held up behind a running task: parts of it, or tasks of a
        // batch whose thread runs one that proved long (batch.rs).
        // And tasks of the queue when no thread has taken any for longer
        // than a few tasks' run (so a queue of long tasks, taken one per
        // run, is the rule's to size; and while no run time is known, so
        // is any queue): from the later of the last take and the oldest's
        // arrival.
        let runs = shared.mean_run().map(|ns| Duration::from_nanos(ns as u64));
        let queue_since = st.queue.front().zip(runs).map(|(t, run)| {
            let since = st.last_take.map_or(t.enqueued_at, |take| take.max(t.enqueued_at));
            since + run * 4
        });
        let batch_since = match (shared.batches.held_up_since(), queue_since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let stuck_since = match (parts.1.filter(|_| parts.0 > 0), batch_since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let parts_at = held_up_spawn_at(stuck_since, &st, &cfg);
        let batch_waited = batch_since.is_some_and(|t| t + cfg.spawn_delay <= now);
        if decision.action == Action::None && batch_waited && st.wakes_pending == 0 {
            // A batch's tasks (or the queue's) have waited a spawn delay
            // behind long tasks: a parked thread takes them if there is one.
            if let Some(seat) = pick_parked(&mut st, true) {
                shared.seat_cvs[seat].notify_one();
            }
        }
        if let Some(since) = batch_since {
            // Look again once it has waited a spawn delay (a full pool's
            // rule may have nothing to look for), or soon if it has.
            let due = (since + cfg.spawn_delay)
                .saturating_duration_since(now)
                .max(cfg.check_interval.max(Duration::from_micros(100)));
            decision.next_check = Some(decision.next_check.map_or(due, |next| next.min(due)));
        }
        if decision.action == Action::None
            && st.starting == 0
            && st.wakes_pending == 0
            && parts_at.is_some_and(|at| at <= now)
        {
            // Parts of a big task, or a batch's tasks behind a long one,
            // have waited a spawn delay for an idle thread: start one,
            // whatever the rule's sizing says (its mean run time is the
            // small tasks', not the parts' nor the long one's); one at a
            // time, each once the last has run and could take some.
            decision.action = Action::Spawn(SpawnReason::QueueAge);
        } else if let Some(at) = parts_at {
            // Look again then, whatever the rule said (it may sleep until
            // the next submit); a thread still starting, a little later,
            // when it is up.
            let at = if st.starting > 0 { at.max(now + Duration::from_millis(1)) } else { at };
            let due = at.saturating_duration_since(now).max(Duration::from_micros(100));
            decision.next_check = Some(decision.next_check.map_or(due, |next| next.min(due)));
        }
        if matches!(decision.action, Action::Spawn(_))
            && shared.share_waiting.load(std::sync::atomic::Ordering::Relaxed) > 0
        {
            // The machine's budget, not this pool, is short of threads: a
            // new one would only wait for a share too. Look again soon.
            decision.action = Action::None;
            decision.next_check = Some(cfg.check_interval.max(Duration::from_millis(1)));
        }
        match decision.action {
            Action::Spawn(reason) => {
                drop(st);
                // Failures are counted and reported by spawn_worker; the pool
                // goes on with the threads it has and tries again later.
                let _ = spawn_worker(shared, reason);
                st = shared.lock();
                continue;
            }
            Action::None
                if extras_allowed(&mut st, obs.queued, policy::oldest_age(&obs), now, &cfg) =>
            {
                // Tasks have waited too long for the core threads alone: put
                // parked extras to work, most senior first, as many as needed.
                let mut woken = Vec::new();
                while st.queue.len() > st.spinning + st.wakes_pending {
                    match pick_parked(&mut st, true) {
                        Some(seat) => woken.push(seat),
                        None => break,
                    }
                }
                for seat in woken {
                    shared.seat_cvs[seat].notify_one();
                }
            }
            Action::None => {}
            Action::Retire(seat, reason) => {
                // An idle one leaves at once; a busy one (retired by use)
                // once it finds the queue empty, and no wake picks it.
                let s = &mut st.seats[seat];
                let idle_or_by_use = s.parked || reason == RetireReason::Underused;
                if s.occupied && !s.core && !s.retire && idle_or_by_use {
                    s.retire = true;
                    s.retire_reason = reason;
                    shared.seat_cvs[seat].notify_one();
                }
            }
        }
        // A result a worker holds back waits no longer than a hold, even
        // if the worker's next task proves long: its wake is given here.
        if let Some(waited) = shared.completions.unwoken_for() {
            if waited >= HOLD_COMPLETIONS {
                shared.completions.wake();
            } else {
                let due = HOLD_COMPLETIONS - waited;
                decision.next_check = Some(decision.next_check.map_or(due, |next| next.min(due)));
            }
        }
        st = match decision.next_check {
            Some(timeout) => {
                st.supervisor_wakes_at = Some(now + timeout);
                let mut st = shared
                    .supervisor_cv
                    .wait_timeout(st, timeout)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                st.supervisor_wakes_at = None;
                st
            }
            None => {
                st.supervisor_sleeping = true;
                let mut st = shared.supervisor_cv.wait(st).unwrap_or_else(|e| e.into_inner());
                st.supervisor_sleeping = false;
                st
            }
        };
    }
    st.supervisor_exited = true;
    let last = note_exit(shared, &mut st);
    drop(st);
    if last {
        shared.completions.wake();
    }
}

/// When a thread may be started for work held up behind a running task
/// (a job's unclaimed parts, a batch's tasks), waiting `since`: once it has
/// waited a spawn delay, and a failed spawn's back-off is over; None when
/// none may be (nothing held up, a full pool, one not running).
fn held_up_spawn_at(
    since: Option<Instant>,
    st: &State,
    cfg: &policy::PolicyConfig,
) -> Option<Instant> {
    let since = since?;
    if st.threads >= cfg.max_threads || st.lifecycle != Lifecycle::Running {
        return None;
    }
    let waited = since + cfg.spawn_delay;
    Some(st.spawn_backoff_until.map_or(waited, |until| waited.max(until)))
}

/// Whether the supervisor still has a job: the pool runs, or it is closing
/// with tasks queued and no thread left to run them (a pool with
/// `min_threads == 0` whose threads had all retired); then it starts one,
/// as the policy says, since `close()` promises to finish the queue.
pub(super) fn supervising(st: &State) -> bool {
    match st.lifecycle {
        Lifecycle::Running => true,
        Lifecycle::Closing => st.threads == 0 && !st.queue.is_empty(),
        Lifecycle::Stopping => false,
    }
}

/// What the policy looks at; `(parts, parts_since)` is the board's backlog
/// (`Board::backlog`), counted as queued work.
pub(super) fn observe(
    shared: &Shared,
    st: &State,
    now: Instant,
    (parts, parts_since): (usize, Option<Instant>),
) -> Observation {
    let mean_run = shared.mean_run().map(|ns| Duration::from_nanos(ns as u64));
    let threads_needed = st.replay.needed.zip(st.replay.at);
    // One retirement by use at a time: the next once this one has left.
    let leaving = st.seats.iter().any(|s| s.occupied && s.retire);
    let junior_extra = st
        .seats
        .iter()
        .enumerate()
        .filter(|(_, s)| s.occupied && !s.core && !s.retire && !leaving)
        .max_by_key(|(_, s)| s.generation)
        .map(|(i, _)| i);
    let newest_idle_extra = newest_idle_extra(st);
    // Parts of a running task that idle threads may take count as queued
    // work: threads are started for them as for tasks.
    let oldest_task = st.queue.front().map(|t| t.enqueued_at);
    Observation {
        now,
        queued: st.queue.len() + parts,
        oldest_enqueued: match (oldest_task, parts_since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        },
        threads: st.threads,
        spawning: st.spawning,
        last_spawn: st.last_spawn,
        spawn_backoff_until: st.spawn_backoff_until,
        mean_run,
        newest_idle_extra,
        arrival_rate: st.arrivals.rate(shared.millis(now)),
        recent_arrival_rate: st.arrivals.recent_rate(shared.millis(now)),
        threads_needed,
        junior_extra,
        memory_waiting: shared.memory.usage().1,
    }
}
