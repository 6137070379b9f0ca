//! Retirement by use: a replay of the last `idle_timeout` of arrivals
//! against pools of fixed sizes, whose answer ([`threads_needed`]) is the
//! threads the load needed (the module docs of `policy` say how the
//! supervisor uses it).

use std::time::{Duration, Instant};

use super::{arrivals, ArrivalWindow, PolicyConfig};

/// The wait retirement by use keeps tasks within (at the 99th
/// percentile): the spawn delay, the wait the spawn rules tolerate before
/// they add a thread, plus one run, what a task waits for a thread to free
/// up in a pool sized to its load.
pub fn wait_bound(mean_run: Duration, cfg: &PolicyConfig) -> Duration {
    cfg.spawn_delay + mean_run
}

/// Most tasks [`threads_needed`] replays one by one.
pub const REPLAY_TASKS: u64 = 20_000;

/// The fewest threads (at most `most`) that would have served `arrivals`
/// (tasks per millisecond, oldest first, spread evenly within their
/// millisecond) first come, first served, each running `run`, with no
/// more than 1 % of them waiting longer than `bound`: a replay of past
/// arrivals against pools of fixed sizes (the pool taken to start idle),
/// as the benchmarks' fixed-pool oracle is. Tasks of a quarter of a
/// millisecond or more are replayed one by one (up to [`REPLAY_TASKS`]);
/// shorter ones, many to a millisecond, as a flow of work per millisecond.
pub fn threads_needed(arrivals: &[u32], run: Duration, bound: Duration, most: usize) -> usize {
    let total: u64 = arrivals.iter().map(|&n| u64::from(n)).sum();
    if total == 0 || most <= 1 || arrivals.is_empty() {
        return 1;
    }
    let allowed = total / 100;
    let run_us = run.as_micros().max(1) as u64;
    let bound_us = bound.as_micros() as u64;
    // One by one up to REPLAY_TASKS; more, as a flow: the replay's cost
    // stays bounded whatever the arrival rate.
    let one_by_one = run_us >= 250 && total <= REPLAY_TASKS;
    let late = |k: usize| {
        if one_by_one {
            late_tasks(arrivals, run_us, bound_us, k, allowed)
        } else {
            late_flow(arrivals, run_us, bound_us, k)
        }
    };
    // No fewer than the work needs on average; more threads are never
    // later, so the fewest is found by bisection.
    let work = (total * run_us).div_ceil(arrivals.len() as u64 * 1000) as usize;
    let (mut lo, mut hi) = (work.clamp(1, most), most);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if late(mid) <= allowed {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Tasks of `arrivals` that wait longer than `bound_us` with `k` threads,
/// replayed one by one (counting stops past `allowed`).
fn late_tasks(arrivals: &[u32], run_us: u64, bound_us: u64, k: usize, allowed: u64) -> u64 {
    use std::cmp::Reverse;
    let mut free: std::collections::BinaryHeap<Reverse<u64>> = (0..k).map(|_| Reverse(0)).collect();
    let mut late = 0;
    for (ms, &n) in arrivals.iter().enumerate() {
        for i in 0..u64::from(n) {
            let at = ms as u64 * 1000 + i * 1000 / u64::from(n);
            let Reverse(when) = free.pop().expect("k >= 1");
            let start = when.max(at);
            if start - at > bound_us {
                late += 1;
                if late > allowed {
                    return late;
                }
            }
            free.push(Reverse(start + run_us));
        }
    }
    late
}

/// Tasks of `arrivals` that wait longer than `bound_us` with `k` threads,
/// the work of each millisecond taken as a flow: the backlog grows by the
/// millisecond's work and shrinks by `k` ms, and a millisecond's tasks
/// wait for the backlog before them, shared by the threads.
fn late_flow(arrivals: &[u32], run_us: u64, bound_us: u64, k: usize) -> u64 {
    let k = k as u64;
    let mut backlog_us = 0u64;
    let mut late = 0;
    for &n in arrivals {
        let work = u64::from(n) * run_us;
        if (backlog_us + work / 2) / k > bound_us {
            late += u64::from(n);
        }
        backlog_us = (backlog_us + work).saturating_sub(k * 1000);
    }
    late
}

/// Threads retirement by use keeps beyond what the replay needed.
pub const SPARE_THREADS: usize = 1;

/// What a replay of the last `idle_timeout` of arrivals needs: made under
/// the pool's lock (a copy of the counts), worked out without it.
#[derive(Debug, Clone)]
pub struct ReplayInput {
    /// Arrivals per millisecond, oldest first.
    pub counts: Vec<u32>,
    pub run: Duration,
    pub bound: Duration,
    pub most: usize,
}

impl ReplayInput {
    /// The last `idle_timeout` of `arrivals` up to `now_ms`, for a pool
    /// `age` old. None when there is nothing to judge: no run time yet, a
    /// pool younger than that, one without extras, or an `idle_timeout`
    /// longer than the [`arrivals::HISTORY_MS`] kept (a user who keeps
    /// threads that long keeps them for bursts further apart than a
    /// replay could see: only idleness retires them).
    pub fn of(
        arrivals: &ArrivalWindow,
        now_ms: u64,
        age: Duration,
        mean_run: Option<Duration>,
        cfg: &PolicyConfig,
    ) -> Option<ReplayInput> {
        let run = mean_run?;
        let span = cfg.idle_timeout.as_millis().max(1);
        if span > u128::from(arrivals::HISTORY_MS)
            || age.as_millis() < span
            || cfg.max_threads <= cfg.min_threads
        {
            return None;
        }
        Some(ReplayInput {
            counts: arrivals.counts(now_ms, span as u64).collect(),
            run,
            bound: wait_bound(run, cfg),
            most: cfg.max_threads,
        })
    }

    /// [`threads_needed`] of it.
    pub fn needed(&self) -> usize {
        threads_needed(&self.counts, self.run, self.bound, self.most)
    }
}

/// The last replay's answer, worked out again at most every
/// `idle_timeout / 8`: a replay costs a pass over the arrivals per size
/// tried, and the answer moves no faster than the arrivals it replays.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// When the last replay was made (its arrivals end there).
    pub at: Option<Instant>,
    /// Its answer (None: nothing to judge).
    pub needed: Option<usize>,
}

impl Replay {
    /// Whether a new replay is due at `now`.
    pub fn due(&self, now: Instant, cfg: &PolicyConfig) -> bool {
        let every = (cfg.idle_timeout / 8).max(Duration::from_millis(1));
        self.at.is_none_or(|at| now.saturating_duration_since(at) >= every)
    }
}
