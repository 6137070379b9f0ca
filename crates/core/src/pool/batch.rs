//! The tasks a worker took from the queue together and has not started:
//! its batch, kept where an idle thread can take the later half of it
//! (`steal`). Tiny tasks are taken in batches to touch the queue's lock
//! once per batch; but a task's run time is known only once it has run,
//! and a task that proves long must not hold the ones taken after it while
//! a thread is free.
//!
//! A batch is *held up* once its owner's current task has run a spawn
//! delay (`held_up_since`): the supervisor then wakes a parked thread, or
//! starts one, and that thread steals. A batch that moves (tiny tasks, one
//! after another) is left to its owner: taking half of it would cost more
//! than it saves. The scaling rule does not see batched tasks: it judged
//! them while they were queued, and a thread has them.
//!
//! Locks: a seat's batch is locked alone, or under the pool's state lock
//! (never the other way round), and never two seats' at once.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::sync::{AtomicUsize, Mutex, MutexGuard};
use crate::task::Task;

/// Most tasks an owner takes from its batch before it says so in `len`.
const TAKEN_UNSAID: usize = 16;

#[derive(Default)]
struct Batch {
    tasks: VecDeque<Task>,
    /// When the owner started the task it runs now (set at each take).
    running_since: Option<Instant>,
}

pub(super) struct Batches {
    seats: Box<[Mutex<Batch>]>,
    /// Tasks in all the batches, a mirror for lock-free looks: below the
    /// truth for the moment a stolen half moves between two seats, above
    /// it by the few tasks an owner took since it last said so
    /// ([`Batches::next`]; the count is shared by every worker, and tiny
    /// tasks must not all write it).
    len: AtomicUsize,
}

impl Batches {
    pub(super) fn new(seats: usize) -> Batches {
        Batches {
            seats: (0..seats).map(|_| Mutex::new(Batch::default())).collect(),
            len: AtomicUsize::new(0),
        }
    }

    /// About how many tasks wait in batches (see `len`).
    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    fn seat(&self, seat: usize) -> MutexGuard<'_, Batch> {
        self.seats[seat].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts `tasks` in `seat`'s (empty) batch, behind the task its owner
    /// starts now.
    pub(super) fn fill(&self, seat: usize, tasks: impl IntoIterator<Item = Task>) {
        let mut batch = self.seat(seat);
        let before = batch.tasks.len();
        batch.tasks.extend(tasks);
        batch.running_since = Some(Instant::now());
        self.len.fetch_add(batch.tasks.len() - before, Ordering::AcqRel);
    }

    /// The next task of `seat`'s own batch, which its owner starts `now`.
    /// `taken` counts the tasks the owner took and `len` still counts:
    /// they leave the count when the batch is empty or every few tasks.
    pub(super) fn next(&self, seat: usize, now: Instant, taken: &mut usize) -> Option<Task> {
        let (task, left) = {
            let mut batch = self.seat(seat);
            let task = batch.tasks.pop_front();
            batch.running_since = Some(now);
            (task, batch.tasks.len())
        };
        *taken += usize::from(task.is_some());
        if *taken > 0 && (left == 0 || *taken >= TAKEN_UNSAID) {
            self.len.fetch_sub(std::mem::take(taken), Ordering::AcqRel);
        }
        task
    }

    /// Takes the later half (at least one) of a held-up batch of another
    /// seat: returns the first to run now and puts the rest in `seat`'s
    /// own batch. None when no batch holds a task.
    pub(super) fn steal(&self, seat: usize) -> Option<Task> {
        let n = self.seats.len();
        for victim in (1..n).map(|i| (seat + i) % n) {
            let mut stolen = {
                let mut batch = self.seat(victim);
                if batch.tasks.is_empty() {
                    continue;
                }
                let keep = batch.tasks.len() / 2;
                let stolen = batch.tasks.split_off(keep);
                self.len.fetch_sub(stolen.len(), Ordering::AcqRel);
                stolen
            };
            let first = stolen.pop_front();
            if !stolen.is_empty() {
                self.fill(seat, stolen);
            }
            return first;
        }
        None
    }

    /// Since when the longest-held-up batch's owner has run its current
    /// task (None: no batch holds a task).
    pub(super) fn held_up_since(&self) -> Option<Instant> {
        if self.len() == 0 {
            return None;
        }
        self.each(|batch| batch.running_since.filter(|_| !batch.tasks.is_empty())).min()
    }

    /// Tasks waiting in batches, counted under their locks, and when the
    /// longest-waiting of them was queued (for the pool's stats).
    pub(super) fn waiting(&self) -> (usize, Option<Instant>) {
        if self.len() == 0 {
            return (0, None);
        }
        let n = self.each(|batch| Some(batch.tasks.len())).sum();
        (n, self.each(|batch| batch.tasks.front().map(|t| t.enqueued_at)).min())
    }

    fn each<'a, T: 'a>(
        &'a self,
        f: impl Fn(&Batch) -> Option<T> + 'a,
    ) -> impl Iterator<Item = T> + 'a {
        (0..self.seats.len()).filter_map(move |seat| f(&self.seat(seat)))
    }
}
