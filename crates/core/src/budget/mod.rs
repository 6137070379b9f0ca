//! One budget of running threads for every process of a machine (or
//! container) that asks for it (`budget: 'machine'`): a worker runs tasks
//! only while it holds a *share*, and there are as many shares as CPUs this
//! process may use.
//!
//! * `table.rs`: the shared table and its rules (take, give back, yield,
//!   reclaim from the dead), pure atomics, tested with a fake liveness.
//! * `shm.rs`: the table in `/dev/shm`, liveness locks, the futex (Linux).
//! * `membership.rs`: one joining of the table, moved on from when its file
//!   is removed, replaced or truncated; `guard.rs`: SIGBUS on a truncated
//!   table's pages made a member's own memory, not its death.
//! * The capacity: `crate::cpus`, the CPUs this process may use, as the
//!   pool's default `maxThreads` counts them.
//! * `README.md`: the protocol, and how it fails safe.

#[cfg(target_os = "linux")]
mod guard;
#[cfg(target_os = "linux")]
mod membership;
#[cfg(target_os = "linux")]
mod shm;
mod table;

pub use crate::cpus::{cgroup_path, quota_cpus};
pub use table::{fair_shares, Census, SLOTS, TOKENS};

#[cfg(target_os = "linux")]
pub use linux::{MachineBudget, Share};

#[cfg(not(target_os = "linux"))]
pub use elsewhere::{MachineBudget, Share};

/// Numbers for `stats()` and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BudgetStats {
    /// Shares the budget has now (CPUs this process may use).
    pub capacity: u32,
    /// Shares this process's threads hold.
    pub held: u32,
    /// This process's threads waiting for a share.
    pub waiting: u32,
    /// Times one of this process's threads had to wait for a share.
    pub waits: u64,
    /// Seconds this process's threads waited for shares, all together.
    pub wait_seconds: f64,
    /// Processes wanting or holding shares, and the shares they hold.
    pub machine: Census,
}

/// The directory of the table when `TIDEPOOL_BUDGET_DIR` does not say.
pub const DEFAULT_DIR: &str = "/dev/shm";

#[cfg(target_os = "linux")]
mod linux {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::SeqCst};
    use std::sync::{Arc, Mutex, OnceLock, RwLock};
    use std::time::{Duration, Instant};

    use super::membership::{machine_now_ms, Asked, Membership};
    use super::shm;
    use super::BudgetStats;
    use crate::cpus::Cpus;

    /// How often each process's monitor thread looks for the dead while
    /// threads wait for shares: about how late a dead process's shares come
    /// back.
    const RECLAIM_EVERY: Duration = Duration::from_millis(100);
    /// How often it looks while no thread waits.
    const RECLAIM_IDLE: Duration = Duration::from_millis(500);
    /// How long a waiting thread sleeps unless woken, to look at its pool's
    /// queue again. Rarely: a worker woken runs at the workers' lower
    /// priority and is one more thread competing for the CPUs being shared
    /// out until it gets one (the monitor thread, at the process's own
    /// priority, runs at once and briefly).
    const WAIT_SLICE: Duration = Duration::from_millis(1000);
    /// How often the CPUs this process may use are read again.
    const CAPACITY_FOR_MS: u64 = 1000;
    /// How long a thread holding more than its fair share keeps it before
    /// giving it to a process that is short: a time slice, so shares move
    /// between processes tens of times a second, not at every task.
    pub const SLICE: Duration = Duration::from_millis(100);

    /// This process's membership of the machine's budget.
    pub struct MachineBudget {
        /// The table joined now; another once its file is no longer the
        /// machine's (the monitor thread's `rejoin`).
        current: RwLock<Arc<Membership>>,
        /// Where the table's file is.
        dir: PathBuf,
        epoch: Instant,
        capacity: AtomicUsize,
        /// Read again only by the monitor thread: a thread holding a share
        /// must never wait on the file system.
        cpus: Cpus,
        /// When the CPUs were last read (ms since epoch); None once a
        /// caller has fixed the capacity. Both writers of `capacity` hold it.
        cpus_read_ms: Mutex<Option<u64>>,
        /// This process's threads holding a share, and waiting for one:
        /// published as the slot's `held` and `want`, under `publishing`
        /// so that two threads' updates land in order.
        held: AtomicU32,
        waiting: AtomicU32,
        publishing: Mutex<()>,
        waits: AtomicU64,
        wait_ns: AtomicU64,
    }

    /// A share held by one worker thread; give it back with
    /// [`MachineBudget::release`].
    #[derive(Debug)]
    pub struct Share {
        token: usize,
        since: Instant,
        /// The table it was taken in (given back there, if the process
        /// has moved to another meanwhile).
        of: Arc<Membership>,
    }

    impl std::fmt::Debug for Membership {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Membership").field("slot", &self.me.slot).finish()
        }
    }

    impl Share {
        /// Whether it has been held for a whole time slice.
        pub fn slice_spent(&self, now: Instant) -> bool {
            now.duration_since(self.since) >= SLICE
        }
    }

    impl std::fmt::Debug for MachineBudget {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let now = self.now();
            f.debug_struct("MachineBudget")
                .field("path", &now.mapping.path())
                .field("slot", &now.me.slot)
                .finish()
        }
    }

    impl MachineBudget {
        /// This process's membership, opened at the first ask (in
        /// `TIDEPOOL_BUDGET_DIR`, else /dev/shm) and kept for the life of
        /// the process; or why it cannot be had (asked once).
        pub fn of_process() -> Result<Arc<MachineBudget>, String> {
            static ONE: OnceLock<Result<Arc<MachineBudget>, String>> = OnceLock::new();
            ONE.get_or_init(|| {
                // An empty value is no value, as for PATH-like variables.
                let dir = std::env::var_os("TIDEPOOL_BUDGET_DIR")
                    .filter(|dir| !dir.is_empty())
                    .unwrap_or_else(|| super::DEFAULT_DIR.into());
                let budget =
                    Arc::new(MachineBudget::open(Path::new(&dir)).map_err(|e| e.to_string())?);
                MachineBudget::start_monitor(&budget).map_err(|e| e.to_string())?;
                Ok(budget)
            })
            .clone()
        }

        /// A membership of the table in `dir`, a new member each time (a
        /// test may stand for several processes with several).
        pub fn open(dir: &Path) -> std::io::Result<MachineBudget> {
            let membership = Membership::open(dir)?;
            let cpus = Cpus::open();
            let budget = MachineBudget {
                current: RwLock::new(Arc::new(membership)),
                dir: dir.to_owned(),
                epoch: Instant::now(),
                capacity: AtomicUsize::new(cpus.allowed()),
                cpus,
                cpus_read_ms: Mutex::new(Some(0)),
                held: AtomicU32::new(0),
                waiting: AtomicU32::new(0),
                publishing: Mutex::new(()),
                waits: AtomicU64::new(0),
                wait_ns: AtomicU64::new(0),
            };
            // What an earlier member of this slot left behind.
            budget.reclaim();
            Ok(budget)
        }

        /// The table joined now.
        pub(super) fn now(&self) -> Arc<Membership> {
            self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
        }

        /// Joins the machine's table anew if this one's file is no longer
        /// it (removed, replaced, truncated): one budget per machine again.
        /// Shares held in the old table are given back there; the threads
        /// waiting on it are woken to wait on the new one. Returns whether
        /// it moved. The monitor thread's job (it looks the path up).
        pub fn rejoin(&self) -> bool {
            let old = self.now();
            if !old.stale() {
                return false;
            }
            let Ok(new) = Membership::open(&self.dir) else { return false };
            *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(new);
            self.publish();
            self.reclaim();
            shm::wake_all(&old.table().header().seq);
            true
        }

        /// With a capacity fixed by the caller (tests and benchmarks that
        /// stand for a machine with fewer CPUs).
        pub fn with_capacity(self, capacity: usize) -> Self {
            self.fix_capacity(capacity);
            self
        }

        /// Fixes the capacity from now on, instead of the CPUs read every
        /// second (a test hook: see `PoolConfig::budget`).
        pub fn fix_capacity(&self, capacity: usize) {
            let mut read_ms = self.cpus_read_ms.lock().unwrap_or_else(|e| e.into_inner());
            *read_ms = None;
            self.capacity.store(capacity.max(1), SeqCst);
        }

        fn now_ms(&self) -> u64 {
            machine_now_ms()
        }

        fn millis(&self) -> u64 {
            self.epoch.elapsed().as_millis() as u64
        }

        /// The shares the budget has now.
        pub fn capacity(&self) -> usize {
            self.capacity.load(SeqCst)
        }

        /// Reads the CPUs this process may use again, once a second (the
        /// monitor thread's job), unless a caller fixed them.
        fn read_cpus(&self) {
            let now = self.millis();
            let lock = || self.cpus_read_ms.lock().unwrap_or_else(|e| e.into_inner());
            match *lock() {
                Some(read) if now.saturating_sub(read) >= CAPACITY_FOR_MS => {}
                _ => return,
            }
            // Read unlocked: fixing the capacity never waits on the files.
            let allowed = self.cpus.allowed();
            let mut read_ms = lock();
            // A capacity fixed meanwhile stays fixed.
            if read_ms.is_some() {
                *read_ms = Some(now);
                self.capacity.store(allowed, SeqCst);
            }
        }

        fn publish(&self) {
            let _order = self.publishing.lock().unwrap_or_else(|e| e.into_inner());
            let held = self.held.load(SeqCst);
            let want = held + self.waiting.load(SeqCst);
            let clamp = |n: u32| n.min(u32::from(u16::MAX)) as u16;
            let now = self.now();
            now.table().publish(now.me, clamp(want), clamp(held), self.now_ms());
        }

        /// Frees the shares of dead processes and wakes the waiting threads
        /// if there were any.
        fn reclaim(&self) {
            let now = self.now();
            let table = now.table();
            if table.reclaim(now.me, &Asked(&now.mapping)) > 0 {
                shm::wake_all(&table.header().seq);
            } else if table.header().waiting.load(SeqCst) > 0 && table.any_free(self.capacity()) {
                // A wake lost to a process that died with it, or refused
                // and not passed on: threads wait while a share is free.
                shm::wake_one(&table.header().seq);
            }
        }

        /// Starts the thread that looks for dead processes (and reads the
        /// CPUs again) while `budget` lives. It runs at the priority of the
        /// thread that starts it, for microseconds at a time.
        pub fn start_monitor(budget: &Arc<MachineBudget>) -> std::io::Result<()> {
            let weak = Arc::downgrade(budget);
            std::thread::Builder::new()
                .name("tidepool-budget".into())
                .stack_size(64 * 1024)
                .spawn(move || loop {
                    let Some(budget) = weak.upgrade() else { return };
                    // A process whose monitor stops (stopped, frozen) stops
                    // saying its threads wait: others stop yielding to it.
                    let now = budget.now();
                    // While it runs, its shares stay its own (a stopped
                    // process renews nothing and loses them: LEASE_MS).
                    now.table().renew(now.me, budget.now_ms());
                    if budget.waiting.load(SeqCst) > 0 {
                        now.table().still_wanting(now.me, budget.now_ms());
                    }
                    drop(now);
                    budget.rejoin();
                    budget.reclaim();
                    budget.read_cpus();
                    let waiting = budget.now().table().header().waiting.load(SeqCst) > 0;
                    drop(budget);
                    std::thread::sleep(if waiting { RECLAIM_EVERY } else { RECLAIM_IDLE });
                })
                .map(drop)
        }

        fn try_take(&self) -> Option<Share> {
            let now = self.now();
            let token = now.table().try_acquire(now.me, self.capacity(), &*now)?;
            self.held.fetch_add(1, SeqCst);
            self.publish();
            Some(Share { token, since: Instant::now(), of: now })
        }

        /// A share for the calling thread if one may be had at once.
        pub fn try_acquire(&self) -> Option<Share> {
            self.try_take()
        }

        /// A share for the calling thread: at once if the fairness rule
        /// allows, else after waiting (woken when shares are given back or
        /// taken from the dead) while `keep_waiting` says so, for at most
        /// `patience`.
        ///
        /// `yielding`: the share the thread gives to a process short of
        /// its fair share. It is given back only once the thread counts as
        /// waiting, right before it sleeps, and the thread waits for one
        /// hand-over before it asks again: the thread woken for it should
        /// not have to compete for a CPU with the one that woke it.
        pub fn acquire(
            &self,
            patience: Duration,
            yielding: Option<Share>,
            keep_waiting: impl Fn() -> bool,
        ) -> Option<Share> {
            if yielding.is_none() {
                if let Some(share) = self.try_take() {
                    return Some(share);
                }
            }
            // The table waited on; moved with the process if it rejoins.
            let mut now = self.now();
            let started = Instant::now();
            self.waiting.fetch_add(1, SeqCst);
            now.table().header().waiting.fetch_add(1, SeqCst);
            let skip_try = yielding.is_some();
            match yielding {
                Some(share) => self.release(share),
                None => self.publish(),
            }
            self.waits.fetch_add(1, SeqCst);
            let mut seen = now.table().header().seq.load(SeqCst);
            let mut share = None;
            let mut skip_try = skip_try;
            let mut woken = false;
            loop {
                let latest = self.now();
                if !Arc::ptr_eq(&latest, &now) {
                    // The process joined another table: wait there.
                    now.table().header().waiting.fetch_sub(1, SeqCst);
                    latest.table().header().waiting.fetch_add(1, SeqCst);
                    now = latest;
                    seen = now.table().header().seq.load(SeqCst);
                    skip_try = false;
                }
                let (table, header) = (now.table(), now.table().header());
                if !skip_try {
                    share = self.try_take();
                    if share.is_some() {
                        break;
                    }
                    if !keep_waiting() {
                        if woken && table.any_free(self.capacity()) {
                            shm::wake_one(&header.seq);
                        }
                        break;
                    }
                    // Woken for a share the fairness rule keeps from this
                    // process: pass the wake on to the next in line.
                    if woken && table.any_free(self.capacity()) {
                        shm::wake_one(&header.seq);
                    }
                }
                skip_try = false;
                let left = patience.saturating_sub(started.elapsed());
                if left.is_zero() {
                    break;
                }
                shm::wait(&header.seq, seen, left.min(WAIT_SLICE));
                let now_seen = header.seq.load(SeqCst);
                woken = now_seen != seen;
                seen = now_seen;
            }
            now.table().header().waiting.fetch_sub(1, SeqCst);
            self.waiting.fetch_sub(1, SeqCst);
            self.publish();
            self.wait_ns.fetch_add(started.elapsed().as_nanos() as u64, SeqCst);
            share
        }

        /// Gives a share back (to the table it was taken in) and wakes the
        /// threads waiting for one.
        pub fn release(&self, share: Share) {
            let table = share.of.table();
            table.release(share.of.me, share.token);
            self.held.fetch_sub(1, SeqCst);
            self.publish();
            // One waiter, not all: every thread woken is one more thread
            // competing for the CPUs the budget shares out.
            if table.header().waiting.load(SeqCst) > 0 {
                shm::wake_one(&table.header().seq);
            }
        }

        /// Whether a thread holding `share` should give it back now: it is
        /// no longer its own (the lease ran out while the process was
        /// stopped), or it has had its slice and another process is short
        /// of its fair share while this one holds more than its own.
        pub fn should_yield(&self, share: &Share, at: Instant) -> bool {
            if !share.of.table().holds(share.of.me, share.token) {
                // Taken back while this process was stopped: not its own.
                return true;
            }
            let now = self.now();
            let table = now.table();
            share.slice_spent(at)
                && table.header().waiting.load(SeqCst) > 0
                && table.should_yield(now.me, self.capacity(), &*now)
        }

        /// Wakes this machine's waiting threads so that they look at their
        /// pools again (a pool closing or aborting).
        pub fn nudge(&self) {
            shm::wake_all(&self.now().table().header().seq);
        }

        pub fn stats(&self) -> BudgetStats {
            BudgetStats {
                capacity: self.capacity() as u32,
                held: self.held.load(SeqCst),
                waiting: self.waiting.load(SeqCst),
                waits: self.waits.load(SeqCst),
                wait_seconds: self.wait_ns.load(SeqCst) as f64 / 1e9,
                machine: {
                    let now = self.now();
                    now.table().census(now.me, &*now)
                },
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod elsewhere {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::BudgetStats;

    /// Not available here: [`MachineBudget::of_process`] says why.
    #[derive(Debug)]
    pub enum MachineBudget {}

    #[derive(Debug)]
    pub struct Share;

    impl MachineBudget {
        pub fn of_process() -> Result<Arc<MachineBudget>, String> {
            Err("a machine budget needs Linux (shared memory, futexes and OFD locks)".into())
        }
        pub fn acquire(
            &self,
            _: Duration,
            _: Option<Share>,
            _: impl Fn() -> bool,
        ) -> Option<Share> {
            match *self {}
        }
        pub fn release(&self, _: Share) {
            match *self {}
        }
        pub fn try_acquire(&self) -> Option<Share> {
            match *self {}
        }
        pub fn should_yield(&self, _: &Share, _: Instant) -> bool {
            match *self {}
        }
        pub fn nudge(&self) {
            match *self {}
        }
        pub fn stats(&self) -> BudgetStats {
            match *self {}
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
