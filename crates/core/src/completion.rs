//! Batched delivery of finished tasks to the JS thread.
//!
//! Workers push [`Completion`]s into one shared channel. The first push after the
//! JS thread last took them raises the `scheduled` flag and calls the waker (in
//! the binding: one `napi_call_threadsafe_function`); later pushes see the flag
//! and do nothing more. The JS thread lowers the flag *before* it takes from the
//! channel, so a push that lands after the take always wakes it again: no
//! completion can be stranded, and a burst of N completions costs one wake-up.
//!
//! A worker may also hand a result over quietly ([`CompletionQueue::push_quiet`]):
//! it is in the channel, where any take finds it, but no wake is asked for
//! yet (the worker wakes the consumer once for the few it holds back). The
//! queue remembers since when a quiet result has waited for a wake, so the
//! pool's supervisor can wake the consumer for it
//! ([`CompletionQueue::unwoken_for`]) if the worker that pushed it is held
//! up by a long task: no result waits on another task's run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::sync::AtomicBool;

use crate::task::Completion;

/// Something that makes the consumer run [`CompletionQueue::take_all`] soon.
/// Called from worker threads; must not block.
pub type Waker = Box<dyn Fn() + Send + Sync>;

/// Thread-safe, wake-once-per-batch queue of finished tasks.
pub struct CompletionQueue {
    /// Producers' end: lock-free, so workers never wait for each other or
    /// for the JS thread when they hand results over.
    tx: Sender<Completion>,
    /// Consumer's end, read by the JS thread only.
    rx: Receiver<Completion>,
    /// True while a take is already due; false once the consumer started one.
    scheduled: AtomicBool,
    /// Asks the JS thread to take the completions.
    waker: Waker,
    /// Nanoseconds from `epoch` to the oldest quiet push that no wake has
    /// covered yet, plus one; 0 for none. (A plain std atomic: a stale
    /// value costs at most one wake too many.)
    unwoken_since: AtomicU64,
    epoch: Instant,
}

impl CompletionQueue {
    /// An empty queue that calls `waker` when a batch starts.
    pub fn new(waker: Waker) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        CompletionQueue {
            tx,
            rx,
            scheduled: AtomicBool::new(false),
            waker,
            unwoken_since: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    /// Adds a finished task without waking the consumer: a take finds it,
    /// and a later [`wake`](Self::wake) (the worker's, or the supervisor's
    /// once [`unwoken_for`](Self::unwoken_for) is long) asks for one.
    pub fn push_quiet(&self, completion: Completion) {
        let _ = self.tx.send(completion);
        // A plain load first: while an older quiet result waits, the clock
        // is not read and the shared line not written.
        if self.unwoken_since.load(Ordering::Relaxed) == 0 {
            let now = self.epoch.elapsed().as_nanos() as u64 + 1;
            let _ =
                self.unwoken_since.compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// How long the oldest result pushed quietly has waited for a wake
    /// (None: every result pushed is covered by a wake).
    pub fn unwoken_for(&self) -> Option<Duration> {
        match self.unwoken_since.load(Ordering::Relaxed) {
            0 => None,
            since => {
                let now = self.epoch.elapsed().as_nanos() as u64 + 1;
                Some(Duration::from_nanos(now.saturating_sub(since)))
            }
        }
    }

    /// Adds a finished task; wakes the consumer if no take is due yet.
    pub fn push(&self, completion: Completion) {
        // Cannot fail: `self` owns the receiver, so it outlives the sender.
        let _ = self.tx.send(completion);
        self.wake();
    }

    /// Wakes the consumer unless a take is already due (also used for events).
    pub fn wake(&self) {
        // The take this wake makes due (or one already due) takes every
        // result pushed so far, quiet ones too.
        if self.unwoken_since.load(Ordering::Relaxed) != 0 {
            self.unwoken_since.store(0, Ordering::Relaxed);
        }
        // The plain load keeps the common "already scheduled" case free of a
        // read-modify-write on a contended cache line.
        if !self.scheduled.load(Ordering::Acquire) && !self.scheduled.swap(true, Ordering::AcqRel) {
            (self.waker)();
        }
    }

    /// Moves every ready completion into `out`.
    /// Call from the consumer when woken.
    pub fn take_all(&self, out: &mut Vec<Completion>) {
        self.begin_take();
        self.take(out);
    }

    /// First half of [`take_all`](Self::take_all): lowers the flag, so anything
    /// pushed (or any `wake`) from here on schedules another take. State the
    /// consumer reads after this call and before [`take`](Self::take) is
    /// therefore never missed.
    pub fn begin_take(&self) {
        self.scheduled.store(false, Ordering::SeqCst);
    }

    /// Second half of [`take_all`](Self::take_all): takes what is ready.
    pub fn take(&self, out: &mut Vec<Completion>) {
        out.extend(self.rx.try_iter());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Output;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn one_wake_per_batch() {
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        let q = CompletionQueue::new(Box::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }));
        for slot in 0..10 {
            q.push(Completion::new(slot, Ok(Output::EMPTY)));
        }
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        let mut out = Vec::new();
        q.take_all(&mut out);
        assert_eq!(out.len(), 10);
        q.push(Completion::new(10, Ok(Output::EMPTY)));
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_quiet_push_waits_for_a_wake_and_says_since_when() {
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        let q = CompletionQueue::new(Box::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }));
        assert_eq!(q.unwoken_for(), None);
        q.push_quiet(Completion::new(0, Ok(Output::EMPTY)));
        q.push_quiet(Completion::new(1, Ok(Output::EMPTY)));
        assert_eq!(wakes.load(Ordering::SeqCst), 0);
        let first = q.unwoken_for().expect("a quiet result waits");
        std::thread::sleep(Duration::from_millis(2));
        assert!(q.unwoken_for().unwrap() >= first + Duration::from_millis(2), "the oldest's age");
        q.wake();
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        assert_eq!(q.unwoken_for(), None);
        let mut out = Vec::new();
        q.take_all(&mut out);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn nothing_is_stranded_under_concurrency() {
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        let q = Arc::new(CompletionQueue::new(Box::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        })));
        // Miri interprets every step: fewer pushes there, same interleavings.
        let per_thread: u32 = if cfg!(miri) { 30 } else { 10_000 };
        let producers: Vec<_> = (0..4)
            .map(|t| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 0..per_thread {
                        q.push(Completion::new(t * per_thread + i, Ok(Output::EMPTY)));
                    }
                })
            })
            .collect();
        let mut seen = 0;
        let mut buf = Vec::new();
        while producers.iter().any(|p| !p.is_finished()) {
            q.take_all(&mut buf);
            seen += buf.len();
            buf.clear();
            std::thread::yield_now();
        }
        q.take_all(&mut buf);
        seen += buf.len();
        assert_eq!(seen, 4 * per_thread as usize);
        // After the final take the flag is down, so the next push wakes.
        let before = wakes.load(Ordering::SeqCst);
        q.push(Completion::new(0, Ok(Output::EMPTY)));
        assert_eq!(wakes.load(Ordering::SeqCst), before + 1);
    }
}
