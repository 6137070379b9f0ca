//! `maxWorkingBytes`: a bound on the working memory the pool's running
//! tasks hold at once (a memory-hard hash's: Argon2's blocks, scrypt's V;
//! `Kernel::working_bytes`). A thread about to run such a task claims its
//! bytes first; while they do not fit beside what running tasks hold, it
//! waits, first come first served, holding nothing (the task's memory is
//! allocated once the claim is granted), and stops waiting when the task
//! is cancelled or its deadline passes. A task that alone needs more than
//! the bound never runs: it fails at once. Tasks that claim nothing (every
//! other kernel) never wait here.

use std::collections::VecDeque;
use std::time::Duration;

use crate::kernels::{KernelError, RunContext};
use crate::sync::{Condvar, Mutex};

/// How often a waiting thread looks at its task's cancel flag and deadline.
const LOOK_EVERY: Duration = Duration::from_millis(5);

/// The bound, and what running tasks hold of it.
pub(super) struct MemoryGate {
    max: usize,
    state: Mutex<Held>,
    freed: Condvar,
}

#[derive(Default)]
struct Held {
    /// Bytes claimed by running tasks.
    bytes: usize,
    /// The tickets of the threads waiting, in the order they came.
    waiting: VecDeque<u64>,
    next_ticket: u64,
}

/// Bytes a running task holds: given back when dropped.
pub(super) struct Claim<'a> {
    gate: &'a MemoryGate,
    bytes: usize,
}

impl MemoryGate {
    /// A gate of `max` bytes (`usize::MAX`: no bound).
    pub(super) fn new(max: usize) -> MemoryGate {
        MemoryGate { max, state: Mutex::new(Held::default()), freed: Condvar::new() }
    }

    /// Whether the pool has a bound (without one no task claims, and its
    /// working bytes are not even asked for on every task's path).
    pub(super) fn bounded(&self) -> bool {
        self.max != usize::MAX
    }

    fn lock(&self) -> crate::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims `bytes` for a task about to run, waiting while they do not
    /// fit; `None` when the task claims nothing or there is no bound.
    pub(super) fn claim(
        &self,
        bytes: usize,
        ctx: &RunContext<'_>,
    ) -> Result<Option<Claim<'_>>, KernelError> {
        if bytes == 0 || self.max == usize::MAX {
            return Ok(None);
        }
        if bytes > self.max {
            return Err(KernelError::InvalidInput(format!(
                "the task needs {bytes} bytes of working memory, more than the pool's maxWorkingBytes ({})",
                self.max
            )));
        }
        let mut held = self.lock();
        if !held.waiting.is_empty() || held.bytes + bytes > self.max {
            let ticket = held.next_ticket;
            held.next_ticket += 1;
            held.waiting.push_back(ticket);
            loop {
                if let Err(e) = ctx.check() {
                    held.waiting.retain(|&t| t != ticket);
                    drop(held);
                    // The next in line may fit now that this one left.
                    self.freed.notify_all();
                    return Err(e);
                }
                if held.waiting.front() == Some(&ticket) && held.bytes + bytes <= self.max {
                    held.waiting.pop_front();
                    break;
                }
                held =
                    self.freed.wait_timeout(held, LOOK_EVERY).unwrap_or_else(|e| e.into_inner()).0;
            }
        }
        held.bytes += bytes;
        let more_may_fit = !held.waiting.is_empty();
        drop(held);
        if more_may_fit {
            self.freed.notify_all();
        }
        Ok(Some(Claim { gate: self, bytes }))
    }

    /// Bytes claimed now, and threads waiting to claim.
    pub(super) fn usage(&self) -> (usize, usize) {
        let held = self.lock();
        (held.bytes, held.waiting.len())
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut held = self.gate.lock();
        held.bytes -= self.bytes;
        let waiting = !held.waiting.is_empty();
        drop(held);
        if waiting {
            self.gate.freed.notify_all();
        }
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use super::*;

    #[test]
    fn no_bound_and_nothing_to_claim_never_wait() {
        let stop = AtomicBool::new(false);
        let ctx = RunContext::new(&stop);
        assert!(MemoryGate::new(usize::MAX).claim(1 << 40, &ctx).unwrap().is_none());
        assert!(MemoryGate::new(10).claim(0, &ctx).unwrap().is_none());
    }

    #[test]
    fn a_claim_past_the_bound_fails_at_once() {
        let stop = AtomicBool::new(false);
        let err = MemoryGate::new(10).claim(11, &RunContext::new(&stop)).err().unwrap();
        assert!(err.to_string().contains("maxWorkingBytes (10)"), "{err}");
    }

    #[test]
    fn claims_wait_in_order_until_the_bytes_fit() {
        let gate = Arc::new(MemoryGate::new(10));
        let stop = AtomicBool::new(false);
        let first = gate.claim(6, &RunContext::new(&stop)).unwrap();
        assert_eq!(gate.usage(), (6, 0));
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        // The first waiter needs 8 bytes: once it runs, the second (4) fits
        // only after it ends, so the order they record is the order granted.
        let waiters: Vec<_> = [(1, 8), (2, 4)]
            .into_iter()
            .map(|(id, bytes)| {
                let (mine, order) = (gate.clone(), order.clone());
                let handle = std::thread::spawn(move || {
                    let stop = AtomicBool::new(false);
                    let claim = mine.claim(bytes, &RunContext::new(&stop)).unwrap();
                    order.lock().unwrap().push(id);
                    drop(claim);
                });
                // The second waiter comes after the first is in line.
                while gate.usage().1 < id {
                    std::thread::yield_now();
                }
                handle
            })
            .collect();
        // 4 bytes would fit beside the 6 held, but the 8-byte claim came first.
        assert_eq!(gate.usage(), (6, 2));
        drop(first);
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![1, 2]);
        assert_eq!(gate.usage(), (0, 0));
    }

    #[test]
    fn a_cancelled_waiter_leaves_the_line() {
        let gate = Arc::new(MemoryGate::new(10));
        let held = AtomicBool::new(false);
        let first = gate.claim(10, &RunContext::new(&held)).unwrap();
        let cancel = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (gate, cancel) = (gate.clone(), cancel.clone());
            std::thread::spawn(move || gate.claim(5, &RunContext::new(&cancel)).err())
        };
        while gate.usage().1 == 0 {
            std::thread::yield_now();
        }
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(waiter.join().unwrap(), Some(KernelError::Cancelled));
        assert_eq!(gate.usage(), (10, 0));
        drop(first);
        // The line is empty again: the next claim goes straight in.
        let stop = AtomicBool::new(false);
        assert!(gate.claim(10, &RunContext::new(&stop)).unwrap().is_some());
    }
}
