//! The scaling decision: a pure function of what the pool looks like now.
//!
//! The supervisor thread gathers an [`Observation`] under the pool lock and asks
//! [`decide`] what to do; the mechanism in `pool/` carries the answer out.
//! Nothing here reads a clock or touches a thread, so tests drive it with
//! made-up instants (a fake clock).
//!
//! The article's rule ([`SpawnRule::QueueAge`]): start one more thread only
//! when the queue holds more tasks than there are threads *and* the oldest
//! queued task has waited longer than `spawn_delay × threads`; start them
//! one at a time, at least `spawn_delay` apart, never more than
//! `max_threads`. Extra (non-core) threads idle for `idle_timeout` retire,
//! newest first, under every rule.
//!
//! [`SpawnRule::Backlog`] replaces the age test with an estimate of how long
//! the backlog takes to drain (`queued × mean run time / threads`). Under a
//! slight overload the oldest task ages slowly, and the article's `× threads`
//! factor makes each further spawn wait longer than the last (the n-th spawn
//! waits about n² times longer); the backlog estimate grows with the queue
//! itself and does not have that factor.
//!
//! [`SpawnRule::Demand`], the default, keeps queue age as the trigger (the oldest task has
//! waited longer than `spawn_delay`) but sizes the answer: it starts threads,
//! back to back, until the pool has the threads the load needs by Little's
//! law (arrival rate × mean run time) plus those that drain the backlog
//! within [`drain_horizon`]. The rate is taken over the last 32 ms; while
//! tasks queue beyond the threads, over the last 8 ms when that is higher,
//! so that a rise is sized before its queue builds for 32 ms. Rust threads start in tens of microseconds, so
//! the article's one-per-`spawn_delay` pacing only makes a many-core pool
//! late; sizing from the arrival rate keeps it from overshooting.
//!
//! Extras retire by idleness (`idle_timeout` without a task) and, under
//! every rule, by use: under a bursty load each extra is handed a task now
//! and then and never idles that long. So the supervisor replays the last
//! `idle_timeout` of arrivals (up to [`arrivals::HISTORY_MS`]) against
//! pools of fixed sizes ([`threads_needed`]: the fewest threads that would
//! have served them within [`wait_bound`]), and while the pool has more
//! than [`SPARE_THREADS`] beyond that, its queue is no longer than its
//! threads and the replay is newer than the last spawn, the most junior
//! extra (the one the senior-first wakes use least) retires, one at a
//! time. Bursts that come back within `idle_timeout` stay in the replay:
//! the threads they need are kept. (Telling a load that fell for good
//! from one that comes back within `idle_timeout` needs a longer look than
//! `idle_timeout` itself: the replay does not try.) The supervisor replays
//! every `idle_timeout / 8` while extras live, idle ones included.

use std::time::{Duration, Instant};

pub mod arrivals;
mod replay;
pub mod sim;

pub use arrivals::ArrivalWindow;
pub use replay::{threads_needed, wait_bound, Replay, ReplayInput, REPLAY_TASKS, SPARE_THREADS};

/// Which test starts an extra thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpawnRule {
    /// The article's: oldest queued task older than `spawn_delay × threads`.
    QueueAge,
    /// Estimated time to drain the queue with the current threads
    /// (`queued × mean run time / threads`) longer than `spawn_delay`.
    Backlog,
    /// Oldest queued task older than `spawn_delay`, and fewer threads than
    /// [`demand`] says the load needs: start them back to back. The default:
    /// measured against the others at 2 to 32 threads (BENCHMARKS.md, the
    /// 32-thread runs in docs/benchmarks-history.md).
    #[default]
    Demand,
}

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
    /// Which test starts an extra thread.
    pub rule: SpawnRule,
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
    /// True while a thread is being created (one at a time; the next
    /// may start once the OS has made it, before it is first scheduled).
    pub spawning: bool,
    /// When the last thread was spawned.
    pub last_spawn: Option<Instant>,
    /// After a failed spawn: no new attempt before this instant.
    pub spawn_backoff_until: Option<Instant>,
    /// Recent mean run time of a task (None until tasks have run).
    pub mean_run: Option<Duration>,
    /// The newest extra thread that is idle, and since when: `(seat, idle_since)`.
    pub newest_idle_extra: Option<(usize, Instant)>,
    /// Tasks submitted per second over the last [`ArrivalWindow`] (0 when none).
    pub arrival_rate: f64,
    /// The same over its last [`arrivals::RECENT_MS`] only.
    pub recent_arrival_rate: f64,
    /// The fewest threads that would have served the last `idle_timeout`
    /// of arrivals within [`wait_bound`] ([`threads_needed`]), and when
    /// that replay was made; None when not known ([`ReplayInput::of`]).
    pub threads_needed: Option<(usize, Instant)>,
    /// The most junior extra thread, when no thread is leaving (threads
    /// retire by use one at a time).
    pub junior_extra: Option<usize>,
    /// Threads waiting for working memory under `max_working_bytes` before
    /// they run their task: while any does, the bound, not the threads,
    /// holds the queue back, and a new thread would wait beside them.
    pub memory_waiting: usize,
}

/// Why a thread is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnReason {
    /// Fewer threads than `min_threads` (start-up, or replacing a lost one).
    Core,
    /// The queue-age rule fired.
    QueueAge,
    /// The backlog rule fired.
    Backlog,
    /// The demand rule fired.
    Demand,
}

/// Why a thread is retired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetireReason {
    /// An extra thread stayed idle for `idle_timeout`.
    #[default]
    IdleTimeout,
    /// Fewer threads would have served the last `idle_timeout` of arrivals
    /// ([`threads_needed`]): the most junior extra, idle or not.
    Underused,
}

impl SpawnReason {
    /// Every reason, in the order of [`SpawnReason::index`].
    pub const ALL: [SpawnReason; 4] =
        [SpawnReason::Core, SpawnReason::QueueAge, SpawnReason::Backlog, SpawnReason::Demand];

    /// Its place in [`SpawnReason::ALL`] (a counter per reason).
    pub fn index(self) -> usize {
        match self {
            SpawnReason::Core => 0,
            SpawnReason::QueueAge => 1,
            SpawnReason::Backlog => 2,
            SpawnReason::Demand => 3,
        }
    }

    /// The name reported to JavaScript.
    pub fn as_str(self) -> &'static str {
        match self {
            SpawnReason::Core => "core",
            SpawnReason::QueueAge => "queue-age",
            SpawnReason::Backlog => "backlog",
            SpawnReason::Demand => "demand",
        }
    }
}

impl RetireReason {
    /// The name reported to JavaScript.
    pub fn as_str(self) -> &'static str {
        match self {
            RetireReason::IdleTimeout => "idle-timeout",
            RetireReason::Underused => "underused",
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
/// The article's "the queue exceeds the capacity of one thread" test, read
/// as a bound on waiting: a task is queued and the oldest has waited longer
/// than `spawn_delay`, so the core threads are not getting to it. Until then
/// the core threads (the most senior first) take everything, keeping their
/// caches warm and the extras asleep. A task never waits much longer than
/// `spawn_delay` while an extra thread idles, not even a lone task behind a
/// long one on the core thread. A pool without core threads
/// (`min_threads == 0`) has nobody else to wait for: its extras take work at
/// once. An extra that is already running keeps taking tasks until the queue
/// is empty.
pub fn extras_may_take(queued: usize, oldest_age: Duration, cfg: &PolicyConfig) -> bool {
    queued > 0 && (cfg.min_threads == 0 || oldest_age > cfg.spawn_delay)
}

/// How long idle extra threads stay eligible for new work after
/// [`extras_may_take`] last held: `10 × spawn_delay`.
///
/// Without it, a steady load between one and two threads' worth makes the
/// extra thread park between tasks and every few tasks wait `spawn_delay` for
/// the gate to reopen. With it, the gate only decides when the extras are
/// first needed; once the backlog has gone for this long, the core threads
/// take everything again (and an unused extra retires after `idle_timeout`).
pub fn extras_window(cfg: &PolicyConfig) -> Duration {
    cfg.spawn_delay * 10
}

/// The decision for `obs` under `cfg`.
pub fn decide(obs: &Observation, cfg: &PolicyConfig) -> Decision {
    let action = choose(obs, cfg);
    let next_check = if obs.queued > 0 || obs.spawning || action != Action::None {
        Some(next_backlog_check(obs, cfg))
    } else if let Some((_, idle_since)) = obs.newest_idle_extra {
        // Sleep until that thread's idle time is up, but not past one
        // interval, nor past the next replay (the others may be underused).
        let elapsed = obs.now.saturating_duration_since(idle_since);
        let idle_up = cfg.idle_timeout.saturating_sub(elapsed).max(cfg.check_interval);
        Some(idle_up.min(replay_interval(cfg)))
    } else if obs.threads > cfg.min_threads {
        // Busy extra threads: look again later, to retire them when they
        // idle or when the replay finds fewer would do (see [`Replay`]).
        Some(replay_interval(cfg))
    } else {
        None
    };
    Decision { action, next_check }
}

/// How often the supervisor looks at a pool with extras, to replay the
/// arrivals and retire what they did not need.
fn replay_interval(cfg: &PolicyConfig) -> Duration {
    (cfg.idle_timeout / 8).max(cfg.check_interval)
}

/// How far ahead the demand rule plans to drain a backlog: `10 × spawn_delay`.
pub fn drain_horizon(cfg: &PolicyConfig) -> Duration {
    cfg.spawn_delay * 10
}

/// The threads the load needs (at least 1, at most `max_threads`): the
/// arrival rate times the mean run time (busy threads by Little's law),
/// plus the threads that drain the queued tasks within [`drain_horizon`].
/// While the queue is longer than the threads, the rate is the recent one
/// when that is higher ([`arrivals::RECENT_MS`]).
pub fn demand(obs: &Observation, mean_run: Duration, cfg: &PolicyConfig) -> usize {
    let run = mean_run.as_secs_f64();
    // A queue no longer than the threads is the jitter of a busy pool (each
    // task waits for one run at most), not a backlog to add threads for.
    let behind = obs.queued > obs.threads;
    let rate =
        if behind { obs.arrival_rate.max(obs.recent_arrival_rate) } else { obs.arrival_rate };
    let busy = rate * run;
    let backlog = if behind { obs.queued } else { 0 };
    let drain = backlog as f64 * run / drain_horizon(cfg).as_secs_f64().max(1e-6);
    ((busy + drain - 1e-9).ceil() as usize).clamp(1, cfg.max_threads)
}

/// The rule's own test (the queue is already known to exceed the threads).
fn spawn_test(obs: &Observation, cfg: &PolicyConfig) -> Option<SpawnReason> {
    let threads = obs.threads.max(1) as u32;
    let age_rule =
        || (oldest_age(obs) > cfg.spawn_delay * threads).then_some(SpawnReason::QueueAge);
    match (cfg.rule, obs.mean_run) {
        (SpawnRule::QueueAge, _) | (SpawnRule::Backlog | SpawnRule::Demand, None) => age_rule(),
        (SpawnRule::Demand, Some(mean_run)) => (oldest_age(obs) > cfg.spawn_delay
            && obs.threads < demand(obs, mean_run, cfg))
        .then_some(SpawnReason::Demand),
        (SpawnRule::Backlog, Some(mean_run)) => {
            // The oldest task must have waited at least one spawn delay, so
            // that a burst the threads drain at once starts nothing.
            let drain = mean_run.mul_f64(obs.queued as f64 / threads as f64);
            (drain > cfg.spawn_delay && oldest_age(obs) > cfg.spawn_delay)
                .then_some(SpawnReason::Backlog)
        }
    }
}

/// While tasks are queued: look again after `check_interval`, or sooner, at
/// the instant the oldest task crosses a threshold that is still ahead (the
/// extras' gate, the spawn threshold), so that acting on it does not wait
/// for the next periodic check.
fn next_backlog_check(obs: &Observation, cfg: &PolicyConfig) -> Duration {
    let mut wait = cfg.check_interval;
    if obs.oldest_enqueued.is_some() {
        let age = oldest_age(obs);
        let mut ahead = |threshold: Duration| {
            if age < threshold {
                wait = wait.min(threshold - age);
            }
        };
        if obs.newest_idle_extra.is_some() {
            ahead(cfg.spawn_delay);
        }
        if obs.threads < cfg.max_threads {
            match cfg.rule {
                SpawnRule::Demand if obs.queued > 0 => ahead(cfg.spawn_delay),
                _ if obs.queued > obs.threads => ahead(cfg.spawn_delay * obs.threads.max(1) as u32),
                _ => {}
            }
        }
    }
    // Never spin: timers are not finer than this anyway.
    wait.max(Duration::from_micros(50))
}

fn choose(obs: &Observation, cfg: &PolicyConfig) -> Action {
    if obs.spawning || obs.spawn_backoff_until.is_some_and(|t| obs.now < t) {
        return Action::None; // one spawn at a time; none while backing off
    }
    if obs.threads < cfg.min_threads.min(cfg.max_threads) {
        return Action::Spawn(SpawnReason::Core);
    }
    // The demand rule sizes its answer, so it need not pace itself: it
    // starts threads back to back (each made before the next: `spawning`) while
    // the pool has fewer than the load needs. The others start one per
    // `spawn_delay`, when the queue holds more tasks than threads.
    let (spaced, enough_queued) = match (cfg.rule, obs.mean_run) {
        (SpawnRule::Demand, Some(_)) => (true, obs.queued > 0),
        _ => (
            obs.last_spawn.is_none_or(|t| obs.now.saturating_duration_since(t) >= cfg.spawn_delay),
            obs.queued > obs.threads,
        ),
    };
    if obs.threads < cfg.max_threads && enough_queued && spaced && obs.memory_waiting == 0 {
        if let Some(reason) = spawn_test(obs, cfg) {
            return Action::Spawn(reason);
        }
    }
    if let Some((seat, idle_since)) = obs.newest_idle_extra {
        if obs.queued == 0 && obs.now.saturating_duration_since(idle_since) >= cfg.idle_timeout {
            return Action::Retire(seat, RetireReason::IdleTimeout);
        }
    }
    if let (Some((needed, replayed_at)), Some(seat)) = (obs.threads_needed, obs.junior_extra) {
        // One thread to spare: a pool cut to exactly what the last window
        // needed starts one again at the next burst, and then retires it.
        // A replay made before the last spawn has not seen the load that
        // started it.
        let current = obs.last_spawn.is_none_or(|spawned| replayed_at > spawned);
        if needed + SPARE_THREADS < obs.threads && obs.queued <= obs.threads && current {
            return Action::Retire(seat, RetireReason::Underused);
        }
    }
    Action::None
}

#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod tests;
