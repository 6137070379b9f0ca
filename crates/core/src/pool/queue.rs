//! The queue from the owner's side: submitting tasks (and waking whoever
//! must take them), removing the tasks of aborted posts, dropping the
//! oldest for the `drop-oldest` policy.

use std::sync::atomic::Ordering;

use super::state::{wake_for_queued, Lifecycle};
use super::Pool;
use crate::task::Task;

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

impl Pool {
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
        let mut wake = None;
        let nudge =
            wake_for_queued(&mut st, &shared.config.policy, now, 1, |seat| wake = Some(seat));
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
        let mut wake = Vec::new();
        let nudge = wake_for_queued(&mut st, &shared.config.policy, now, usize::MAX, |seat| {
            wake.push(seat)
        });
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
    /// tasks of one `postMany()` batch share one, the posts of one
    /// AbortSignal another) in one pass under one lock;
    /// returns their slots. Tasks already taken by a thread are left alone:
    /// raising the flag is what stops them.
    pub fn remove_queued_with(&self, flag: &std::sync::Arc<crate::task::CancelFlag>) -> Vec<u32> {
        self.remove_queued_with_any(std::slice::from_ref(flag))
    }

    /// [`remove_queued_with`](Self::remove_queued_with) for many flags at
    /// once (the batches of one AbortSignal that fired): still one pass over
    /// the queue under one lock, where a call per flag would pass over it
    /// once per batch. Returns the removed tasks' slots, in queue order.
    pub fn remove_queued_with_any(
        &self,
        flags: &[std::sync::Arc<crate::task::CancelFlag>],
    ) -> Vec<u32> {
        // Many flags: a set of their addresses, so that each queued task
        // costs one look-up; a few: compared in turn.
        const SET_FROM: usize = 8;
        let set: std::collections::HashSet<*const crate::task::CancelFlag> =
            if flags.len() >= SET_FROM {
                flags.iter().map(std::sync::Arc::as_ptr).collect()
            } else {
                Default::default()
            };
        let carries_one = |f: &std::sync::Arc<crate::task::CancelFlag>| {
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

    /// True once since the last call if a worker took tasks from a full
    /// queue. Call after [`take_completions`](Self::take_completions), which lowered the wake flag.
    pub fn take_room_freed(&self) -> bool {
        self.shared.room_freed.load(Ordering::Acquire)
            && self.shared.room_freed.swap(false, Ordering::AcqRel)
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
}
