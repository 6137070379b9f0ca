//! The tasks a worker took from the queue together and has not started:
//! its batch, kept where an idle thread can take the later half of it
//! (`steal`). Tiny tasks are taken in batches to touch the queue's lock
//! once per batch; but a task's run time is known only once it has run,
//! and a task that proves long must not hold the ones taken after it while
//! a thread is free. The supervisor counts batched tasks as queued (their
//! age too), so a parked thread is woken, or one started, for them as for
//! the queue's.
//!
//! Locks: a seat's batch is locked alone, or under the pool's state lock
//! (never the other way round), and never two seats' at once.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::sync::{AtomicUsize, Mutex, MutexGuard};
use crate::task::Task;

pub(super) struct Batches {
    seats: Box<[Mutex<VecDeque<Task>>]>,
    /// Tasks in all the batches (a mirror for lock-free looks; below the
    /// truth for the moment a stolen half moves between two seats).
    len: AtomicUsize,
}

impl Batches {
    pub(super) fn new(seats: usize) -> Batches {
        Batches {
            seats: (0..seats).map(|_| Mutex::new(VecDeque::new())).collect(),
            len: AtomicUsize::new(0),
        }
    }

    /// Tasks waiting in batches, not started.
    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    fn seat(&self, seat: usize) -> MutexGuard<'_, VecDeque<Task>> {
        self.seats[seat].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `tasks` to `seat`'s batch, after what it holds.
    pub(super) fn fill(&self, seat: usize, tasks: impl IntoIterator<Item = Task>) {
        let mut batch = self.seat(seat);
        let before = batch.len();
        batch.extend(tasks);
        self.len.fetch_add(batch.len() - before, Ordering::AcqRel);
    }

    /// The next task of `seat`'s own batch.
    pub(super) fn next(&self, seat: usize) -> Option<Task> {
        let task = self.seat(seat).pop_front();
        if task.is_some() {
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
        task
    }

    /// Takes the later half (at least one) of another seat's batch, whose
    /// owner is running a task: returns the first to run now and puts the
    /// rest in `seat`'s own batch. None when no batch holds a task.
    pub(super) fn steal(&self, seat: usize) -> Option<Task> {
        let n = self.seats.len();
        for victim in (1..n).map(|i| (seat + i) % n) {
            let mut stolen = {
                let mut batch = self.seat(victim);
                if batch.is_empty() {
                    continue;
                }
                let keep = batch.len() / 2;
                let stolen = batch.split_off(keep);
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

    /// When the longest-waiting batched task was queued.
    pub(super) fn oldest(&self) -> Option<Instant> {
        if self.len() == 0 {
            return None;
        }
        (0..self.seats.len())
            .filter_map(|seat| self.seat(seat).front().map(|t| t.enqueued_at))
            .min()
    }
}
