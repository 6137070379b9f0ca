//! Parts of one task on idle threads: a running kernel that can split its
//! work (a large gzip, zstd or BLAKE3 job) posts a *job* of `n` parts on
//! the pool's board and works through the parts itself; threads of the pool
//! with nothing queued claim parts of it too. The kernel's thread returns
//! only once every part has run, so the job lives on its stack.
//!
//! Throughput first: a worker helps only when the queue is empty, so under
//! load a job runs on its own thread as it would without the board.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use crate::sync::{Condvar, Mutex, MutexGuard};

/// One job: a kernel's parts, on the stack of the thread running its task.
struct Job<'a> {
    part: &'a (dyn Fn(usize) + Sync),
    n: usize,
    /// The next part to claim (past `n`: all claimed).
    next: AtomicUsize,
    /// The first panic of a part, raised again by the job's own thread.
    panic: std::sync::Mutex<Option<Box<dyn Any + Send>>>,
    /// Every part is claimed: no longer counted in the board's `open`.
    exhausted: std::sync::atomic::AtomicBool,
}

impl Job<'_> {
    /// Claims and runs parts until none is left or `leave()` says so
    /// (checked before each claim); whoever claims the last part takes the
    /// job off `open`, so idle threads stop looking at it. Returns how many
    /// parts it ran.
    fn work(&self, open: &AtomicUsize, leave: &dyn Fn() -> bool) -> u64 {
        let mut ran = 0;
        loop {
            if leave() {
                return ran;
            }
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i + 1 >= self.n {
                self.exhaust(open);
            }
            if i >= self.n {
                return ran;
            }
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (self.part)(i))) {
                let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(payload);
            }
            ran += 1;
        }
    }

    fn exhaust(&self, open: &AtomicUsize) {
        if !self.exhausted.swap(true, Ordering::AcqRel) {
            open.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn unclaimed(&self) -> usize {
        self.n.saturating_sub(self.next.load(Ordering::Acquire))
    }
}

/// A job's address, as the board holds it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct JobRef(*const Job<'static>);

// SAFETY: a JobRef is only dereferenced by a helper counted in its entry's
// `inside`, and the job's own thread takes the entry off the board and
// waits for `inside` to reach 0 before the job leaves its stack (run()).
// Job itself is Sync (atomics, a Mutex, and a `dyn Fn + Sync`).
unsafe impl Send for JobRef {}

struct Entry {
    job: JobRef,
    posted: Instant,
    /// Helpers working on it now.
    inside: usize,
    /// Its own thread is done claiming: no helper may join.
    closed: bool,
}

/// The board of a pool's jobs.
pub(super) struct Board {
    entries: Mutex<Vec<Entry>>,
    /// Signalled when a helper leaves a job.
    left: Condvar,
    /// Jobs on the board with parts not yet claimed (a hint read without
    /// the lock: idle threads look at the board only while it is above 0).
    open: AtomicUsize,
    /// Parts run by helpers (threads other than their job's own), for
    /// `stats()`.
    helped: AtomicU64,
}

impl Board {
    pub(super) fn new() -> Board {
        Board {
            entries: Mutex::new(Vec::new()),
            left: Condvar::new(),
            open: AtomicUsize::new(0),
            helped: AtomicU64::new(0),
        }
    }

    /// Parts run by helpers so far. Counted before a helper leaves its
    /// job, so once a task's completion is seen, its parts are counted.
    pub(super) fn helped(&self) -> u64 {
        self.helped.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a job may have parts to claim.
    pub(super) fn has_open(&self) -> bool {
        self.open.load(Ordering::Acquire) > 0
    }

    /// Parts not yet claimed, and when the oldest job with some was posted
    /// (what the supervisor counts as queued work).
    pub(super) fn backlog(&self) -> (usize, Option<Instant>) {
        let entries = self.lock();
        let mut parts = 0;
        let mut oldest: Option<Instant> = None;
        for e in entries.iter().filter(|e| !e.closed) {
            // SAFETY: an entry not closed is a job whose thread is still in
            // run(), before it waits for helpers: the job is alive.
            let left = unsafe { &*e.job.0 }.unclaimed();
            if left > 0 {
                parts += left;
                oldest = Some(oldest.map_or(e.posted, |o| o.min(e.posted)));
            }
        }
        (parts, oldest)
    }

    /// Runs `part(i)` for `i` in `0..n` on this thread and on helpers;
    /// `wake(k)` asks up to `k` idle threads to help.
    pub(super) fn run(&self, n: usize, part: &(dyn Fn(usize) + Sync), wake: impl FnOnce(usize)) {
        let job = Job {
            part,
            n,
            next: AtomicUsize::new(0),
            panic: std::sync::Mutex::new(None),
            exhausted: std::sync::atomic::AtomicBool::new(false),
        };
        let job_ref = JobRef((&job as *const Job<'_>).cast::<Job<'static>>());
        self.lock().push(Entry { job: job_ref, posted: Instant::now(), inside: 0, closed: false });
        self.open.fetch_add(1, Ordering::AcqRel);
        if n > 1 {
            wake(n - 1);
        }
        let _ = job.work(&self.open, &|| false);
        let mut entries = self.lock();
        let at = entries.iter().position(|e| e.job == job_ref).expect("a job stays on the board");
        entries[at].closed = true;
        job.exhaust(&self.open);
        while entries.iter().find(|e| e.job == job_ref).is_some_and(|e| e.inside > 0) {
            entries = self.left.wait(entries).unwrap_or_else(|e| e.into_inner());
        }
        entries.retain(|e| e.job != job_ref);
        drop(entries);
        if let Some(payload) = job.panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
            resume_unwind(payload);
        }
    }

    /// Works on the first job with parts left, if any, until it has none
    /// or `leave()` says so (tasks were queued: they come first); false if
    /// there was none.
    pub(super) fn help(&self, leave: &dyn Fn() -> bool) -> bool {
        let mut entries = self.lock();
        // SAFETY: as in backlog(): entries not closed are alive jobs.
        let Some(entry) =
            entries.iter_mut().find(|e| !e.closed && unsafe { &*e.job.0 }.unclaimed() > 0)
        else {
            return false;
        };
        entry.inside += 1;
        let job_ref = entry.job;
        drop(entries);
        // Leaves the job even if this thread unwinds: its thread waits for
        // `inside` to fall to 0.
        let _inside = Inside { board: self, job: job_ref };
        // SAFETY: counted in `inside`, so its thread waits for us before
        // the job leaves its stack (see JobRef).
        let ran = unsafe { &*job_ref.0 }.work(&self.open, leave);
        // Before `_inside` lets the job's thread go on.
        self.helped.fetch_add(ran, Ordering::Relaxed);
        true
    }
}

/// A helper's place in a job: given up when dropped.
struct Inside<'a> {
    board: &'a Board,
    job: JobRef,
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        let mut entries = self.board.lock();
        if let Some(e) = entries.iter_mut().find(|e| e.job == self.job) {
            e.inside -= 1;
        }
        drop(entries);
        self.board.left.notify_all();
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once_with_helpers_or_without() {
        let board = Board::new();
        let sums: Vec<AtomicU64> = (0..100).map(|_| AtomicU64::new(0)).collect();
        let part = |i: usize| {
            sums[i].fetch_add(1, Ordering::Relaxed);
        };
        board.run(100, &part, |_| {});
        assert!(sums.iter().all(|s| s.load(Ordering::Relaxed) == 1));
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    while !stop.load(Ordering::Acquire) {
                        board.help(&|| false);
                        std::thread::yield_now();
                    }
                });
            }
            for _ in 0..if cfg!(miri) { 3 } else { 200 } {
                board.run(100, &part, |_| {});
            }
            stop.store(true, Ordering::Release);
        });
        let runs = if cfg!(miri) { 4 } else { 201 };
        assert!(sums.iter().all(|s| s.load(Ordering::Relaxed) == runs));
        assert!(!board.has_open());
        assert_eq!(board.backlog().0, 0);
    }

    #[test]
    fn a_helper_told_to_leave_claims_nothing_more() {
        let board = Board::new();
        let owner = std::thread::current().id();
        let elsewhere = AtomicUsize::new(0);
        let asked = AtomicUsize::new(0);
        let done = std::sync::atomic::AtomicBool::new(false);
        let part = |_: usize| {
            if std::thread::current().id() != owner {
                elsewhere.fetch_add(1, Ordering::Relaxed);
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        };
        std::thread::scope(|s| {
            s.spawn(|| {
                // Tasks are queued, say: it leaves before each claim.
                while !done.load(Ordering::Acquire) {
                    board.help(&|| {
                        asked.fetch_add(1, Ordering::Relaxed);
                        true
                    });
                    std::thread::yield_now();
                }
            });
            board.run(50, &part, |_| {});
            done.store(true, Ordering::Release);
        });
        assert_eq!(elsewhere.load(Ordering::Relaxed), 0, "no part ran on the helper");
        assert_eq!(board.helped(), 0, "and none was counted as helped");
        assert!(board.lock().is_empty());
    }

    #[test]
    fn a_panicking_part_is_raised_on_the_jobs_thread_after_the_rest() {
        let board = Board::new();
        let ran = AtomicUsize::new(0);
        let part = |i: usize| {
            ran.fetch_add(1, Ordering::Relaxed);
            assert!(i != 3, "part three");
        };
        let caught = catch_unwind(AssertUnwindSafe(|| board.run(8, &part, |_| {})));
        assert!(caught.is_err());
        assert_eq!(ran.load(Ordering::Relaxed), 8);
        assert!(board.lock().is_empty());
    }
}
