//! The pool's shared state: seats, lifecycle and the queue, all under one
//! mutex, plus the lock-free mirrors and condvars around it; and the small
//! decisions about that state that both `submit` and the threads make
//! (which parked thread to wake, whether to nudge the supervisor).

use std::time::{Duration, Instant};

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use super::{PoolConfig, PoolEvent};
use crate::completion::CompletionQueue;
use crate::histogram::Histogram;
use crate::policy::{self, PolicyConfig};
use crate::sync::thread::JoinHandle;
use crate::sync::{AtomicBool, AtomicUsize, Condvar, Mutex, MutexGuard};
use crate::task::Task;

/// Thread events on their way to the consumer: workers and the supervisor
/// send, the JS thread receives.
pub(super) struct EventChannel {
    pub(super) sender: crossbeam_channel::Sender<PoolEvent>,
    pub(super) receiver: crossbeam_channel::Receiver<PoolEvent>,
}

impl EventChannel {
    pub(super) fn new() -> Self {
        let (sender, receiver) = crossbeam_channel::unbounded();
        EventChannel { sender, receiver }
    }
}

/// Latency histograms of one seat; the seat's current thread is the only writer.
#[derive(Default)]
pub(super) struct SeatMetrics {
    /// Queue wait: from submit to the kernel's start.
    pub(super) wait: Histogram,
    /// Kernel run time.
    pub(super) run: Histogram,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lifecycle {
    /// Accepting tasks.
    Running,
    /// `close()`: finish the queue, then exit.
    Closing,
    /// `abort()`: exit as soon as the running task (if any) is done.
    Stopping,
}

/// Per-seat state, under the pool mutex.
#[derive(Default)]
pub(super) struct Seat {
    /// Someone lives here (starting, running or exiting).
    pub(super) occupied: bool,
    /// Small number shown to users (`threadId`), unique per pool.
    pub(super) thread_id: u32,
    /// Spawn order; lower is more senior.
    pub(super) generation: u64,
    /// Core threads are never retired.
    pub(super) core: bool,
    /// Waiting on the seat's condvar.
    pub(super) parked: bool,
    /// A waker has notified this thread and it has not yet run.
    pub(super) wake_pending: bool,
    /// Told to exit by the supervisor.
    pub(super) retire: bool,
    /// Since when the thread has had nothing to do (None while busy).
    pub(super) idle_since: Option<Instant>,
    /// Why it was told to exit (when `retire`).
    pub(super) retire_reason: policy::RetireReason,
    /// Handle to join once the thread has exited.
    pub(super) handle: Option<JoinHandle<()>>,
    /// The thread has left its loop; its handle may be joined.
    pub(super) exited: bool,
}

/// Everything under the pool mutex.
pub(super) struct State {
    /// Waiting tasks, oldest first.
    pub(super) queue: VecDeque<Task>,
    /// One entry per possible thread.
    pub(super) seats: Vec<Seat>,
    /// Occupied seats.
    pub(super) threads: usize,
    /// Threads running a task.
    pub(super) busy: usize,
    /// Threads spinning for work (awake, idle).
    pub(super) spinning: usize,
    /// Parked threads that have been notified but not yet run.
    pub(super) wakes_pending: usize,
    /// Running / closing / stopping.
    pub(super) lifecycle: Lifecycle,
    /// A thread is being created (`spawn_worker` is under way).
    pub(super) spawning: bool,
    /// Threads created that have not yet run (checked in).
    pub(super) starting: usize,
    /// When the last thread was spawned.
    pub(super) last_spawn: Option<Instant>,
    /// When a worker last took tasks from the queue: a queue that has not
    /// moved for a spawn delay is held up behind running tasks, whatever
    /// the scaling rule's sizing says (the supervisor).
    pub(super) last_take: Option<Instant>,
    /// Spawn order counter.
    pub(super) next_generation: u64,
    /// Next `threadId`.
    pub(super) next_thread_id: u32,
    /// The supervisor sleeps without a timeout and must be nudged.
    pub(super) supervisor_sleeping: bool,
    /// When the supervisor's timed sleep ends (None: not in a timed sleep).
    pub(super) supervisor_wakes_at: Option<Instant>,
    /// The supervisor has left its loop.
    pub(super) supervisor_exited: bool,
    /// Handles of exited threads, waiting to be joined.
    pub(super) finished: Vec<JoinHandle<()>>,
    /// Idle extras may be woken until then (see `policy::extras_window`).
    pub(super) extras_open_until: Option<Instant>,
    /// Failed thread starts since the last successful one.
    pub(super) spawn_failures_in_a_row: u32,
    /// No spawn attempt before this instant (after a failure).
    pub(super) spawn_backoff_until: Option<Instant>,
    /// Counters for stats().
    pub(super) spawned: u64,
    pub(super) retired: u64,
    pub(super) spawn_errors: u64,
    /// Threads started, by reason (`SpawnReason::index`).
    pub(super) spawns_by_reason: [u64; 4],
    /// Submissions per millisecond (the demand rule's arrival rate, and
    /// the replay of retirement by use).
    pub(super) arrivals: crate::policy::ArrivalWindow,
    /// The threads the last `idle_timeout` of arrivals needed.
    pub(super) replay: crate::policy::Replay,
}

/// State shared by the pool handle and all its threads.
pub(super) struct Shared {
    pub(super) config: PoolConfig,
    /// When the pool was made: the epoch of the arrival window's milliseconds.
    pub(super) epoch: Instant,
    pub(super) state: Mutex<State>,
    /// One condvar per seat so a specific (the most senior) thread can be woken.
    pub(super) seat_cvs: Box<[Condvar]>,
    /// The tasks each seat's thread took together and has not started
    /// (idle threads may take some: `batch.rs`).
    pub(super) batches: super::batch::Batches,
    /// Latency histograms per seat (kept when a seat changes hands).
    pub(super) metrics: Box<[SeatMetrics]>,
    /// The supervisor's condvar.
    pub(super) supervisor_cv: Condvar,
    /// Signalled whenever a thread exits (for `join`).
    pub(super) exit_cv: Condvar,
    /// Mirror of `queue.len()` for lock-free polling by spinning threads.
    pub(super) queued: AtomicUsize,
    /// Raised by `abort`: running kernels stop at their next chunk. (A plain
    /// std flag: kernels read it, it takes no part in the wake protocol.)
    pub(super) cancel: std::sync::atomic::AtomicBool,
    /// Set once every thread has exited after close/abort.
    pub(super) terminated: AtomicBool,
    /// Moving average of task run time over recent batches, in ns, as f64
    /// bits (0: unknown). Updated before a batch's results are handed over,
    /// so a consumer that saw a result never makes the policy see "unknown".
    /// A plain std atomic: only the policy reads it.
    pub(super) mean_run_ns: std::sync::atomic::AtomicU64,
    /// A worker took tasks from a full queue (`max_queue`): the consumer is
    /// woken to let posts that wait for room in. (A plain std flag, handed
    /// over like a completion: raised before the wake, read after the take.)
    pub(super) room_freed: std::sync::atomic::AtomicBool,
    /// Threads waiting for a share of the machine's budget (a plain std
    /// counter: the supervisor reads it to not start threads that would
    /// only wait too).
    pub(super) share_waiting: std::sync::atomic::AtomicUsize,
    /// `max_working_bytes` and what running tasks hold of it.
    pub(super) memory: super::memory::MemoryGate,
    /// Jobs of running tasks whose parts idle threads may run.
    pub(super) parts: super::parts::Board,
    /// Finished tasks on their way to the consumer.
    pub(super) completions: CompletionQueue,
    /// Thread events on their way to the consumer.
    pub(super) events: EventChannel,
}

impl Shared {
    /// Milliseconds from the pool's creation to `at` (the arrival window's clock).
    pub(super) fn millis(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_millis() as u64
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held (kernels run unlocked),
        // but if one did, the state is still consistent enough to shut down.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds one batch's mean task run time to the moving average.
    pub(super) fn record_run_time(&self, per_task_ns: f64) {
        let _ = self.mean_run_ns.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
            let old = f64::from_bits(bits);
            Some(if old == 0.0 { per_task_ns } else { 0.8 * old + 0.2 * per_task_ns }.to_bits())
        });
    }

    /// The moving average of task run time in ns, if any task has run.
    pub(super) fn mean_run(&self) -> Option<f64> {
        let ns = f64::from_bits(self.mean_run_ns.load(Ordering::Relaxed));
        (ns > 0.0).then_some(ns)
    }

    pub(super) fn wake_all(&self) {
        for cv in self.seat_cvs.iter() {
            cv.notify_all();
        }
        self.supervisor_cv.notify_all();
        // Threads waiting for a share look at the pool again.
        if let Some(budget) = &self.config.budget {
            budget.nudge();
        }
    }

    pub(super) fn emit(&self, event: PoolEvent) {
        // Cannot fail: `self` owns the receiver too.
        let _ = self.events.sender.send(event);
        self.completions.wake();
    }
}

/// Whether idle extra threads may be woken now: the policy's gate, kept open
/// for [`policy::extras_window`] after it last held.
pub(super) fn extras_allowed(
    st: &mut State,
    queued: usize,
    oldest_age: Duration,
    now: Instant,
    cfg: &PolicyConfig,
) -> bool {
    if policy::extras_may_take(queued, oldest_age, cfg) {
        st.extras_open_until = Some(now + policy::extras_window(cfg));
        return true;
    }
    st.extras_open_until.is_some_and(|until| now < until)
}

/// Will the supervisor not look at the pool again before `by`?
pub(super) fn supervisor_late(st: &State, by: Instant) -> bool {
    st.supervisor_sleeping || st.supervisor_wakes_at.is_some_and(|at| at > by)
}

/// The newest extra thread that is parked idle, and since when it has
/// been idle: the one retirement by idleness judges (`Observation::newest_idle_extra`).
pub(super) fn newest_idle_extra(st: &State) -> Option<(usize, Instant)> {
    st.seats
        .iter()
        .enumerate()
        .filter(|(_, s)| s.occupied && !s.core && !s.retire && s.parked)
        .filter_map(|(i, s)| s.idle_since.map(|t| (i, t, s.generation)))
        .max_by_key(|&(_, _, generation)| generation)
        .map(|(i, t, _)| (i, t))
}

/// Is an extra (non-core) thread parked, one that could be woken for work?
fn has_parked_extra(st: &State) -> bool {
    st.seats.iter().any(|s| s.occupied && s.parked && !s.wake_pending && !s.core && !s.retire)
}

/// The most senior parked thread not already being woken nor leaving
/// (core threads only, unless `extras`); marks it woken. Work goes to the
/// senior threads first, so that the junior ones idle or are little used,
/// and retire.
pub(super) fn pick_parked(st: &mut State, extras: bool) -> Option<usize> {
    let seat = st
        .seats
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.occupied && s.parked && !s.wake_pending && !s.retire && (s.core || extras)
        })
        .min_by_key(|(_, s)| s.generation)
        .map(|(i, _)| i)?;
    st.seats[seat].wake_pending = true;
    st.wakes_pending += 1;
    Some(seat)
}

/// Who must hear of tasks just queued (at `now`), decided under the lock
/// for `submit` and `submit_many` alike: passes each parked thread to wake
/// to `wake` (marked woken, to be notified once the lock is released) and
/// returns whether to notify the supervisor (marked nudged).
///
/// * A parked thread is woken only while the queue holds more tasks than
///   the threads already spinning or already being woken can take, so a
///   burst of posts costs at most one wake per thread; a core thread if one
///   is parked, an extra only once the core threads fall behind
///   ([`policy::extras_may_take`]): a light load stays on the senior
///   threads, their caches warm, and the extras asleep.
/// * At most `most_wakes` are woken: `submit` passes 1 (one task came; the
///   tasks before it had their own decision), `submit_many` no bound (its
///   tasks came together, and each may need a thread).
/// * The supervisor must look at the queue within `spawn_delay` when it
///   would not on its own (asleep, or in a long timed wait, such as the
///   eighth of the idle timeout it keeps while only busy extras exist,
///   where a step of load would go unseen until then) and either it may have to
///   spawn (more tasks than threads, and room for another), or tasks are
///   left that nobody awake will take and no thread may be woken for while
///   a parked extra exists: that extra may take them once the oldest is
///   `spawn_delay` old, and only the supervisor looks again then.
pub(super) fn wake_for_queued(
    st: &mut State,
    cfg: &PolicyConfig,
    now: Instant,
    most_wakes: usize,
    mut wake: impl FnMut(usize),
) -> bool {
    let queued = st.queue.len();
    let mut woken = 0;
    // Tasks are left that nobody awake will take, and no parked thread may
    // be woken for them.
    let mut stranded = false;
    while queued > st.spinning + st.wakes_pending && woken < most_wakes {
        let oldest_age = st
            .queue
            .front()
            .map(|t| now.saturating_duration_since(t.enqueued_at))
            .unwrap_or_default();
        let extras = extras_allowed(st, queued, oldest_age, now, cfg);
        match pick_parked(st, extras) {
            Some(seat) => {
                wake(seat);
                woken += 1;
            }
            None => {
                stranded = true;
                break;
            }
        }
    }
    let late = supervisor_late(st, now + cfg.spawn_delay);
    let nudge = (late && queued > st.threads && st.threads < cfg.max_threads)
        || (late && stranded && has_parked_extra(st));
    if nudge {
        st.supervisor_sleeping = false;
        st.supervisor_wakes_at = Some(now);
    }
    nudge
}

/// Records that a thread left; returns true if it was the last one after a
/// close/abort (then `terminated` is now set).
pub(super) fn note_exit(shared: &Shared, st: &mut State) -> bool {
    shared.exit_cv.notify_all();
    if st.lifecycle != Lifecycle::Running && st.threads == 0 && st.supervisor_exited {
        shared.terminated.store(true, Ordering::Release);
        true
    } else {
        false
    }
}
