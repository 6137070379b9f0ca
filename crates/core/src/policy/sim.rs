//! A discrete-time model of a pool driven only by this policy, with a fake
//! clock: used by the policy's tests and by `examples/policy_sim.rs` to
//! compare spawn rules on machines larger than the one at hand.

use std::time::{Duration, Instant};

use super::{
    decide, extras_may_take, extras_window, Action, ArrivalWindow, Observation, PolicyConfig,
    Replay, ReplayInput,
};

/// A pool modelled through `decide` and
/// `extras_may_take`, with a fake clock: tasks of a fixed cost arrive at
/// given times; idle threads take them (core threads first, extras only
/// when the policy lets them or while they are still busy with a run);
/// the policy is asked when its last decision said to look again, or
/// sooner when an arrival makes the queue longer than the threads (the
/// nudge of `Pool::submit`), as the real supervisor is.
///
/// [`Sim::run`] plays a list of arrivals in steps of 50 µs. A model of
/// several pools (the replicas of `examples/replicas_sim`) drives each one
/// itself, in lockstep: [`Sim::arrive`] for each task, then [`Sim::step`].
pub struct Sim {
    pub cfg: PolicyConfig,
    pub t0: Instant,
    /// Per thread: (core, busy until, idle since, generation). In order of
    /// generation: threads are added at the end and removed in place.
    pub threads: Vec<(bool, Option<Duration>, Duration, u64)>,
    pub queue: std::collections::VecDeque<Duration>,
    pub generation: u64,
    pub last_spawn: Option<Duration>,
    pub spawns: Vec<Duration>,
    pub retires: Vec<Duration>,
    pub max_wait: Duration,
    /// Every task's queue wait, in arrival order of service.
    pub waits: Vec<Duration>,
    /// Integral of live threads over time, in thread-seconds.
    pub thread_seconds: f64,
    /// Integral of busy threads over time, in thread-seconds (what a
    /// `tidepool_task_run_seconds_sum` counter adds up).
    pub busy_seconds: f64,
    /// When the supervisor looks next.
    next_check: Duration,
    /// Until when extra threads may take queued tasks.
    extras_open_until: Duration,
    window: ArrivalWindow,
    replay: Replay,
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

impl Sim {
    pub fn new(cfg: PolicyConfig) -> Sim {
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
            waits: Vec::new(),
            thread_seconds: 0.0,
            busy_seconds: 0.0,
            next_check: Duration::ZERO,
            extras_open_until: Duration::ZERO,
            window: ArrivalWindow::default(),
            replay: Replay::default(),
        };
        for _ in 0..sim.cfg.min_threads {
            sim.threads.push((true, None, Duration::ZERO, sim.generation));
            sim.generation += 1;
        }
        sim
    }

    /// Runs until `end`, with tasks of cost `cost` arriving at `arrivals` (sorted).
    pub fn run(&mut self, arrivals: &[Duration], cost: Duration, end: Duration) {
        let dt = Duration::from_micros(50);
        let mut next = 0;
        let mut now = Duration::ZERO;
        while now < end {
            while next < arrivals.len() && arrivals[next] <= now {
                self.arrive(now);
                next += 1;
            }
            self.step(now, dt, cost);
            now += dt;
        }
    }

    /// A task is posted at `now`.
    pub fn arrive(&mut self, now: Duration) {
        self.queue.push_back(now);
        self.window.record(ms(now));
        // As `Pool::submit` does: a queue longer than the threads brings
        // the policy's next look forward to `spawn_delay`.
        if self.queue.len() > self.threads.len() && self.threads.len() < self.cfg.max_threads {
            self.next_check = self.next_check.min(now + self.cfg.spawn_delay);
        }
    }

    /// Threads busy right now.
    pub fn busy(&self) -> usize {
        self.threads.iter().filter(|th| th.1.is_some()).count()
    }

    /// How long the oldest queued task has waited at `now` (0 when none).
    pub fn oldest_age(&self, now: Duration) -> Duration {
        self.queue.front().map(|&at| now - at).unwrap_or_default()
    }

    /// One step of `dt` at `now`: finished tasks free their threads, idle
    /// threads take queued tasks (of cost `cost`), and the policy is asked
    /// if it is time.
    pub fn step(&mut self, now: Duration, dt: Duration, cost: Duration) {
        // Finish tasks; busy threads keep taking from the queue.
        for th in self.threads.iter_mut() {
            if th.1.is_some_and(|until| until <= now) {
                th.1 = None;
                th.2 = now;
                if let Some(at) = self.queue.pop_front() {
                    self.max_wait = self.max_wait.max(now - at);
                    self.waits.push(now - at);
                    th.1 = Some(now + cost);
                }
            }
        }
        // Idle threads take work: core always, extras per the policy; the
        // oldest thread first (`threads` is in order of generation).
        if extras_may_take(self.queue.len(), self.oldest_age(now), &self.cfg) {
            self.extras_open_until = now + extras_window(&self.cfg);
        }
        let extras = now < self.extras_open_until;
        for th in self.threads.iter_mut() {
            if th.1.is_none() && (th.0 || extras) {
                if let Some(at) = self.queue.pop_front() {
                    self.max_wait = self.max_wait.max(now - at);
                    self.waits.push(now - at);
                    th.1 = Some(now + cost);
                }
            }
        }
        if now >= self.next_check {
            self.supervise(now, cost);
        }
        self.thread_seconds += self.threads.len() as f64 * dt.as_secs_f64();
        self.busy_seconds += self.busy() as f64 * dt.as_secs_f64();
    }

    /// The supervisor's look: ask the policy, and do what it says.
    fn supervise(&mut self, now: Duration, cost: Duration) {
        if self.replay.due(self.t0 + now, &self.cfg) {
            let input = ReplayInput::of(&self.window, ms(now), now, Some(cost), &self.cfg);
            self.replay = Replay { at: Some(self.t0 + now), needed: input.map(|i| i.needed()) };
        }
        let threads_needed = self.replay.needed.zip(self.replay.at);
        let junior_extra = self.threads.iter().rposition(|th| !th.0);
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
            mean_run: Some(cost),
            newest_idle_extra,
            arrival_rate: self.window.rate(ms(now)),
            recent_arrival_rate: self.window.recent_rate(ms(now)),
            threads_needed,
            junior_extra,
            memory_waiting: 0,
        };
        let decision = decide(&obs, &self.cfg);
        match decision.action {
            Action::Spawn(_) => {
                assert!(self.threads.len() < self.cfg.max_threads, "spawned past max_threads");
                // Only the demand rule starts threads back to back.
                let paced = self.cfg.rule != super::SpawnRule::Demand;
                if let Some(last) = self.last_spawn.filter(|_| paced) {
                    assert!(now - last >= self.cfg.spawn_delay, "spawns closer than spawn_delay");
                }
                self.threads.push((false, None, now, self.generation));
                self.generation += 1;
                self.last_spawn = Some(now);
                self.spawns.push(now);
            }
            Action::Retire(i, _) => {
                // (One retired by use while it runs a task leaves at once
                // here; the real one finishes its tasks first.)
                assert!(!self.threads[i].0, "a core thread was retired");
                self.threads.remove(i);
                self.retires.push(now);
            }
            Action::None => {}
        }
        // The supervisor sleeps as long as the policy says (until nudged,
        // when it says nothing); after a spawn it looks again at once, as
        // the real one does.
        self.next_check = match (decision.action, decision.next_check) {
            (Action::Spawn(_), _) => now,
            (_, Some(wait)) => now + wait,
            (_, None) => Duration::MAX,
        };
    }
}
