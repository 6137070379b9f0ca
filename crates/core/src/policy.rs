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

    /// A discrete-time model of the pool driven only through `decide` and
    /// `extras_may_take`, with a fake clock: tasks of a fixed cost arrive at
    /// given times; idle threads take them (core threads first, extras only
    /// when the policy lets them or while they are still busy with a run);
    /// the policy is asked every `check_interval`.
    struct Sim {
        cfg: PolicyConfig,
        t0: Instant,
        /// Per thread: (core, busy until, idle since, generation).
        threads: Vec<(bool, Option<Duration>, Duration, u64)>,
        queue: std::collections::VecDeque<Duration>,
        generation: u64,
        last_spawn: Option<Duration>,
        spawns: Vec<Duration>,
        retires: Vec<Duration>,
        max_wait: Duration,
    }

    impl Sim {
        fn new(cfg: PolicyConfig) -> Sim {
            let mut sim = Sim {
                cfg,
                t0: Instant::now(),
                threads: Vec::new(),
                queue: Default::default(),
                generation: 0,
                last_spawn: None,
                spawns: Vec::new(),
                retires: Vec::new(),
                max_wait: Duration::ZERO,
            };
            for _ in 0..sim.cfg.min_threads {
                sim.threads.push((true, None, Duration::ZERO, sim.generation));
                sim.generation += 1;
            }
            sim
        }

        /// Runs until `end`, with tasks of cost `cost` arriving at `arrivals` (sorted).
        fn run(&mut self, arrivals: &[Duration], cost: Duration, end: Duration) {
            let dt = Duration::from_micros(50);
            let mut next = 0;
            let mut now = Duration::ZERO;
            let mut next_check = Duration::ZERO;
            while now < end {
                while next < arrivals.len() && arrivals[next] <= now {
                    self.queue.push_back(arrivals[next]);
                    next += 1;
                }
                // Finish tasks; busy threads keep taking from the queue.
                for th in self.threads.iter_mut() {
                    if th.1.is_some_and(|until| until <= now) {
                        th.1 = None;
                        th.2 = now;
                        if let Some(at) = self.queue.pop_front() {
                            self.max_wait = self.max_wait.max(now - at);
                            th.1 = Some(now + cost);
                        }
                    }
                }
                // Idle threads take work: core always, extras per the policy.
                let age = self.queue.front().map(|&at| now - at).unwrap_or_default();
                let extras = extras_may_take(self.queue.len(), age, &self.cfg);
                let mut order: Vec<usize> = (0..self.threads.len()).collect();
                order.sort_by_key(|&i| self.threads[i].3);
                for i in order {
                    let th = &mut self.threads[i];
                    if th.1.is_none() && (th.0 || extras) {
                        if let Some(at) = self.queue.pop_front() {
                            self.max_wait = self.max_wait.max(now - at);
                            th.1 = Some(now + cost);
                        }
                    }
                }
                if now >= next_check {
                    let newest_idle_extra = self
                        .threads
                        .iter()
                        .enumerate()
                        .filter(|(_, th)| !th.0 && th.1.is_none())
                        .max_by_key(|(_, th)| th.3)
                        .map(|(i, th)| (i, self.t0 + th.2));
                    let obs = Observation {
                        now: self.t0 + now,
                        queued: self.queue.len(),
                        oldest_enqueued: self.queue.front().map(|&at| self.t0 + at),
                        threads: self.threads.len(),
                        spawning: false,
                        last_spawn: self.last_spawn.map(|t| self.t0 + t),
                        spawn_backoff_until: None,
                        newest_idle_extra,
                    };
                    match decide(&obs, &self.cfg).action {
                        Action::Spawn(_) => {
                            assert!(self.threads.len() < self.cfg.max_threads, "spawned past max_threads");
                            if let Some(last) = self.last_spawn {
                                assert!(now - last >= self.cfg.spawn_delay, "spawns closer than spawn_delay");
                            }
                            self.threads.push((false, None, now, self.generation));
                            self.generation += 1;
                            self.last_spawn = Some(now);
                            self.spawns.push(now);
                        }
                        Action::Retire(i, _) => {
                            assert!(!self.threads[i].0, "a core thread was retired");
                            self.threads.remove(i);
                            self.retires.push(now);
                        }
                        Action::None => {}
                    }
                    next_check = now + self.cfg.check_interval;
                }
                now += dt;
            }
        }
    }

    fn every(start_ms: u64, end_ms: u64, gap: Duration) -> Vec<Duration> {
        let mut out = Vec::new();
        let mut t = Duration::from_millis(start_ms);
        while t < Duration::from_millis(end_ms) {
            out.push(t);
            t += gap;
        }
        out
    }

    fn sim_cfg() -> PolicyConfig {
        PolicyConfig {
            min_threads: 1,
            max_threads: 4,
            spawn_delay: Duration::from_millis(1),
            idle_timeout: Duration::from_millis(200),
            check_interval: Duration::from_millis(1),
        }
    }

    #[test]
    fn sim_trickle_never_spawns() {
        // One 0.5 ms task every 2 ms: a quarter of one thread.
        let mut sim = Sim::new(sim_cfg());
        sim.run(&every(0, 2000, Duration::from_millis(2)), Duration::from_micros(500), Duration::from_millis(2100));
        assert!(sim.spawns.is_empty(), "spawned under a trickle at {:?}", sim.spawns);
    }

    #[test]
    fn sim_step_of_load_spawns_one_at_a_time_up_to_the_cap() {
        // 3 threads' worth of 1 ms tasks for 300 ms.
        let mut sim = Sim::new(sim_cfg());
        sim.run(&every(0, 300, Duration::from_micros(333)), Duration::from_millis(1), Duration::from_millis(300));
        assert!(sim.spawns.len() >= 2, "reacted with {:?}", sim.spawns);
        assert!(sim.threads.len() <= 4);
        assert!(sim.spawns[0] < Duration::from_millis(10), "first spawn at {:?}", sim.spawns[0]);
    }

    #[test]
    fn sim_idle_extras_retire_and_core_stays() {
        let mut sim = Sim::new(sim_cfg());
        sim.run(&every(0, 100, Duration::from_micros(250)), Duration::from_millis(1), Duration::from_millis(600));
        assert!(!sim.spawns.is_empty());
        assert_eq!(sim.retires.len(), sim.spawns.len(), "every extra retired after the load");
        assert_eq!(sim.threads.len(), 1);
        // Back to the core thread within idle_timeout (+ drain time + checks) of the load's end.
        assert!(*sim.retires.last().unwrap() < Duration::from_millis(100 + 200 + 150));
    }

    #[test]
    fn sim_periodic_bursts_do_not_flap() {
        // A 30 ms burst at 3x capacity every 150 ms (shorter than idle_timeout):
        // threads grow during the first burst and are then kept.
        let mut arrivals = Vec::new();
        for burst in 0..10u64 {
            arrivals.extend(every(burst * 150, burst * 150 + 30, Duration::from_micros(333)));
        }
        let mut sim = Sim::new(sim_cfg());
        sim.run(&arrivals, Duration::from_millis(1), Duration::from_millis(1500));
        let late_spawns = sim.spawns.iter().filter(|&&t| t > Duration::from_millis(300)).count();
        assert!(sim.retires.is_empty(), "retired between bursts: {:?}", sim.retires);
        assert!(late_spawns <= 1, "kept spawning: {:?}", sim.spawns);
    }
}
