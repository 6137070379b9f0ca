//! The scaling decision: a pure function of what the pool looks like now.
//!
//! The supervisor thread gathers an [`Observation`] under the pool lock and asks
//! [`decide`] what to do; the mechanism in `pool.rs` carries the answer out.
//! Nothing here reads a clock or touches a thread, so tests drive it with
//! made-up instants (a fake clock).
//!
//! The rule is the one from the queue-age article: start one more thread only
//! when the queue holds more tasks than there are threads *and* the oldest
//! queued task has waited longer than `spawn_delay × threads`; start them one at
//! a time, at least `spawn_delay` apart, never more than `max_threads`. Extra
//! (non-core) threads idle for `idle_timeout` retire, newest first.

use std::time::{Duration, Instant};

/// Tunables of the policy (copied from the pool options).
#[derive(Debug, Clone)]
pub struct PolicyConfig {
    /// Core threads: started at once, never retired.
    pub min_threads: usize,
    /// Upper bound on threads.
    pub max_threads: usize,
    /// Queue-age unit of the spawn rule, and the minimum spacing of spawns.
    pub spawn_delay: Duration,
    /// How long an extra thread may idle before it retires.
    pub idle_timeout: Duration,
    /// How often to look again while there is something to watch.
    pub check_interval: Duration,
}

/// What the policy may look at.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The current time (real or fake).
    pub now: Instant,
    /// Tasks waiting in the queue.
    pub queued: usize,
    /// When the oldest queued task was enqueued.
    pub oldest_enqueued: Option<Instant>,
    /// Live threads, core and extra.
    pub threads: usize,
    /// True while a spawned thread has not yet started running.
    pub spawning: bool,
    /// When the last thread was spawned.
    pub last_spawn: Option<Instant>,
    /// After a failed spawn: no new attempt before this instant.
    pub spawn_backoff_until: Option<Instant>,
    /// The newest extra thread that is idle, and since when: `(seat, idle_since)`.
    pub newest_idle_extra: Option<(usize, Instant)>,
}

/// Why a thread is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnReason {
    /// Fewer threads than `min_threads` (start-up, or replacing a lost one).
    Core,
    /// The queue-age rule fired.
    QueueAge,
}

/// Why a thread is retired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetireReason {
    /// An extra thread stayed idle for `idle_timeout`.
    IdleTimeout,
}

impl SpawnReason {
    /// The name reported to JavaScript.
    pub fn as_str(self) -> &'static str {
        match self {
            SpawnReason::Core => "core",
            SpawnReason::QueueAge => "queue-age",
        }
    }
}

impl RetireReason {
    /// The name reported to JavaScript.
    pub fn as_str(self) -> &'static str {
        match self {
            RetireReason::IdleTimeout => "idle-timeout",
        }
    }
}

/// What to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    None,
    /// Start one thread.
    Spawn(SpawnReason),
    /// Retire the thread in this seat.
    Retire(usize, RetireReason),
}

/// The policy's answer: an action and when to ask again (`None`: only when nudged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// What to do now.
    pub action: Action,
    /// How long the supervisor may sleep before asking again.
    pub next_check: Option<Duration>,
}

/// Age of the oldest queued task.
pub fn oldest_age(obs: &Observation) -> Duration {
    obs.oldest_enqueued.map(|t| obs.now.saturating_duration_since(t)).unwrap_or_default()
}

/// May an idle *extra* (non-core) thread be woken for queued work?
///
/// The article's "the queue exceeds the capacity of one thread" test: more
/// than one task is waiting and the oldest has waited longer than
/// `spawn_delay`. Until then the core threads (the most senior first) take
/// everything, keeping their caches warm and the extras asleep. An extra that
/// is already running keeps taking tasks until the queue is empty.
pub fn extras_may_take(queued: usize, oldest_age: Duration, cfg: &PolicyConfig) -> bool {
    queued > 1 && oldest_age > cfg.spawn_delay
}

/// The decision for `obs` under `cfg`.
pub fn decide(obs: &Observation, cfg: &PolicyConfig) -> Decision {
    let action = choose(obs, cfg);
    let next_check = if obs.queued > 0 || obs.spawning || action != Action::None {
        Some(cfg.check_interval)
    } else if let Some((_, idle_since)) = obs.newest_idle_extra {
        // Sleep until that thread's idle time is up, but not past one interval.
        let elapsed = obs.now.saturating_duration_since(idle_since);
        Some(cfg.idle_timeout.saturating_sub(elapsed).max(cfg.check_interval))
    } else if obs.threads > cfg.min_threads {
        // Busy extra threads: look again later to retire them when they idle.
        Some(cfg.idle_timeout.max(cfg.check_interval))
    } else {
        None
    };
    Decision { action, next_check }
}

fn choose(obs: &Observation, cfg: &PolicyConfig) -> Action {
    if obs.spawning || obs.spawn_backoff_until.is_some_and(|t| obs.now < t) {
        return Action::None; // one spawn at a time; none while backing off
    }
    if obs.threads < cfg.min_threads.min(cfg.max_threads) {
        return Action::Spawn(SpawnReason::Core);
    }
    let spaced = obs.last_spawn.is_none_or(|t| obs.now.saturating_duration_since(t) >= cfg.spawn_delay);
    let threshold = cfg.spawn_delay * obs.threads.max(1) as u32;
    if obs.threads < cfg.max_threads && obs.queued > obs.threads && oldest_age(obs) > threshold && spaced {
        return Action::Spawn(SpawnReason::QueueAge);
    }
    if let Some((seat, idle_since)) = obs.newest_idle_extra {
        if obs.queued == 0 && obs.now.saturating_duration_since(idle_since) >= cfg.idle_timeout {
            return Action::Retire(seat, RetireReason::IdleTimeout);
        }
    }
    Action::None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> PolicyConfig {
        PolicyConfig {
            min_threads: 1,
            max_threads: 4,
            spawn_delay: Duration::from_millis(10),
            idle_timeout: Duration::from_millis(100),
            check_interval: Duration::from_millis(5),
        }
    }

    fn obs(t0: Instant, now_ms: u64) -> Observation {
        Observation {
            now: t0 + Duration::from_millis(now_ms),
            queued: 0,
            oldest_enqueued: None,
            threads: 1,
            spawning: false,
            last_spawn: None,
            spawn_backoff_until: None,
            newest_idle_extra: None,
        }
    }

    #[test]
    fn no_spawn_attempt_while_backing_off_after_a_failure() {
        let t0 = Instant::now();
        let loaded = Observation { queued: 1000, oldest_enqueued: Some(t0), ..obs(t0, 1000) };
        let backing_off = Observation { spawn_backoff_until: Some(t0 + Duration::from_millis(1010)), ..loaded.clone() };
        assert_eq!(decide(&backing_off, &cfg()).action, Action::None);
        let after = Observation { now: t0 + Duration::from_millis(1010), ..backing_off };
        assert_eq!(decide(&after, &cfg()).action, Action::Spawn(SpawnReason::QueueAge));
    }

    #[test]
    fn extras_wait_until_the_queue_exceeds_one_thread() {
        let c = cfg();
        assert!(!extras_may_take(1, Duration::from_secs(1), &c), "one task: a core thread can take it");
        assert!(!extras_may_take(100, Duration::from_millis(5), &c), "young queue: the core keeps up");
        assert!(extras_may_take(2, Duration::from_millis(11), &c));
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
        let two_later = Observation { threads: 2, ..Observation { now: t0 + Duration::from_millis(21), ..both } };
        assert_eq!(decide(&two_later, &cfg()).action, Action::Spawn(SpawnReason::QueueAge));
    }

    #[test]
    fn one_spawn_at_a_time_spaced_and_capped() {
        let t0 = Instant::now();
        let loaded = Observation { queued: 1000, oldest_enqueued: Some(t0), ..obs(t0, 1000) };
        let spawning = Observation { spawning: true, ..loaded.clone() };
        assert_eq!(decide(&spawning, &cfg()).action, Action::None);
        let recent = Observation { last_spawn: Some(t0 + Duration::from_millis(995)), ..loaded.clone() };
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
        assert_eq!(d.next_check, Some(Duration::from_millis(50)));
        let later = Observation { now: t0 + Duration::from_millis(100), ..idle };
        assert_eq!(decide(&later, &cfg()).action, Action::Retire(1, RetireReason::IdleTimeout));
        // Only core threads left: nothing to do, sleep until nudged.
        let core_only = obs(t0, 10_000);
        assert_eq!(decide(&core_only, &cfg()), Decision { action: Action::None, next_check: None });
    }
}
