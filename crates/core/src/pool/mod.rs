//! The pool: a queue, worker threads that run its tasks, and a supervisor thread
//! that applies the scaling [`policy`](crate::policy).
//!
//! # Threads and their states
//!
//! Every thread sits in a fixed *seat* (`0..max_threads`). Seat order is not
//! seniority; each occupant carries a `generation` (spawn order) and the most
//! senior idle thread is always the one woken first, so the oldest thread (the
//! "main worker" of the article) does most of the work and keeps its caches warm.
//!
//! A worker is in one of these states, all recorded under the pool mutex:
//!
//! ```text
//!            task found                      queue empty
//!   busy  <--------------  looking  ------------------------>  spinning
//!    |                        ^                                   |  work seen -> looking
//!    | task done              |  woken (wake_pending)             |  spin budget spent
//!    +------------------------+-----------  parked  <-------------+
//!                                              |
//!                        retire / stop flag    v
//!                                            exited
//! ```
//!
//! * `spinning`: the queue was empty; the thread polls the lock-free `queued`
//!   counter for a few microseconds before parking, because a futex wake costs
//!   more than a short spin when tasks arrive back to back.
//! * `parked`: waiting on the seat's own condvar. `submit` wakes a parked
//!   thread only when the queue holds more tasks than the threads already
//!   spinning or already being woken can take (`wake_pending`), so a burst of
//!   posts costs at most one wake per thread.
//!
//! The supervisor owns spawning and retiring. It sleeps on its own condvar
//! with the timeout the policy asks for, or without one when nothing can
//! change (only core threads, empty queue); `submit` nudges it when the queue
//! grows past the thread count while it sleeps without a timeout, and when
//! nobody awake takes a task while a parked extra could (and the supervisor
//! would not look again within `spawn_delay`). Threads are
//! never started on the submitting (JS) thread, except the core threads at
//! construction.
//!
//! # Shutdown
//!
//! * [`Pool::close`]: no new tasks; workers finish the queue, then exit.
//! * [`Pool::abort`]: no new tasks; queued tasks are handed back to the caller,
//!   running kernels see the cancel flag within one chunk and end `Cancelled`.
//!
//! When the last thread (workers and supervisor) has exited, `terminated` is
//! set and the completion waker fires once more, so the consumer learns of it
//! without blocking. [`Pool::join`] then returns at once.
//!
//! # Files
//!
//! * `config.rs`: the options ([`PoolConfig`]) and their defaults.
//! * `queue.rs`: submitting tasks and taking queued ones back out.
//! * `state.rs`: what the mutex guards (seats, lifecycle, queue) and the
//!   wake decisions shared by `submit` and the threads.
//! * `worker.rs`: the worker loop, in named steps.
//! * `batch.rs`: the tasks a worker took together and has not started,
//!   in its seat, where an idle thread may take them over.
//! * `run.rs`: one task run (its kernel, output limit, caught panic; a
//!   packed task input by input).
//! * `supervisor.rs`: the policy loop, spawning and retiring.
//! * `shutdown.rs`: abort and join.
//! * `parts.rs`: the board, where parts of one task wait for idle threads.
//! * `parallel.rs`: the pool as the place those parts run (the board and
//!   the threads it wakes).

mod batch;
mod config;
mod memory;
mod parallel;
mod parts;
mod queue;
mod run;
mod shutdown;
mod state;
mod supervisor;
mod worker;

pub use config::{PoolConfig, DEFAULT_NICE_INCREMENT};
pub use queue::Refused;
pub use run::panic_message;

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::completion::{CompletionQueue, Waker};
use crate::histogram::Summary;
use crate::policy::{RetireReason, SpawnReason};
use crate::sync::thread;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Condvar, Mutex};
use crate::task::Completion;

use run::install_panic_hook;
use shutdown::{abort_and_join, abort_queue, join_all};
use state::{EventChannel, Lifecycle, Seat, SeatMetrics, Shared, State};
use supervisor::{spawn_worker, supervisor_main};

/// Prefix of every worker thread's name; the panic hook uses it to stay quiet
/// about kernel panics (they are reported as rejected promises instead).
pub const THREAD_NAME_PREFIX: &str = "tidepool-";

/// Something that happened to the pool's threads, reported to JavaScript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolEvent {
    /// A thread started.
    Spawn { thread_id: u32, threads: usize, reason: SpawnReason },
    /// A thread retired.
    Retire { thread_id: u32, threads: usize, reason: RetireReason },
    /// The OS refused to start a thread; the pool goes on with what it has.
    SpawnError { threads: usize, error: String },
}

/// A snapshot of the pool for `stats()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Live worker threads.
    pub threads: usize,
    /// Threads running a task.
    pub busy_threads: usize,
    /// Tasks waiting in the queue.
    pub queued: usize,
    /// Age of the oldest queued task.
    pub oldest_queued: Duration,
    /// Threads started since creation.
    pub spawned: u64,
    /// Threads retired since creation.
    pub retired: u64,
    /// Thread starts the OS refused.
    pub spawn_errors: u64,
    /// Threads started, by reason (in `SpawnReason::ALL`'s order).
    pub spawns_by_reason: [u64; 4],
    /// Parts of tasks' jobs run by helpers: threads other than the one
    /// running the task (see `parts.rs`).
    pub parts_helped: u64,
    /// Since when the extra thread that retirement by idleness judges (the
    /// newest one parked idle) has been idle; None when no extra is.
    pub idle_extra_since: Option<Instant>,
    /// Bytes of working memory the running tasks hold (`max_working_bytes`).
    pub working_bytes: usize,
    /// Threads waiting for working memory to run their task.
    pub memory_waiting: usize,
    /// How long tasks waited in the queue (since creation or the last reset).
    pub wait: Summary,
    /// How long kernels ran (since creation or the last reset).
    pub run: Summary,
}

/// A pool of worker threads. Dropping it aborts and joins every thread.
pub struct Pool {
    shared: Arc<Shared>,
    /// The wait and run totals at the last `stats(true)`: what `stats()`
    /// subtracts, so that the histograms themselves only grow (see
    /// [`Pool::totals`]). Only the owner's thread reads stats.
    baseline: std::sync::Mutex<(Summary, Summary)>,
}

impl Pool {
    /// Starts the core threads and the supervisor. `waker` is called (from any
    /// thread) when completions or events are ready to be taken.
    pub fn new(config: PoolConfig, waker: Waker) -> std::io::Result<Pool> {
        install_panic_hook();
        let mut config = config;
        config.policy.max_threads = config.policy.max_threads.max(1);
        config.policy.min_threads = config.policy.min_threads.min(config.policy.max_threads);
        let max = config.policy.max_threads;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::with_capacity(1024),
                seats: (0..max).map(|_| Seat::default()).collect(),
                threads: 0,
                busy: 0,
                spinning: 0,
                wakes_pending: 0,
                lifecycle: Lifecycle::Running,
                spawning: false,
                starting: 0,
                last_spawn: None,
                last_take: None,
                next_generation: 0,
                next_thread_id: 1,
                supervisor_sleeping: false,
                supervisor_wakes_at: None,
                supervisor_exited: false,
                finished: Vec::new(),
                extras_open_until: None,
                spawn_failures_in_a_row: 0,
                spawn_backoff_until: None,
                spawned: 0,
                retired: 0,
                spawn_errors: 0,
                spawns_by_reason: [0; 4],
                arrivals: Default::default(),
                replay: Default::default(),
            }),
            seat_cvs: (0..max).map(|_| Condvar::new()).collect(),
            batches: batch::Batches::new(max),
            metrics: (0..max).map(|_| SeatMetrics::default()).collect(),
            supervisor_cv: Condvar::new(),
            exit_cv: Condvar::new(),
            queued: AtomicUsize::new(0),
            cancel: std::sync::atomic::AtomicBool::new(false),
            terminated: AtomicBool::new(false),
            mean_run_ns: std::sync::atomic::AtomicU64::new(0),
            room_freed: std::sync::atomic::AtomicBool::new(false),
            share_waiting: std::sync::atomic::AtomicUsize::new(0),
            memory: memory::MemoryGate::new(config.max_working_bytes),
            parts: parts::Board::new(),
            completions: CompletionQueue::new(waker),
            events: EventChannel::new(),
            config,
            epoch: Instant::now(),
        });
        // Core threads start here, on the constructing thread: construction is
        // not a hot path, and the pool must be able to work at once.
        for _ in 0..shared.config.policy.min_threads {
            if let Err(e) = spawn_worker(&shared, SpawnReason::Core) {
                let mut st = shared.lock();
                if st.threads == 0 {
                    // No supervisor yet: say so, or join_all would wait for it.
                    st.supervisor_exited = true;
                    drop(st);
                    abort_and_join(&shared);
                    return Err(e);
                }
            }
        }
        let supervisor = {
            let shared = shared.clone();
            thread::Builder::new()
                .name(format!("{THREAD_NAME_PREFIX}supervisor"))
                .stack_size(64 * 1024)
                .spawn(move || supervisor_main(&shared))
        };
        match supervisor {
            Ok(handle) => shared.lock().finished.push(handle),
            Err(e) => {
                shared.lock().supervisor_exited = true;
                abort_and_join(&shared);
                return Err(e);
            }
        }
        Ok(Pool {
            shared,
            baseline: std::sync::Mutex::new((Summary::default(), Summary::default())),
        })
    }

    /// The most output a task of `kernel` may make unless it says otherwise
    /// (`maxOutputBytes`): the pool's limit, or its smaller one for decoders.
    pub fn output_limit(&self, kernel: &dyn crate::kernels::AnyKernel) -> usize {
        let config = &self.shared.config;
        if kernel.expands() {
            config.max_expanded_bytes
        } else {
            config.max_output_bytes
        }
    }

    /// Moves ready completions into `out`. Returns true if the pool had
    /// terminated (after close/abort) before the take: then `out` holds the
    /// very last completions and no more will come.
    pub fn take_completions(&self, out: &mut Vec<Completion>) -> bool {
        let completions = &self.shared.completions;
        // Order matters: a thread sets `terminated` and then wakes; lowering
        // the flag first means that either we see `terminated` here, or its
        // wake schedules another take.
        completions.begin_take();
        let terminated = self.is_terminated();
        completions.take(out);
        terminated
    }

    /// Moves pending thread events into `out`.
    pub fn take_events(&self, out: &mut Vec<PoolEvent>) {
        out.extend(self.shared.events.receiver.try_iter());
    }

    /// Current numbers. With `reset_latency`, the wait / run figures of the
    /// next call start afresh (a baseline: the histograms keep counting).
    pub fn stats(&self, reset_latency: bool) -> PoolStats {
        let totals = self.totals();
        let mut baseline = self.baseline.lock().unwrap_or_else(|e| e.into_inner());
        let wait = totals.wait.since(&baseline.0);
        let run = totals.run.since(&baseline.1);
        if reset_latency {
            for m in self.shared.metrics.iter() {
                m.wait.reset_max();
                m.run.reset_max();
            }
            *baseline = (totals.wait, totals.run);
        }
        PoolStats { wait, run, ..totals }
    }

    /// Current numbers, with the queue wait and run time of every task
    /// since the pool was created, whatever `stats(true)` reset: counts and
    /// sums that only grow, as a Prometheus histogram needs
    /// ([`Summary::cumulative`]). The maxima are since the last reset.
    pub fn totals(&self) -> PoolStats {
        let mut wait = Summary::default();
        let mut run = Summary::default();
        for m in self.shared.metrics.iter() {
            m.wait.merge_into(&mut wait);
            m.run.merge_into(&mut run);
        }
        let (working_bytes, memory_waiting) = self.shared.memory.usage();
        let st = self.shared.lock();
        // Tasks taken in a worker's batch and not started wait too.
        let (batched, batched_since) = self.shared.batches.waiting();
        let oldest = match (st.queue.front().map(|t| t.enqueued_at), batched_since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        PoolStats {
            threads: st.threads,
            busy_threads: st.busy,
            queued: st.queue.len() + batched,
            oldest_queued: oldest.map(|t| t.elapsed()).unwrap_or_default(),
            spawned: st.spawned,
            retired: st.retired,
            spawn_errors: st.spawn_errors,
            spawns_by_reason: st.spawns_by_reason,
            parts_helped: self.shared.parts.helped(),
            idle_extra_since: state::newest_idle_extra(&st).map(|(_, since)| since),
            working_bytes,
            memory_waiting,
            wait,
            run,
        }
    }

    /// The machine budget's numbers, if this pool runs under one.
    pub fn budget_stats(&self) -> Option<crate::budget::BudgetStats> {
        self.shared.config.budget.as_ref().map(|b| b.stats())
    }

    /// Stops accepting tasks; threads exit once the queue is empty.
    pub fn close(&self) {
        let mut st = self.shared.lock();
        if st.lifecycle == Lifecycle::Running {
            st.lifecycle = Lifecycle::Closing;
        }
        drop(st);
        self.shared.wake_all();
    }

    /// Stops accepting tasks, cancels running ones and returns the slots of
    /// the tasks that were still queued (they will never complete).
    pub fn abort(&self) -> Vec<u32> {
        abort_queue(&self.shared)
    }

    /// True once close/abort has finished and every thread has exited.
    pub fn is_terminated(&self) -> bool {
        self.shared.terminated.load(Ordering::Acquire)
    }

    /// Waits until every thread has exited (after close/abort) and joins them.
    pub fn join(&self) {
        join_all(&self.shared);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        abort_and_join(&self.shared);
    }
}
