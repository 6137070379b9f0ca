//! The pool: a queue, worker threads that drain it, and a supervisor thread
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
//! grows past the thread count while it sleeps without a timeout. Threads are
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

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Once;
use std::time::{Duration, Instant};

use crate::completion::{CompletionQueue, Waker};
use crate::histogram::{Histogram, Summary};
use crate::kernels::{self, KernelError, RunContext};
use crate::policy::{self, Action, Observation, PolicyConfig, RetireReason, SpawnReason};
use crate::sync::thread::{self, JoinHandle};
use crate::sync::{Arc, AtomicBool, AtomicUsize, Condvar, Mutex, MutexGuard};
use crate::task::{Completion, Task, TaskError};

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
    /// How long tasks waited in the queue (since creation or the last reset).
    pub wait: Summary,
    /// How long kernels ran (since creation or the last reset).
    pub run: Summary,
}

/// Latency histograms of one seat; the seat's current thread is the only writer.
#[derive(Default)]
struct SeatMetrics {
    /// Queue wait: from submit to the kernel's start.
    wait: Histogram,
    /// Kernel run time.
    run: Histogram,
}

/// Why [`Pool::submit`] refused a task (which it hands back).
#[derive(Debug)]
pub enum Refused {
    /// The pool was closed or aborted.
    Closed(Task),
    /// The queue already holds `max_queue` tasks.
    Full(Task),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    /// Accepting tasks.
    Running,
    /// `close()`: finish the queue, then exit.
    Draining,
    /// `abort()`: exit as soon as the running task (if any) is done.
    Stopping,
}

/// Per-seat state, under the pool mutex.
#[derive(Default)]
struct Seat {
    /// Someone lives here (starting, running or exiting).
    occupied: bool,
    /// Small number shown to users (`threadId`), unique per pool.
    thread_id: u32,
    /// Spawn order; lower is more senior.
    generation: u64,
    /// Core threads are never retired.
    core: bool,
    /// Waiting on the seat's condvar.
    parked: bool,
    /// A waker has notified this thread and it has not yet run.
    wake_pending: bool,
    /// Told to exit by the supervisor.
    retire: bool,
    /// Since when the thread has had nothing to do (None while busy).
    idle_since: Option<Instant>,
    /// Handle to join once the thread has exited.
    handle: Option<JoinHandle<()>>,
    /// The thread has left its loop; its handle may be joined.
    exited: bool,
}

/// Everything under the pool mutex.
struct State {
    /// Waiting tasks, oldest first.
    queue: VecDeque<Task>,
    /// One entry per possible thread.
    seats: Vec<Seat>,
    /// Occupied seats.
    threads: usize,
    /// Threads running a task.
    busy: usize,
    /// Threads spinning for work (awake, idle).
    spinning: usize,
    /// Parked threads that have been notified but not yet run.
    wakes_pending: usize,
    /// Running / draining / stopping.
    lifecycle: Lifecycle,
    /// A spawned thread has not yet checked in.
    spawning: bool,
    /// When the last thread was spawned.
    last_spawn: Option<Instant>,
    /// Spawn order counter.
    next_generation: u64,
    /// Next `threadId`.
    next_thread_id: u32,
    /// The supervisor sleeps without a timeout and must be nudged.
    supervisor_sleeping: bool,
    /// When the supervisor's timed sleep ends (None: not in a timed sleep).
    supervisor_wakes_at: Option<Instant>,
    /// The supervisor has left its loop.
    supervisor_exited: bool,
    /// Handles of exited threads, waiting to be joined.
    finished: Vec<JoinHandle<()>>,
    /// Idle extras may be woken until then (see `policy::extras_window`).
    extras_open_until: Option<Instant>,
    /// Moving average of task run time over recent batches (0: unknown).
    mean_run_ns: f64,
    /// Failed thread starts since the last successful one.
    spawn_failures_in_a_row: u32,
    /// No spawn attempt before this instant (after a failure).
    spawn_backoff_until: Option<Instant>,
    /// Counters for stats().
    spawned: u64,
    retired: u64,
    spawn_errors: u64,
}

/// State shared by the pool handle and all its threads.
struct Shared {
    config: PoolConfig,
    state: Mutex<State>,
    /// One condvar per seat so a specific (the most senior) thread can be woken.
    seat_cvs: Box<[Condvar]>,
    /// Latency histograms per seat (kept when a seat changes hands).
    metrics: Box<[SeatMetrics]>,
    /// The supervisor's condvar.
    supervisor_cv: Condvar,
    /// Signalled whenever a thread exits (for `join`).
    exit_cv: Condvar,
    /// Mirror of `queue.len()` for lock-free polling by spinning threads.
    queued: AtomicUsize,
    /// Raised by `abort`: running kernels stop at their next chunk. (A plain
    /// std flag: kernels read it, it takes no part in the wake protocol.)
    cancel: std::sync::atomic::AtomicBool,
    /// Set once every thread has exited after close/abort.
    terminated: AtomicBool,
    /// A worker took tasks from a full queue (`max_queue`): the consumer is
    /// woken to let posts that wait for room in. (A plain std flag, handed
    /// over like a completion: raised before the wake, read after the drain.)
    room_freed: std::sync::atomic::AtomicBool,
    /// Finished tasks on their way to the consumer.
    completions: CompletionQueue,
    /// Thread events on their way to the consumer (workers and supervisor
    /// send, the JS thread receives).
    events: (crossbeam_channel::Sender<PoolEvent>, crossbeam_channel::Receiver<PoolEvent>),
}

/// A pool of worker threads. Dropping it aborts and joins every thread.
pub struct Pool {
    shared: Arc<Shared>,
}

impl Pool {
    /// Starts the core threads and the supervisor. `waker` is called (from any
    /// thread) when completions or events are ready to be drained.
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
                mean_run_ns: 0.0,
                spawn_failures_in_a_row: 0,
                spawn_backoff_until: None,
                spawned: 0,
                retired: 0,
                spawn_errors: 0,
            }),
            seat_cvs: (0..max).map(|_| Condvar::new()).collect(),
            metrics: (0..max).map(|_| SeatMetrics::default()).collect(),
            supervisor_cv: Condvar::new(),
            exit_cv: Condvar::new(),
            queued: AtomicUsize::new(0),
            cancel: std::sync::atomic::AtomicBool::new(false),
            terminated: AtomicBool::new(false),
            room_freed: std::sync::atomic::AtomicBool::new(false),
            completions: CompletionQueue::new(waker),
            events: crossbeam_channel::unbounded(),
            config,
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
        Ok(Pool { shared })
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
        st.queue.push_back(task);
        let queued = st.queue.len();
        shared.queued.store(queued, Ordering::Release);
        // Wake a parked thread only if the awake idle ones cannot take it all;
        // a core thread if one is parked, an extra only once the queue is more
        // than one thread can handle.
        let unserved = queued > st.spinning + st.wakes_pending;
        let wake = if unserved {
            let oldest_age = st.queue.front().map(|t| now.saturating_duration_since(t.enqueued_at)).unwrap_or_default();
            let extras = extras_allowed(&mut st, queued, oldest_age, now, &shared.config.policy);
            pick_parked(&mut st, extras)
        } else {
            None
        };
        // The supervisor must look at this queue soon if it may have to
        // spawn, or if nobody will take the task while an idle extra thread
        // could once the task is `spawn_delay` old (policy::extras_may_take).
        let nudge = (st.supervisor_sleeping && queued > st.threads)
            || (unserved && wake.is_none() && supervisor_late(&st, now + shared.config.policy.spawn_delay) && has_parked_extra(&st));
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
    /// queue. Call after [`drain`](Self::drain), which lowered the wake flag.
    pub fn take_room_freed(&self) -> bool {
        self.shared.room_freed.load(Ordering::Acquire) && self.shared.room_freed.swap(false, Ordering::AcqRel)
    }

    /// Removes the oldest queued task (for the `drop-oldest` queue policy)
    /// and returns its slot; `None` if the queue is empty.
    pub fn drop_oldest(&self) -> Option<u32> {
        let mut st = self.shared.lock();
        let task = st.queue.pop_front()?;
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
    pub fn drain(&self, out: &mut Vec<Completion>) -> bool {
        let completions = &self.shared.completions;
        // Order matters: a thread sets `terminated` and then wakes; lowering
        // the flag first means that either we see `terminated` here, or its
        // wake schedules another drain.
        completions.begin_drain();
        let terminated = self.is_terminated();
        completions.take(out);
        terminated
    }

    /// Moves pending thread events into `out`.
    pub fn take_events(&self, out: &mut Vec<PoolEvent>) {
        out.extend(self.shared.events.1.try_iter());
    }

    /// Current numbers. With `reset_latency`, the wait / run histograms
    /// start afresh after being read.
    pub fn stats(&self, reset_latency: bool) -> PoolStats {
        let mut wait = Summary::default();
        let mut run = Summary::default();
        for m in self.shared.metrics.iter() {
            m.wait.merge_into(&mut wait);
            m.run.merge_into(&mut run);
            if reset_latency {
                m.wait.reset();
                m.run.reset();
            }
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
            wait,
            run,
        }
    }

    /// Stops accepting tasks; threads exit once the queue is empty.
    pub fn close(&self) {
        let mut st = self.shared.lock();
        if st.lifecycle == Lifecycle::Running {
            st.lifecycle = Lifecycle::Draining;
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

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held (kernels run unlocked),
        // but if one did, the state is still consistent enough to shut down.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake_all(&self) {
        for cv in self.seat_cvs.iter() {
            cv.notify_all();
        }
        self.supervisor_cv.notify_all();
    }

    fn emit(&self, event: PoolEvent) {
        // Cannot fail: `self` owns the receiver too.
        let _ = self.events.0.send(event);
        self.completions.wake();
    }
}

/// Whether idle extra threads may be woken now: the policy's gate, kept open
/// for [`policy::extras_window`] after it last held.
fn extras_allowed(st: &mut State, queued: usize, oldest_age: Duration, now: Instant, cfg: &PolicyConfig) -> bool {
    if policy::extras_may_take(queued, oldest_age, cfg) {
        st.extras_open_until = Some(now + policy::extras_window(cfg));
        return true;
    }
    st.extras_open_until.is_some_and(|until| now < until)
}

/// Will the supervisor not look at the pool again before `by`?
fn supervisor_late(st: &State, by: Instant) -> bool {
    st.supervisor_sleeping || st.supervisor_wakes_at.is_some_and(|at| at > by)
}

/// Is an extra (non-core) thread parked, one that could be woken for work?
fn has_parked_extra(st: &State) -> bool {
    st.seats.iter().any(|s| s.occupied && s.parked && !s.wake_pending && !s.core && !s.retire)
}

/// The most senior parked thread not already being woken (core threads
/// only, unless `extras`); marks it woken.
fn pick_parked(st: &mut State, extras: bool) -> Option<usize> {
    let seat = st
        .seats
        .iter()
        .enumerate()
        .filter(|(_, s)| s.occupied && s.parked && !s.wake_pending && (s.core || extras))
        .min_by_key(|(_, s)| s.generation)
        .map(|(i, _)| i)?;
    st.seats[seat].wake_pending = true;
    st.wakes_pending += 1;
    Some(seat)
}

fn abort_queue(shared: &Shared) -> Vec<u32> {
    let mut st = shared.lock();
    st.lifecycle = Lifecycle::Stopping;
    shared.cancel.store(true, Ordering::Release);
    let slots = st.queue.drain(..).map(|t| t.slot).collect();
    shared.queued.store(0, Ordering::Release);
    drop(st);
    shared.wake_all();
    slots
}

fn abort_and_join(shared: &Shared) {
    abort_queue(shared);
    join_all(shared);
}

fn join_all(shared: &Shared) {
    let mut st = shared.lock();
    while st.threads > 0 || !st.supervisor_exited {
        st = shared.exit_cv.wait(st).unwrap_or_else(|e| e.into_inner());
    }
    let handles = std::mem::take(&mut st.finished);
    drop(st);
    for h in handles {
        let _ = h.join();
    }
}

/// Starts one worker in a free seat. Called by the constructor and the supervisor.
fn spawn_worker(shared: &Arc<Shared>, reason: SpawnReason) -> std::io::Result<()> {
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
    st.last_spawn = Some(Instant::now());
    drop(st);

    let injected_failure = shared.config.fail_spawns_after.is_some_and(|n| shared.lock().spawned >= n);
    let spawned = if injected_failure {
        Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "Resource temporarily unavailable (EAGAIN, injected)"))
    } else {
        let worker_shared = shared.clone();
        thread::Builder::new().name(format!("{THREAD_NAME_PREFIX}{thread_id}")).spawn(move || worker_main(&worker_shared, seat))
    };

    let mut st = shared.lock();
    match spawned {
        Ok(handle) => {
            st.spawned += 1;
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
            st.spawn_errors += 1;
            // Back off before the next attempt: 10 ms, doubling up to 1 s, so
            // a system out of threads is not asked again every check.
            let backoff = Duration::from_millis(10 << st.spawn_failures_in_a_row.min(7)).min(Duration::from_secs(1));
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

/// How much work (in nanoseconds) a worker takes from the queue at once.
/// Tiny tasks are taken in batches so that the queue lock and the completion
/// queue are touched once per batch instead of once per task; tasks that take
/// longer than this are taken one at a time, so a batch never holds back work
/// another thread could start.
const BATCH_BUDGET_NS: f64 = 20_000.0;
/// Upper bound on tasks taken at once.
const MAX_BATCH: usize = 64;
/// While the queue still holds work, a worker keeps finished tasks for up to
/// this long before handing them to the JS thread, so that a steady stream of
/// medium tasks (say 64 KiB hashes, ~50 µs each) wakes the JS thread once per
/// few dozen results instead of once per result: on a machine with as many
/// workers as cores every wake-up steals a core from a worker. With an empty
/// queue the results go out at once, so latency is only added under backlog.
const HOLD_COMPLETIONS_NS: f64 = 1_000_000.0;
/// Upper bound on finished tasks a worker holds back.
const MAX_HELD: usize = 256;

fn worker_main(shared: &Arc<Shared>, seat: usize) {
    // Before the first task: the event loop's thread should win every
    // contest for a core against a worker (see crate::priority).
    crate::priority::lower_current_thread(shared.config.nice_increment);
    let mut batch: Vec<Task> = Vec::with_capacity(MAX_BATCH);
    let mut done: Vec<Completion> = Vec::with_capacity(MAX_BATCH);
    // Moving average of one task's run time; starts high so the first tasks
    // are taken one by one until we know they are cheap.
    let mut avg_task_ns = BATCH_BUDGET_NS;
    // When the oldest result in `done` was started (None: nothing held).
    let mut held_since: Option<Instant> = None;
    let mut st = shared.lock();
    st.spawning = false;
    loop {
        let queued = st.queue.len();
        if queued > 0 {
            // Take this thread's fair share of the queue, within the budget.
            let share = queued.div_ceil(st.threads.max(1));
            let budget = (BATCH_BUDGET_NS / avg_task_ns.max(1.0)) as usize;
            let take = share.min(budget).clamp(1, MAX_BATCH);
            batch.extend(st.queue.drain(..take));
            shared.queued.store(st.queue.len(), Ordering::Release);
            st.busy += 1;
            st.seats[seat].idle_since = None;
            drop(st);
            if queued >= shared.config.max_queue {
                // Posts may be waiting for this room (queueFull: 'wait').
                shared.room_freed.store(true, Ordering::Release);
                shared.completions.wake();
            }
            let metrics = &shared.metrics[seat];
            let started = Instant::now();
            let n = batch.len();
            let mut task_start = started;
            for task in batch.drain(..) {
                let waited = task_start.saturating_duration_since(task.enqueued_at);
                metrics.wait.record(waited);
                let outcome = if shared.config.max_queue_age.is_some_and(|max| waited > max) {
                    Err(TaskError::Expired)
                } else {
                    let deadline = task.timeout.map(|t| task_start + t);
                    let ctx = RunContext::for_task(&shared.cancel, task.cancel.as_deref(), deadline);
                    run_task(&task, &ctx)
                };
                let task_end = Instant::now();
                metrics.run.record(task_end - task_start);
                task_start = task_end;
                done.push(Completion { slot: task.slot, outcome });
            }
            let now = task_start;
            let per_task = now.duration_since(started).as_nanos() as f64 / n as f64;
            avg_task_ns = 0.75 * avg_task_ns + 0.25 * per_task;
            let oldest_held = *held_since.get_or_insert(started);
            // Hold the results back only while more work is queued, the next
            // task is expected to be short, and the oldest held result is young.
            let hold = shared.queued.load(Ordering::Acquire) > 0
                && done.len() < MAX_HELD
                && avg_task_ns * 4.0 < HOLD_COMPLETIONS_NS
                && (now.duration_since(oldest_held).as_nanos() as f64) < HOLD_COMPLETIONS_NS
                && !shared.cancel.load(Ordering::Relaxed);
            if !hold {
                shared.completions.push_all(&mut done);
                held_since = None;
            }
            st = shared.lock();
            st.busy -= 1;
            st.mean_run_ns = if st.mean_run_ns == 0.0 { per_task } else { 0.8 * st.mean_run_ns + 0.2 * per_task };
            continue;
        }
        if !done.is_empty() {
            // Nothing left to run: hand over what we held back, unlocked.
            drop(st);
            shared.completions.push_all(&mut done);
            held_since = None;
            st = shared.lock();
            continue;
        }
        match st.lifecycle {
            Lifecycle::Running => {}
            Lifecycle::Draining | Lifecycle::Stopping => break,
        }
        if st.seats[seat].retire {
            break;
        }
        if st.seats[seat].idle_since.is_none() {
            st.seats[seat].idle_since = Some(Instant::now());
        }
        // One idle core thread at a time spins briefly before parking: a
        // futex round trip costs more than a few microseconds of polling when
        // tasks arrive back to back, but more spinners would only steal the
        // CPU the JS thread needs to produce those tasks. Extra threads park
        // at once: they are only wanted when the queue backs up.
        if st.spinning == 0 && st.seats[seat].core {
            st.spinning += 1;
            drop(st);
            spin_for_work(shared);
            st = shared.lock();
            st.spinning -= 1;
            if !st.queue.is_empty() || st.lifecycle != Lifecycle::Running || st.seats[seat].retire {
                continue;
            }
        }
        st.seats[seat].parked = true;
        st = shared.seat_cvs[seat].wait(st).unwrap_or_else(|e| e.into_inner());
        let s = &mut st.seats[seat];
        s.parked = false;
        if std::mem::take(&mut s.wake_pending) {
            st.wakes_pending -= 1;
        }
    }
    // Leave the seat.
    let s = std::mem::take(&mut st.seats[seat]);
    if s.wake_pending {
        st.wakes_pending -= 1;
    }
    if let Some(h) = s.handle {
        st.finished.push(h);
    } else {
        // The spawner has not stored the handle yet; tell it we are gone.
        st.seats[seat].exited = true;
    }
    st.threads -= 1;
    let retired = s.retire && st.lifecycle == Lifecycle::Running;
    let threads = st.threads;
    let last = note_exit(shared, &mut st);
    drop(st);
    if retired {
        shared.emit(PoolEvent::Retire { thread_id: s.thread_id, threads, reason: RetireReason::IdleTimeout });
    }
    if last {
        shared.completions.wake();
    }
}

/// Records that a thread left; returns true if it was the last one after a
/// close/abort (then `terminated` is now set).
fn note_exit(shared: &Shared, st: &mut State) -> bool {
    shared.exit_cv.notify_all();
    if st.lifecycle != Lifecycle::Running && st.threads == 0 && st.supervisor_exited {
        shared.terminated.store(true, Ordering::Release);
        true
    } else {
        false
    }
}

fn spin_for_work(shared: &Shared) {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if shared.queued.load(Ordering::Acquire) > 0 || shared.cancel.load(Ordering::Relaxed) {
                return;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= shared.config.spin {
            return;
        }
    }
}

fn run_task(task: &Task, ctx: &RunContext<'_>) -> Result<kernels::Output, TaskError> {
    let Some(kernel) = kernels::get(task.kernel) else {
        return Err(TaskError::InvalidInput(format!("no kernel with id {}", task.kernel)));
    };
    match catch_unwind(AssertUnwindSafe(|| kernel.run(&task.input, ctx))) {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(KernelError::Cancelled)) => Err(TaskError::Cancelled),
        Ok(Err(KernelError::InvalidInput(m))) => Err(TaskError::InvalidInput(m)),
        Ok(Err(KernelError::TimedOut)) => Err(TaskError::TimedOut),
        Err(payload) => Err(TaskError::Panic(panic_message(payload.as_ref()))),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "kernel panicked".to_owned()
    }
}

/// Keeps kernel panics off stderr (they become rejected promises) while
/// leaving every other thread's panics to the previous hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let ours = thread::current().name().is_some_and(|n| n.starts_with(THREAD_NAME_PREFIX));
            if !ours {
                previous(info);
            }
        }));
    });
}

fn supervisor_main(shared: &Arc<Shared>) {
    let cfg = shared.config.policy.clone();
    let mut st = shared.lock();
    while supervising(&st) {
        let now = Instant::now();
        let obs = observe(&st, now);
        let decision = policy::decide(&obs, &cfg);
        match decision.action {
            Action::Spawn(reason) => {
                drop(st);
                // Failures are counted and reported by spawn_worker; the pool
                // goes on with the threads it has and tries again later.
                let _ = spawn_worker(shared, reason);
                st = shared.lock();
                continue;
            }
            Action::None if extras_allowed(&mut st, obs.queued, policy::oldest_age(&obs), now, &cfg) => {
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
            Action::Retire(seat, _) => {
                let s = &mut st.seats[seat];
                if s.occupied && !s.core && s.parked {
                    s.retire = true;
                    st.retired += 1;
                    shared.seat_cvs[seat].notify_one();
                }
            }
        }
        st = match decision.next_check {
            Some(timeout) => {
                st.supervisor_wakes_at = Some(now + timeout);
                let mut st = shared.supervisor_cv.wait_timeout(st, timeout).unwrap_or_else(|e| e.into_inner()).0;
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

/// Whether the supervisor still has a job: the pool runs, or it is closing
/// with tasks queued and no thread left to run them (a pool with
/// `min_threads == 0` whose threads had all retired); then it starts one,
/// as the policy says, since `close()` promises to finish the queue.
fn supervising(st: &State) -> bool {
    match st.lifecycle {
        Lifecycle::Running => true,
        Lifecycle::Draining => st.threads == 0 && !st.queue.is_empty(),
        Lifecycle::Stopping => false,
    }
}

fn observe(st: &State, now: Instant) -> Observation {
    let newest_idle_extra = st
        .seats
        .iter()
        .enumerate()
        .filter(|(_, s)| s.occupied && !s.core && !s.retire && s.parked)
        .filter_map(|(i, s)| s.idle_since.map(|t| (i, t, s.generation)))
        .max_by_key(|&(_, _, generation)| generation)
        .map(|(i, t, _)| (i, t));
    Observation {
        now,
        queued: st.queue.len(),
        oldest_enqueued: st.queue.front().map(|t| t.enqueued_at),
        threads: st.threads,
        spawning: st.spawning,
        last_spawn: st.last_spawn,
        spawn_backoff_until: st.spawn_backoff_until,
        mean_run: (st.mean_run_ns > 0.0).then(|| Duration::from_nanos(st.mean_run_ns as u64)),
        newest_idle_extra,
    }
}
