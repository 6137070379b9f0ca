//! The plain objects (`#[napi(object)]`) that the `NativePool` class takes
//! and returns: its resolved options, and the numbers of `stats()` and
//! `metrics()`.

use std::time::Duration;

use napi_derive::napi;
use tidepool_core::policy::{PolicyConfig, SpawnRule};
use tidepool_core::PoolConfig;

use crate::napi_util::duration_ms;

/// Resolved pool options (lib/args/options.js validates and fills in defaults).
#[napi(object)]
pub struct NativeOptions {
    pub min_threads: u32,
    pub max_threads: u32,
    pub spawn_delay_ms: f64,
    pub idle_timeout_ms: f64,
    pub check_interval_ms: f64,
    /// `"queue-age"` (the article's rule), `"backlog"` or `"demand"`.
    pub scale_rule: String,
    /// Most tasks waiting in the queue (None: unbounded).
    pub max_queue: Option<u32>,
    /// Tasks older than this when a thread takes them expire (None: never).
    pub max_queue_age_ms: Option<f64>,
    /// Most bytes a task's result may have.
    pub max_output_bytes: f64,
    /// The same for decoders (kernels whose output may dwarf their input).
    pub max_expanded_bytes: f64,
    /// Most bytes of working memory the running tasks hold at once (None: no bound).
    pub max_working_bytes: Option<f64>,
    /// Nice increment of the worker threads (0..=19, Linux only).
    pub nice_increment: u32,
    /// The pool's encoding is not `'buffer'`: each result becomes a string
    /// (delivery hands over fewer large results per call).
    pub string_results: bool,
    /// `budget: 'machine'`: share the machine's budget of running threads
    /// (lib/ has opened it with `openMachineBudget()`).
    pub machine_budget: bool,
    /// Fault injection for tests (see `PoolConfig::fail_spawns_after`).
    pub fail_spawns_after: Option<u32>,
    /// Test hook: the machine budget's capacity, fixed for this process.
    pub budget_capacity: Option<u32>,
}

impl NativeOptions {
    /// The core pool's configuration.
    pub(crate) fn pool_config(&self) -> PoolConfig {
        PoolConfig {
            policy: PolicyConfig {
                min_threads: self.min_threads as usize,
                max_threads: self.max_threads as usize,
                spawn_delay: duration_ms(self.spawn_delay_ms),
                idle_timeout: duration_ms(self.idle_timeout_ms),
                check_interval: duration_ms(self.check_interval_ms),
                rule: match self.scale_rule.as_str() {
                    "backlog" => SpawnRule::Backlog,
                    "demand" => SpawnRule::Demand,
                    _ => SpawnRule::QueueAge,
                },
            },
            max_queue: self.max_queue.map_or(usize::MAX, |n| n.max(1) as usize),
            max_queue_age: self.max_queue_age_ms.map(duration_ms),
            // An integer lib/args/options.js checked to be <= buffer.constants.MAX_LENGTH.
            max_output_bytes: self.max_output_bytes as usize,
            max_expanded_bytes: self.max_expanded_bytes as usize,
            // An integer lib/args/options.js checked to be in 1..=2^53 - 1.
            max_working_bytes: self.max_working_bytes.map_or(usize::MAX, |n| n as usize),
            nice_increment: self.nice_increment.min(19) as u8,
            fail_spawns_after: self.fail_spawns_after.map(u64::from),
            budget: self.machine_budget.then(machine_budget).flatten().inspect(|budget| {
                if let Some(n) = self.budget_capacity {
                    budget.fix_capacity(n as usize);
                }
            }),
            ..PoolConfig::default()
        }
    }
}

/// This process's membership of the machine's budget (lib/ opened it first
/// and fell back, saying why, if it could not).
#[cfg(target_os = "linux")]
fn machine_budget() -> Option<std::sync::Arc<tidepool_core::budget::MachineBudget>> {
    tidepool_core::budget::MachineBudget::of_process().ok()
}

#[cfg(not(target_os = "linux"))]
fn machine_budget() -> Option<std::sync::Arc<tidepool_core::budget::MachineBudget>> {
    None
}

/// Latency percentiles in milliseconds.
#[napi(object)]
pub struct NativeLatency {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub count: f64,
}

impl NativeLatency {
    pub(crate) fn of(s: &tidepool_core::histogram::Summary) -> Self {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        NativeLatency {
            p50: ms(s.quantile(0.5)),
            p99: ms(s.quantile(0.99)),
            max: ms(s.max()),
            count: s.count() as f64,
        }
    }
}

/// What `tidepool/metrics` reads at a scrape, from one look at the pool:
/// the gauges and thread counters of `stats()`, the latency histograms since
/// the pool was created (whatever `stats({ reset })` did) as cumulative
/// counts at `bounds`, and the threads started per reason.
#[napi(object)]
pub struct NativeMetrics {
    pub threads: u32,
    pub busy_threads: u32,
    pub queued: u32,
    pub oldest_queued_ms: f64,
    pub working_bytes: f64,
    pub memory_waiting: u32,
    pub retired: f64,
    pub spawn_errors: f64,
    /// Upper bounds in seconds, ascending: 2^k - 1 ns for even k from 10 to
    /// 34 (1 µs … 17 s, ×4 apart), edges of the core's buckets, so the
    /// counts are exact.
    pub bounds: Vec<f64>,
    /// Tasks that waited at most each bound, then the count and the sum (s).
    pub wait_buckets: Vec<f64>,
    pub wait_count: f64,
    pub wait_sum: f64,
    /// Tasks whose kernel ran at most each bound, the count and the sum (s).
    pub run_buckets: Vec<f64>,
    pub run_count: f64,
    pub run_sum: f64,
    /// Threads started, by reason: `core`, `queue-age`, `backlog`, `demand`.
    pub spawn_reasons: Vec<String>,
    pub spawns: Vec<f64>,
    /// The machine budget's numbers (None: the pool has none).
    pub budget: Option<NativeBudget>,
}

/// The bounds of [`NativeMetrics`].
pub(crate) fn metric_bounds() -> Vec<Duration> {
    (5..=17).map(|half| Duration::from_nanos((1u64 << (2 * half)) - 1)).collect()
}

/// The machine budget's numbers (`stats().budget`, and the metrics').
#[napi(object)]
pub struct NativeBudget {
    /// Shares the budget has: the CPUs this process may use.
    pub capacity: u32,
    /// Shares this process's threads hold, and threads waiting for one.
    pub held: u32,
    pub waiting: u32,
    /// Times a thread of this process waited for a share, and for how long
    /// in all (seconds).
    pub waits: f64,
    pub wait_seconds: f64,
    /// Processes wanting or holding shares, and the shares they hold.
    pub machine_processes: u32,
    pub machine_held: u32,
}

impl NativeBudget {
    pub(crate) fn of(b: &tidepool_core::budget::BudgetStats) -> Self {
        NativeBudget {
            capacity: b.capacity,
            held: b.held,
            waiting: b.waiting,
            waits: b.waits as f64,
            wait_seconds: b.wait_seconds,
            machine_processes: b.machine.processes,
            machine_held: b.machine.held,
        }
    }
}

/// Numbers for `pool.stats()`.
#[napi(object)]
pub struct NativeStats {
    pub threads: u32,
    pub busy_threads: u32,
    pub idle_threads: u32,
    pub queued: u32,
    pub oldest_queued_ms: f64,
    pub spawned: f64,
    pub retired: f64,
    pub spawn_errors: f64,
    pub wait_time: NativeLatency,
    pub run_time: NativeLatency,
    /// Bytes of working memory running tasks hold, and threads waiting for some.
    pub working_bytes: f64,
    pub memory_waiting: u32,
    /// The machine budget's numbers (None: the pool has none).
    pub budget: Option<NativeBudget>,
}
