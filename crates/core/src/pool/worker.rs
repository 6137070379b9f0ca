//! The worker threads: take a batch from the queue, run it (idle threads
//! may take part of it: `batch.rs`), hand each result over as it is made
//! (the consumer woken once for a few, never kept waiting on a long task),
//! spin or park when idle, leave the seat when told to.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::parallel::PoolParallel;
use super::run::{run_packed, run_task};
use super::state::{note_exit, supervisor_late, Lifecycle, Shared, State};
use super::PoolEvent;
use crate::budget::{MachineBudget, Share};
use crate::kernels::RunContext;
use crate::sync::{Arc, MutexGuard};
use crate::task::{Completion, Mode, Task, TaskError};

/// How much work (in nanoseconds) a worker takes from the queue at once.
/// Tiny tasks are taken in batches so that the queue lock is touched once
/// per batch instead of once per task; tasks that take longer than this are
/// taken one at a time. A batch's tasks wait where idle threads can take
/// them, should one of them prove long (`batch.rs`).
const BATCH_BUDGET_NS: f64 = 20_000.0;
/// Upper bound on tasks taken at once.
const MAX_BATCH: usize = 64;
/// While the queue still holds work, a worker puts finished tasks in the
/// completion queue without waking the JS thread for up to this long, so
/// that a steady stream of medium tasks (say 64 KiB hashes, ~50 µs each)
/// wakes it once per few dozen results instead of once per result: on a
/// machine with as many workers as cores every wake-up steals a core from
/// a worker. With an empty queue the results go out at once, so latency is
/// only added under backlog; and a result never waits longer than this for
/// its wake, whatever task its worker runs next: the supervisor wakes the
/// JS thread for it (`CompletionQueue::unwoken_for`).
pub(super) const HOLD_COMPLETIONS: Duration = Duration::from_millis(1);
const HOLD_COMPLETIONS_NS: f64 = HOLD_COMPLETIONS.as_nanos() as f64;
/// Upper bound on finished tasks a worker holds back.
const MAX_HELD: usize = 256;
/// How long a thread holding a share of the machine's budget polls an
/// empty queue before it gives the share back.
const SHARE_LINGER: Duration = Duration::from_micros(200);

pub(super) fn worker_main(shared: &Arc<Shared>, seat: usize) {
    // Before the first task: the event loop's thread should win every
    // contest for a core against a worker (see crate::priority).
    crate::priority::lower_current_thread(shared.config.nice_increment);
    if shared.config.budget.is_some() {
        // A share given over wakes the next holder; see `priority`.
        crate::priority::batch_current_thread();
    }
    let mut worker = Worker {
        shared,
        seat,
        held: 0,
        avg_task_ns: BATCH_BUDGET_NS,
        held_since: None,
        share: None,
        yield_due: false,
    };
    let mut st = shared.lock();
    st.starting -= 1;
    loop {
        if !st.queue.is_empty() {
            match &shared.config.budget {
                Some(budget) if worker.share.is_none() || worker.yield_due => {
                    st = worker.wait_for_share(budget, st);
                }
                _ => st = worker.take_and_run(st),
            }
        } else if shared.batches.len() > 0 && worker.batch_held_up() && worker.may_steal(&st) {
            st = worker.steal_and_run(st);
        } else if worker.held > 0 {
            st = worker.hand_over(st);
        } else if shared.parts.has_open() && worker.may_help() {
            drop(st);
            // Queued tasks come first: the helper leaves the job for them.
            let helped = shared.parts.help(&|| {
                shared.queued.load(Ordering::Acquire) > 0 || shared.cancel.load(Ordering::Relaxed)
            });
            st = shared.lock();
            if helped {
                // Parts are work: a thread that only helps is not idle.
                st.seats[seat].idle_since = None;
            }
            let nothing_else = st.queue.is_empty()
                && worker.held == 0
                && st.lifecycle == Lifecycle::Running
                && !st.seats[seat].retire;
            if !helped && nothing_else {
                // The job's last parts are claimed: idle, do not spin.
                st = if worker.share.is_some() { worker.linger(st) } else { worker.idle(st) };
            }
        } else if st.lifecycle != Lifecycle::Running || st.seats[seat].retire {
            break;
        } else if worker.share.is_some() {
            st = worker.linger(st);
        } else {
            st = worker.idle(st);
        }
    }
    worker.give_back_share();
    worker.leave_seat(st);
}

/// One worker thread's own state between two looks at the queue.
struct Worker<'a> {
    shared: &'a Shared,
    seat: usize,
    /// Finished tasks in the completion queue for which the consumer was
    /// not woken yet.
    held: usize,
    /// Moving average of one task's run time; starts high so the first tasks
    /// are taken one by one until we know they are cheap.
    avg_task_ns: f64,
    /// When the batch of the oldest held result was started (None: nothing held).
    held_since: Option<Instant>,
    /// The machine budget's share this thread holds (only under a budget).
    share: Option<Share>,
    /// The share has had its time slice while another process is short of
    /// its fair share: give it over before the next task.
    yield_due: bool,
}

impl Drop for Worker<'_> {
    /// A share is given back even if the thread unwinds.
    fn drop(&mut self) {
        self.give_back_share();
    }
}

impl<'a> Worker<'a> {
    /// Takes this thread's fair share of the queue (within the batch budget),
    /// runs it unlocked, and hands the results over unless they are worth
    /// holding back. Returns with the lock taken again.
    fn take_and_run(&mut self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let shared = self.shared;
        let queued = st.queue.len();
        let share = queued.div_ceil(st.threads.max(1));
        let budget = (BATCH_BUDGET_NS / self.avg_task_ns.max(1.0)) as usize;
        let take = share.min(budget).clamp(1, MAX_BATCH);
        let Some(first) = st.queue.pop_front() else { return st };
        st.last_take = Some(Instant::now());
        if take > 1 {
            shared.batches.fill(self.seat, st.queue.drain(..take - 1));
        }
        shared.queued.store(st.queue.len(), Ordering::Release);
        if queued >= shared.config.max_queue {
            drop(st);
            // Posts may be waiting for this room (queueFull: 'wait').
            shared.room_freed.store(true, Ordering::Release);
            shared.completions.wake();
            st = shared.lock();
        }
        self.run_from(first, st)
    }

    /// Takes part of a busy thread's batch and runs it. Returns with the
    /// lock taken again.
    fn steal_and_run(&mut self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let shared = self.shared;
        drop(st);
        let stolen = shared.batches.steal(self.seat);
        let st = shared.lock();
        match stolen {
            Some(first) => self.run_from(first, st),
            None => st,
        }
    }

    /// Whether another thread's batch is held up: its thread has run its
    /// current task for a spawn delay (batch.rs).
    fn batch_held_up(&self) -> bool {
        let delay = self.shared.config.policy.spawn_delay;
        self.shared.batches.held_up_since().is_some_and(|t| t.elapsed() >= delay)
    }

    /// Whether this thread may take part of another's batch: with a share
    /// of the machine's budget, if the pool has one (got now, or not at all).
    fn may_steal(&mut self, st: &State) -> bool {
        st.lifecycle != Lifecycle::Stopping && !self.shared.cancel.load(Ordering::Relaxed) && {
            match &self.shared.config.budget {
                None => true,
                Some(budget) => {
                    if self.share.is_none() && !self.yield_due {
                        self.share = budget.try_acquire();
                    }
                    self.share.is_some() && !self.yield_due
                }
            }
        }
    }

    /// Runs `first`, then this thread's batch, unlocked; records the run
    /// times; wakes the consumer for the results unless they are worth
    /// holding back. Returns with the lock taken again.
    fn run_from(&mut self, first: Task, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let shared = self.shared;
        st.busy += 1;
        st.seats[self.seat].idle_since = None;
        if shared.batches.len() > 0 {
            // Should a task of the batch prove long, the supervisor must
            // look at the batch within a spawn delay, and at the results
            // run before it within a hold: it may be asleep (a full pool).
            let within = shared.config.policy.spawn_delay.min(HOLD_COMPLETIONS);
            nudge_supervisor_within(shared, &mut st, within);
        }
        drop(st);
        let started = Instant::now();
        let (n, now) = self.run_batch(first, started);
        if let (Some(budget), Some(share)) = (&shared.config.budget, &self.share) {
            self.yield_due = budget.should_yield(share, now);
        }
        let per_task = now.duration_since(started).as_nanos() as f64 / n as f64;
        self.avg_task_ns = 0.75 * self.avg_task_ns + 0.25 * per_task;
        shared.record_run_time(per_task);
        let hold = self.hold_results(started, now);
        if !hold {
            self.wake_consumer();
        }
        let mut st = shared.lock();
        st.busy -= 1;
        if hold {
            // The results held wait for this thread's next wake, or the
            // supervisor's within a hold, should its next task prove long.
            nudge_supervisor_within(shared, &mut st, HOLD_COMPLETIONS);
        }
        st
    }

    /// Runs `first` and then this thread's batch, recording wait and run
    /// times, each result put in the completion queue as it is made, the
    /// consumer not woken for it yet (if a later task of the batch proves
    /// long, the supervisor wakes it). Returns the tasks run and when the
    /// last ended.
    fn run_batch(&mut self, first: Task, started: Instant) -> (usize, Instant) {
        let shared = self.shared;
        let metrics = &shared.metrics[self.seat];
        let mut task_start = started;
        let mut next = Some(first);
        let mut n = 0;
        let mut taken = 0;
        while let Some(mut task) = next {
            let waited = task_start.saturating_duration_since(task.enqueued_at);
            metrics.wait.record(waited);
            // A stream's task does not expire: losing it would end the stream.
            let expires = !matches!(task.mode, Mode::Stream(_));
            let (slot, outcome) =
                if expires && shared.config.max_queue_age.is_some_and(|max| waited > max) {
                    (task.slot, Err(TaskError::Expired))
                } else if let Mode::Packed(packed) = &task.mode {
                    run_packed(&task, packed, &shared.cancel, &shared.config)
                } else {
                    let deadline = task.timeout.map(|t| task_start + t);
                    let ctx = RunContext::for_task(
                        &shared.cancel,
                        task.cancel.as_deref().map(|f| &**f),
                        deadline,
                    );
                    // A one-shot task over its own input, or a stream's chunk,
                    // may split.
                    let parallel = PoolParallel(shared);
                    let ctx = if matches!(task.mode, Mode::Once | Mode::Stream(_)) {
                        ctx.with_parallel(&parallel)
                    } else {
                        ctx
                    };
                    (task.slot, run_task(&task, &ctx, &shared.config, &shared.memory))
                };
            // Its flag's share goes back with the result (see Completion).
            let cancel = task.cancel.take();
            drop(task);
            let task_end = Instant::now();
            metrics.run.record(task_end - task_start);
            task_start = task_end;
            n += 1;
            shared.completions.push_quiet(Completion { slot, outcome, cancel });
            self.held += 1;
            next = shared.batches.next(self.seat, task_end, &mut taken);
        }
        (n, task_start)
    }

    /// Wakes the consumer for the results held back.
    fn wake_consumer(&mut self) {
        self.shared.completions.wake();
        self.held = 0;
        self.held_since = None;
    }

    /// Hold the results back only while more work is queued (or batched),
    /// the next task is expected to be short, and the oldest held result is
    /// young.
    fn hold_results(&mut self, started: Instant, now: Instant) -> bool {
        let shared = self.shared;
        let oldest_held = *self.held_since.get_or_insert(started);
        shared.queued.load(Ordering::Acquire) > 0
            && self.held < MAX_HELD
            && self.avg_task_ns * 4.0 < HOLD_COMPLETIONS_NS
            && (now.duration_since(oldest_held).as_nanos() as f64) < HOLD_COMPLETIONS_NS
            && !shared.cancel.load(Ordering::Relaxed)
    }

    /// Work is queued but this thread holds no share of the machine's
    /// budget, or must give its share over: waits for one, unlocked, while
    /// the queue holds work and the pool is not aborted. Returns with the lock taken again, a share or
    /// not (the caller looks at the queue again either way).
    fn wait_for_share(
        &mut self,
        budget: &MachineBudget,
        st: MutexGuard<'a, State>,
    ) -> MutexGuard<'a, State> {
        let shared = self.shared;
        drop(st);
        // Results held back would wait with this thread.
        if self.held > 0 {
            self.wake_consumer();
        }
        shared.share_waiting.fetch_add(1, Ordering::Relaxed);
        let yielding = if std::mem::take(&mut self.yield_due) { self.share.take() } else { None };
        self.share = budget.acquire(Duration::MAX, yielding, || {
            (shared.queued.load(Ordering::Acquire) > 0 || shared.batches.len() > 0)
                && !shared.cancel.load(Ordering::Relaxed)
        });
        shared.share_waiting.fetch_sub(1, Ordering::Relaxed);
        shared.lock()
    }

    /// The queue is empty and this thread holds a share: polls for work a
    /// little longer than an idle thread would before it gives the share
    /// back (so a producer that refills the queue as results arrive does
    /// not make the share change hands at every refill), then idles.
    fn linger(&mut self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let shared = self.shared;
        drop(st);
        spin_until(shared, SHARE_LINGER);
        if shared.queued.load(Ordering::Acquire) == 0 {
            self.give_back_share();
        }
        shared.lock()
    }

    /// Whether this thread may run parts of another thread's task: always,
    /// but under a machine budget only with a share (taken if one is free
    /// now; a part never waits for one).
    fn may_help(&mut self) -> bool {
        match &self.shared.config.budget {
            None => true,
            Some(budget) => {
                if self.share.is_none() {
                    self.share = budget.try_acquire();
                }
                self.share.is_some()
            }
        }
    }

    /// Gives this thread's share of the machine's budget back, if it holds one.
    fn give_back_share(&mut self) {
        self.yield_due = false;
        if let (Some(budget), Some(share)) = (&self.shared.config.budget, self.share.take()) {
            budget.release(share);
        }
    }

    /// Nothing left to run: hands over what was held back, unlocked.
    fn hand_over(&mut self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        drop(st);
        self.wake_consumer();
        self.shared.lock()
    }

    /// Nothing to do: spins briefly (one idle core thread at a time), then
    /// parks on the seat's condvar until woken.
    fn idle(&mut self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let (shared, seat) = (self.shared, self.seat);
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
            if !st.queue.is_empty()
                || st.lifecycle != Lifecycle::Running
                || st.seats[seat].retire
                || shared.parts.has_open()
            {
                return st;
            }
        }
        st.seats[seat].parked = true;
        st = shared.seat_cvs[seat].wait(st).unwrap_or_else(|e| e.into_inner());
        let s = &mut st.seats[seat];
        s.parked = false;
        if std::mem::take(&mut s.wake_pending) {
            st.wakes_pending -= 1;
        }
        st
    }

    /// Leaves the seat: hands the join handle over, reports a retirement,
    /// and wakes the consumer if this was the pool's last thread.
    fn leave_seat(self, mut st: MutexGuard<'a, State>) {
        let shared = self.shared;
        let s = std::mem::take(&mut st.seats[self.seat]);
        if s.wake_pending {
            st.wakes_pending -= 1;
        }
        if let Some(h) = s.handle {
            st.finished.push(h);
        } else {
            // The spawner has not stored the handle yet; tell it we are gone.
            st.seats[self.seat].exited = true;
        }
        st.threads -= 1;
        let retired = s.retire && st.lifecycle == Lifecycle::Running;
        if retired {
            // Counted when it leaves: a thread retired by use finishes its
            // tasks first, and one that close() caught is no retirement.
            st.retired += 1;
        }
        let threads = st.threads;
        let last = note_exit(shared, &mut st);
        drop(st);
        if retired {
            shared.emit(PoolEvent::Retire {
                thread_id: s.thread_id,
                threads,
                reason: s.retire_reason,
            });
        }
        if last {
            shared.completions.wake();
        }
    }
}

/// Makes the supervisor look at the pool within `within` if it would not
/// on its own (asleep, or in a longer timed wait). Under the state lock.
fn nudge_supervisor_within(shared: &Shared, st: &mut State, within: Duration) {
    let late = st.supervisor_sleeping
        || (st.supervisor_wakes_at.is_some() && supervisor_late(st, Instant::now() + within));
    if late {
        st.supervisor_sleeping = false;
        st.supervisor_wakes_at = Some(Instant::now());
        shared.supervisor_cv.notify_one();
    }
}

pub(super) fn spin_for_work(shared: &Shared) {
    spin_until(shared, shared.config.spin);
}

/// Polls the queue for work for at most `limit`.
fn spin_until(shared: &Shared, limit: Duration) {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if shared.queued.load(Ordering::Acquire) > 0
                || shared.cancel.load(Ordering::Relaxed)
                || shared.parts.has_open()
            {
                return;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= limit {
            return;
        }
    }
}
