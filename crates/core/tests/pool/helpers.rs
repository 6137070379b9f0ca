//! What the pool's tests share: a consumer woken by the pool's waker, tasks,
//! and waits with a deadline.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tidepool_core::kernels;
use tidepool_core::{CancelFlag, Completion, Input, Pool, Task};

/// A consumer that blocks a test thread until the waker fires.
#[derive(Clone, Default)]
pub(crate) struct Signal(Arc<(Mutex<bool>, Condvar)>);

impl Signal {
    pub(crate) fn waker(&self) -> tidepool_core::Waker {
        let s = self.clone();
        Box::new(move || {
            *s.0 .0.lock().unwrap() = true;
            s.0 .1.notify_all();
        })
    }
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let mut fired = self.0 .0.lock().unwrap();
        let deadline = Instant::now() + timeout;
        while !*fired {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            fired = self.0 .1.wait_timeout(fired, left).unwrap().0;
        }
        *fired = false;
        true
    }
}

pub(crate) fn task(slot: u32, kernel: &str, data: Vec<u8>) -> Task {
    Task::new(slot, kernels::find(kernel).unwrap(), Input::Owned(data), Instant::now())
}

pub(crate) fn micros(us: u32) -> Vec<u8> {
    us.to_le_bytes().to_vec()
}

/// A task that holds its thread until `release` (its cancel flag) is set:
/// a minute's sleep (far longer than any test holds it), which then ends
/// `Cancelled` within a millisecond's slice.
pub(crate) fn held(slot: u32, release: &Arc<CancelFlag>) -> Task {
    let mut t = task(slot, "sleep", micros(60_000_000));
    t.cancel = Some(release.clone());
    t
}

pub(crate) fn release(flag: &std::sync::atomic::AtomicBool) {
    flag.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Drains until `n` completions arrived (or panics after 10 s).
pub(crate) fn collect(pool: &Pool, signal: &Signal, n: usize) -> Vec<Completion> {
    let mut all = Vec::new();
    let mut buf = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while all.len() < n {
        pool.take_completions(&mut buf);
        all.append(&mut buf);
        if all.len() < n {
            if Instant::now() >= deadline {
                let s = pool.stats(false);
                panic!(
                    "only {} of {n} completions arrived (threads {}, busy {}, queued {})",
                    all.len(),
                    s.threads,
                    s.busy_threads,
                    s.queued
                );
            }
            signal.wait(Duration::from_millis(100));
        }
    }
    all
}

pub(crate) fn wait_until_busy(pool: &Pool) {
    let t = Instant::now();
    while pool.stats(false).busy_threads == 0 {
        assert!(t.elapsed() < Duration::from_secs(5));
        std::thread::yield_now();
    }
}

/// Calls `done` until it returns true; panics, naming `what`, if that takes
/// more than 10 s (a hang guard: nothing is judged by how long it took).
pub(crate) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
