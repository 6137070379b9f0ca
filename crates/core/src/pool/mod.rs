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
//! * `state.rs`: what the mutex guards (seats, lifecycle, queue) and the
//!   wake decisions shared by `submit` and the threads.
//! * `worker.rs`: the worker loop, in named steps.
//! * `supervisor.rs`: the policy loop, spawning and retiring.
//! * `shutdown.rs`: abort and join.

mod shutdown;
mod state;
mod supervisor;
mod worker;

pub use worker::panic_message;

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::completion::{CompletionQueue, Waker};
use crate::histogram::Summary;
use crate::policy::{PolicyConfig, RetireReason, SpawnReason};
use crate::sync::thread;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Condvar, Mutex};
use crate::task::{Completion, Task};

use shutdown::{abort_and_join, abort_queue, join_all};
use state::{extras_allowed, has_parked_extra, pick_parked, supervisor_late, EventChannel, Lifecycle, Seat, SeatMetrics, Shared, State};
use supervisor::{spawn_worker, supervisor_main};
use worker::install_panic_hook;

/// Prefix of every worker thread's name; the panic hook uses it to stay quiet
/// about kernel panics (they are reported as rejected promises instead).
pub const THREAD_NAME_PREFIX: &str = "tidepool-";

/// Default nice increment of the worker threads: with 5 the event loop still
/// waited out worker time slices in some runs, with 10 it did not
/// (BENCHMARKS.md, "Event loop"). The cost: a busy thread at normal priority
/// in the same session or cgroup gets ~9× a worker's share of a core
/// (Linux shares the CPU between those groups first, so other groups are
/// unaffected); `niceIncrement: 0` opts out.
pub const DEFAULT_NICE_INCREMENT: u8 = 10;

/// Options of a pool.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// The scaling policy's tunables (thread bounds, delays).
    pub policy: PolicyConfig,
    /// How long an idle worker polls for new work before it parks.
    pub spin: Duration,
    /// Most tasks waiting in the queue; `submit` refuses more (`Full`).
    pub max_queue: usize,
    /// A task that has waited longer than this when a thread takes it is
    /// completed as `Expired` instead of being run late.
    pub max_queue_age: Option<Duration>,
    /// Most bytes a task's output may have; a kernel that would write more
    /// stops and the task fails with [`TaskError::TooLarge`](crate::TaskError).
    pub max_output_bytes: usize,
    /// The same limit for the kernels whose output may be far larger than
    /// their input (decoders: [`Kernel::expands`](crate::kernels::Kernel::expands)).
    pub max_expanded_bytes: usize,
    /// How much lower than the spawning thread's priority the workers run
    /// (a nice increment, 0..=19; Linux only, see [`crate::priority`]).
    pub nice_increment: u8,
    /// Fault injection for tests: every thread start after this many
    /// successful ones fails as if the OS said EAGAIN.
    #[doc(hidden)]
    pub fail_spawns_after: Option<u64>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        let max = available_parallelism();
        PoolConfig {
            policy: PolicyConfig {
                min_threads: 1,
                max_threads: max,
                spawn_delay: Duration::from_millis(1),
                idle_timeout: Duration::from_millis(250),
                check_interval: Duration::from_millis(1),
                rule: Default::default(),
            },
            spin: Duration::from_micros(20),
            max_queue: usize::MAX,
            max_queue_age: None,
            max_output_bytes: usize::MAX,
            max_expanded_bytes: usize::MAX,
            nice_increment: DEFAULT_NICE_INCREMENT,
            fail_spawns_after: None,
        }
    }
}

/// CPUs this process may use (honours cgroup quotas and affinity masks).
pub fn available_parallelism() -> usize {
    // `std` reads cgroup v1/v2 quotas and sched_getaffinity on Linux; num_cpus
    // is the fallback for platforms where std cannot tell.
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or_else(|_| num_cpus::get()).max(1)
}

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
    /// How long tasks waited in the queue (since creation or the last reset).
    pub wait: Summary,
    /// How long kernels ran (since creation or the last reset).
    pub run: Summary,
}

/// Why [`Pool::submit`] refused a task (which it hands back, as crossbeam's
/// send errors do).
#[derive(Debug)]
pub enum Refused {
    /// The pool was closed or aborted.
    Closed(Task),
    /// The queue already holds `max_queue` tasks.
    Full(Task),
}

impl Refused {
    /// The task that was not queued.
    pub fn into_task(self) -> Task {
        match self {
            Refused::Closed(task) | Refused::Full(task) => task,
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Closed(_) => f.write_str("the pool is closed and accepts no new tasks"),
            Refused::Full(_) => f.write_str("the queue is full"),
        }
    }
}

impl std::error::Error for Refused {}

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
                last_spawn: None,
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
            }),
            seat_cvs: (0..max).map(|_| Condvar::new()).collect(),
            metrics: (0..max).map(|_| SeatMetrics::default()).collect(),
            supervisor_cv: Condvar::new(),
            exit_cv: Condvar::new(),
            queued: AtomicUsize::new(0),
            cancel: std::sync::atomic::AtomicBool::new(false),
            terminated: AtomicBool::new(false),
            mean_run_ns: std::sync::atomic::AtomicU64::new(0),
            room_freed: std::sync::atomic::AtomicBool::new(false),
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
        Ok(Pool { shared, baseline: std::sync::Mutex::new((Summary::default(), Summary::default())) })
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

    /// Queues a task; returns the queue length after it. Never blocks beyond
    /// the pool mutex and never spawns.
    pub fn submit(&self, task: Task) -> Result<usize, Refused> {
        let shared = &*self.shared;
        let mut st = shared.lock();
        if st.lifecycle != Lifecycle::Running {
            return Err(Refused::Closed(task));
        }
        if st.queue.len() >= shared.config.max_queue {
            return Err(Refused::Full(task));
        }
        let now = task.enqueued_at;
        let ms = shared.millis(now);
        st.arrivals.record(ms);
        st.queue.push_back(task);
        let queued = st.queue.len();
        shared.queued.store(queued, Ordering::Release);
        // Wake a parked thread only if the awake idle ones cannot take it all;
        // a core thread if one is parked, an extra only once the core threads
        // fall behind (policy::extras_may_take).
        let unserved = queued > st.spinning + st.wakes_pending;
        let wake = if unserved {
            let oldest_age = st.queue.front().map(|t| now.saturating_duration_since(t.enqueued_at)).unwrap_or_default();
            let extras = extras_allowed(&mut st, queued, oldest_age, now, &shared.config.policy);
            pick_parked(&mut st, extras)
        } else {
            None
        };
        // The supervisor must look at this queue within `spawn_delay` if it
        // may have to spawn (it may be asleep, or in a long timed wait, such
        // as the idle timeout it keeps while only busy extras exist: a load
        // step then went unseen for 250 ms), or if nobody will take the task
        // while an idle extra thread could once the task is `spawn_delay`
        // old (policy::extras_may_take).
        let late = supervisor_late(&st, now + shared.config.policy.spawn_delay);
        let nudge = (late && queued > st.threads && st.threads < shared.config.policy.max_threads)
            || (late && unserved && wake.is_none() && has_parked_extra(&st));
        if nudge {
            st.supervisor_sleeping = false;
            st.supervisor_wakes_at = Some(now);
        }
        drop(st);
        if let Some(seat) = wake {
            shared.seat_cvs[seat].notify_one();
        }
        if nudge {
            shared.supervisor_cv.notify_one();
        }
        Ok(queued)
    }

    /// Queues the front of `tasks`, in order, under one lock: as many as the
    /// queue has room for (all of them when it is unbounded). The tasks that
    /// did not fit stay in `tasks`, handed back as [`submit`](Self::submit)
    /// hands back a refused one. Returns the queue length after; when the pool
    /// is closed, queues nothing and answers `None`.
    ///
    /// This is `postMany()`'s path: one lock, one arrival record and one
    /// round of wake decisions per call instead of per task.
    pub fn submit_many(&self, tasks: &mut Vec<Task>) -> Option<usize> {
        let shared = &*self.shared;
        let mut st = shared.lock();
        if st.lifecycle != Lifecycle::Running {
            return None;
        }
        let room = shared.config.max_queue.saturating_sub(st.queue.len());
        let count = room.min(tasks.len());
        if count == 0 {
            return Some(st.queue.len());
        }
        let now = tasks[count - 1].enqueued_at;
        let ms = shared.millis(now);
        st.arrivals.record_many(ms, count);
        st.queue.extend(tasks.drain(..count));
        let queued = st.queue.len();
        shared.queued.store(queued, Ordering::Release);
        // As `submit`, but for every task that nobody awake will take: wake
        // parked threads (core first, extras only once they may take) until
        // the awake ones cover the queue or none is left to wake.
        let mut wake = Vec::new();
        while queued > st.spinning + st.wakes_pending {
            let oldest_age = st.queue.front().map(|t| now.saturating_duration_since(t.enqueued_at)).unwrap_or_default();
            let extras = extras_allowed(&mut st, queued, oldest_age, now, &shared.config.policy);
            match pick_parked(&mut st, extras) {
                Some(seat) => wake.push(seat),
                None => break,
            }
        }
        let unserved = queued > st.spinning + st.wakes_pending;
        let late = supervisor_late(&st, now + shared.config.policy.spawn_delay);
        let nudge =
            (late && queued > st.threads && st.threads < shared.config.policy.max_threads) || (late && unserved && has_parked_extra(&st));
        if nudge {
            st.supervisor_sleeping = false;
            st.supervisor_wakes_at = Some(now);
        }
        drop(st);
        for seat in wake {
            shared.seat_cvs[seat].notify_one();
        }
        if nudge {
            shared.supervisor_cv.notify_one();
        }
        Some(queued)
    }

    /// Removes every queued task that carries `flag` as its cancel flag (the
    /// tasks of one `postMany()` batch share one) in one pass under one lock;
    /// returns their slots. Tasks already taken by a thread are left alone:
    /// raising the flag is what stops them.
    pub fn remove_queued_with(&self, flag: &std::sync::Arc<std::sync::atomic::AtomicBool>) -> Vec<u32> {
        self.remove_queued_with_any(std::slice::from_ref(flag))
    }

    /// [`remove_queued_with`](Self::remove_queued_with) for many flags at
    /// once (the batches of one AbortSignal that fired): still one pass over
    /// the queue under one lock, where a call per flag would pass over it
    /// once per batch. Returns the removed tasks' slots, in queue order.
    pub fn remove_queued_with_any(&self, flags: &[std::sync::Arc<std::sync::atomic::AtomicBool>]) -> Vec<u32> {
        // Many flags: a set of their addresses, so that each queued task
        // costs one look-up; a few: compared in turn.
        const SET_FROM: usize = 8;
        let set: std::collections::HashSet<*const std::sync::atomic::AtomicBool> =
            if flags.len() >= SET_FROM { flags.iter().map(std::sync::Arc::as_ptr).collect() } else { Default::default() };
        let carries_one = |f: &std::sync::Arc<std::sync::atomic::AtomicBool>| {
            if flags.len() >= SET_FROM {
                set.contains(&std::sync::Arc::as_ptr(f))
            } else {
                flags.iter().any(|flag| std::sync::Arc::ptr_eq(f, flag))
            }
        };
        let mut removed = Vec::new();
        let mut st = self.shared.lock();
        st.queue.retain(|t| {
            let hit = t.cancel.as_ref().is_some_and(carries_one);
            if hit {
                removed.push(t.slot);
            }
            !hit
        });
        self.shared.queued.store(st.queue.len(), Ordering::Release);
        removed
    }

    /// Removes the queued task with `slot` (its AbortSignal fired before it
    /// started); false if it is not in the queue (running or done).
    pub fn remove_queued(&self, slot: u32) -> bool {
        let mut st = self.shared.lock();
        // Aborts are rare and usually hit recent posts: search from the back.
        let Some(i) = st.queue.iter().rposition(|t| t.slot == slot) else {
            return false;
        };
        st.queue.remove(i);
        self.shared.queued.store(st.queue.len(), Ordering::Release);
        true
    }

    /// Removes every queued task whose slot is in `slots` (they share an
    /// AbortSignal that fired) in one pass under one lock; returns the slots
    /// removed. Tasks not in the queue (running or done) are left alone.
    pub fn remove_queued_many(&self, slots: &[u32]) -> Vec<u32> {
        if slots.len() == 1 {
            return if self.remove_queued(slots[0]) { vec![slots[0]] } else { Vec::new() };
        }
        let wanted: std::collections::HashSet<u32> = slots.iter().copied().collect();
        let mut removed = Vec::new();
        let mut st = self.shared.lock();
        st.queue.retain(|t| {
            let hit = wanted.contains(&t.slot);
            if hit {
                removed.push(t.slot);
            }
            !hit
        });
        self.shared.queued.store(st.queue.len(), Ordering::Release);
        removed
    }

    /// True once since the last call if a worker took tasks from a full
    /// queue. Call after [`take_completions`](Self::take_completions), which lowered the wake flag.
    pub fn take_room_freed(&self) -> bool {
        self.shared.room_freed.load(Ordering::Acquire) && self.shared.room_freed.swap(false, Ordering::AcqRel)
    }

    /// Removes the oldest queued task that is not a stream's (for the
    /// `drop-oldest` queue policy) and returns its slot; `None` if there is
    /// none.
    pub fn drop_oldest(&self) -> Option<u32> {
        let mut st = self.shared.lock();
        // A stream's task is never dropped: the stream has one in flight at
        // a time, and losing it would end the whole stream.
        let at = st.queue.iter().position(|t| !matches!(t.mode, crate::task::Mode::Stream(_)))?;
        let task = st.queue.remove(at)?;
        self.shared.queued.store(st.queue.len(), Ordering::Release);
        Some(task.slot)
    }

    /// Tasks waiting in the queue right now (lock-free; may be stale).
    pub fn queued(&self) -> usize {
        self.shared.queued.load(Ordering::Acquire)
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
        let st = self.shared.lock();
        let oldest = st.queue.front().map(|t| t.enqueued_at.elapsed()).unwrap_or_default();
        PoolStats {
            threads: st.threads,
            busy_threads: st.busy,
            queued: st.queue.len(),
            oldest_queued: oldest,
            spawned: st.spawned,
            retired: st.retired,
            spawn_errors: st.spawn_errors,
            spawns_by_reason: st.spawns_by_reason,
            wait,
            run,
        }
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
