//! One membership of the machine's table: its file mapped, the slot joined
//! there, and what this process believes of the other slots' liveness. A
//! `MachineBudget` holds the current one and moves to a new one when the
//! file is no longer the one at its path (removed, replaced, truncated:
//! `Membership::stale`), so that the machine keeps one budget.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Instant;

use super::shm::Mapping;
use super::table::{Live, Member, Table, SLOTS};

/// How long a slot's liveness is believed without asking the kernel.
const LIVENESS_FOR_MS: u64 = 100;

pub(super) struct Membership {
    pub(super) mapping: Mapping,
    pub(super) me: Member,
    epoch: Instant,
    /// Per slot: when it was last found alive (ms since epoch; 0: not
    /// known to be).
    liveness: Vec<AtomicU64>,
}

impl Membership {
    /// Opens (creating if need be) `dir`'s table and joins it.
    pub(super) fn open(dir: &Path) -> std::io::Result<Membership> {
        let mapping = Mapping::open(dir)?;
        let me = mapping.table().join(mapping.slot());
        mapping.table().renew(me, machine_now_ms());
        Ok(Membership {
            mapping,
            me,
            epoch: Instant::now(),
            liveness: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    pub(super) fn table(&self) -> &Table {
        self.mapping.table()
    }

    /// Whether the table is no longer the machine's: its file was removed
    /// or replaced at its path, or truncated (this process's mapping then
    /// stands on private memory: `guard.rs`; or, made whole again by
    /// another process before this one touched it, it has lost this
    /// member's slot). Looks the path up: for the monitor thread only.
    pub(super) fn stale(&self) -> bool {
        self.mapping.stale() || !self.table().has_slot(self.me)
    }
}

/// Liveness for fairness: "alive" is believed for LIVENESS_FOR_MS, "dead"
/// never (a new process may join the slot at once).
impl Live for Membership {
    fn now_ms(&self) -> u64 {
        machine_now_ms()
    }

    fn alive(&self, slot: usize) -> bool {
        let now = (self.epoch.elapsed().as_millis() as u64).max(1);
        let alive_at = self.liveness[slot].load(SeqCst);
        if alive_at != 0 && now.saturating_sub(alive_at) < LIVENESS_FOR_MS {
            return true;
        }
        let alive = self.mapping.held_by_other(slot);
        self.liveness[slot].store(if alive { now } else { 0 }, SeqCst);
        alive
    }
}

/// Liveness for taking shares back: always asked of the kernel.
pub(super) struct Asked<'a>(pub(super) &'a Mapping);

impl Live for Asked<'_> {
    fn alive(&self, slot: usize) -> bool {
        self.0.held_by_other(slot)
    }
    fn now_ms(&self) -> u64 {
        machine_now_ms()
    }
}

/// The machine's monotonic clock in milliseconds: the same in every
/// process (of one time namespace), unlike an Instant's epoch.
pub(super) fn machine_now_ms() -> u64 {
    // SAFETY: a zeroed timespec is valid; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: CLOCK_MONOTONIC exists on Linux; `ts` is writable.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}
