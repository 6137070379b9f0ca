//! The budget across processes: members joining, dying and sharing.

use super::*;
use std::time::{Duration, Instant};

fn dir() -> tempdir::Dir {
    tempdir::Dir::new()
}

/// A directory of its own per test, removed at the end.
mod tempdir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "tidepool-budget-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            std::fs::create_dir_all(&path).unwrap();
            Dir(path)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn members_of_one_file_share_its_capacity() {
    let d = dir();
    let a = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let b = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let never = || false;
    let s1 = a.acquire(Duration::ZERO, None, never).unwrap();
    let s2 = b.acquire(Duration::ZERO, None, never).unwrap();
    assert!(a.acquire(Duration::ZERO, None, never).is_none());
    assert!(b.acquire(Duration::from_millis(20), None, || true).is_none(), "times out");
    assert_eq!((a.stats().waits, b.stats().waits), (1, 1));
    assert_eq!(a.stats().machine, Census { processes: 2, held: 2 });
    a.release(s1);
    let s3 = b.acquire(Duration::ZERO, None, never).unwrap();
    b.release(s2);
    b.release(s3);
    assert_eq!(a.stats().machine, Census { processes: 0, held: 0 });
}

#[test]
fn a_waiting_thread_is_woken_by_a_release_in_another_member() {
    let d = dir();
    let a = MachineBudget::open(&d.0).unwrap().with_capacity(1);
    let b = MachineBudget::open(&d.0).unwrap().with_capacity(1);
    let held = a.acquire(Duration::ZERO, None, || false).unwrap();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let started = Instant::now();
            let share = b.acquire(Duration::from_secs(10), None, || true);
            (share.map(|share| b.release(share)).is_some(), started.elapsed())
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while b.stats().waiting == 0 {
            assert!(Instant::now() < deadline, "the waiter never waited");
            std::thread::yield_now();
        }
        a.release(held);
        let (got, _) = waiter.join().unwrap();
        assert!(got);
    });
}

#[test]
fn a_dead_members_shares_come_back() {
    let d = dir();
    let a = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let b = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let s1 = b.acquire(Duration::ZERO, None, || false).unwrap();
    let s2 = b.acquire(Duration::ZERO, None, || false).unwrap();
    assert!(a.acquire(Duration::ZERO, None, || false).is_none());
    let a = std::sync::Arc::new(a);
    MachineBudget::start_monitor(&a).unwrap();
    // Closing b's file drops its lock, as a process's death would (its
    // shares, not given back, hold its membership, so they go too).
    drop((b, s1, s2));
    // Reclaimed by the monitor while a waits (how soon is
    // bench/budget.js's question: the survivors' rate after a SIGKILL).
    let share = a.acquire(Duration::from_secs(10), None, || true);
    assert!(share.is_some(), "the dead member's shares never came back");
}

#[test]
fn a_file_of_another_size_is_refused_and_named() {
    let d = dir();
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    use std::os::unix::fs::PermissionsExt;
    let path = d.0.join(format!("tidepool-budget-v2-{uid}"));
    std::fs::write(&path, b"old").unwrap();
    let err = MachineBudget::open(&d.0).unwrap_err().to_string();
    assert!(err.contains("mode 0600"), "others may read it: {err}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = MachineBudget::open(&d.0).unwrap_err().to_string();
    assert!(err.contains("another version"), "{err}");
}

/// The file removed under a member: a new process makes another, and the
/// member moves to it, so the machine keeps one budget (not two: four
/// shares held on two CPUs).
#[test]
fn a_member_moves_to_the_file_that_replaced_its_own() {
    let d = dir();
    let a = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let old = a.acquire(Duration::ZERO, None, || false).unwrap();
    assert!(!a.rejoin(), "its file is still the machine's");
    std::fs::remove_file(a.now().mapping.path()).unwrap();
    let b = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let held_by_b = b.acquire(Duration::ZERO, None, || false).unwrap();
    assert!(a.rejoin(), "its file was removed");
    assert_eq!(b.stats().machine.processes, 2, "one table again");
    // a's share of the old table goes back there; in the new one a may
    // take only what b leaves.
    a.release(old);
    let new = a.acquire(Duration::ZERO, None, || false).unwrap();
    assert!(a.acquire(Duration::ZERO, None, || false).is_none(), "two shares in all");
    assert_eq!(b.stats().machine, Census { processes: 2, held: 2 });
    a.release(new);
    b.release(held_by_b);
}

/// The file truncated under its members: the next touch of the table
/// would be SIGBUS. A member goes on on memory of its own and moves to
/// the file made anew; a member that opens it later shares it.
#[test]
fn a_truncated_file_neither_kills_a_member_nor_splits_the_budget() {
    let d = dir();
    let a = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let held = a.acquire(Duration::ZERO, None, || false).unwrap();
    let path = a.now().mapping.path().to_owned();
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(0).unwrap();
    // Touches every page of the table it reads: SIGBUS, had it no guard.
    let census = a.stats().machine;
    assert_eq!(census, Census { processes: 0, held: 0 }, "its own zeroed memory");
    assert!(a.rejoin(), "its file was truncated");
    a.release(held);
    let b = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let s1 = a.acquire(Duration::ZERO, None, || false).unwrap();
    let s2 = b.acquire(Duration::ZERO, None, || false).unwrap();
    assert_eq!(b.stats().machine, Census { processes: 2, held: 2 });
    a.release(s1);
    b.release(s2);
}

/// Truncated and made whole again by another process before this member
/// touched it: no fault, the same file, but zeroed: the member lost its
/// slot, and moves on as if the file were new.
#[test]
fn a_member_whose_table_was_zeroed_under_it_joins_again() {
    let d = dir();
    let a = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let held = a.acquire(Duration::ZERO, None, || false).unwrap();
    let path = a.now().mapping.path().to_owned();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(0).unwrap();
    let b = MachineBudget::open(&d.0).unwrap().with_capacity(2);
    let s1 = b.acquire(Duration::ZERO, None, || false).unwrap();
    assert!(a.rejoin(), "its slot is gone");
    a.release(held);
    let s2 = a.acquire(Duration::ZERO, None, || false).unwrap();
    assert!(a.acquire(Duration::ZERO, None, || false).is_none(), "two shares in all");
    assert_eq!(b.stats().machine, Census { processes: 2, held: 2 });
    a.release(s2);
    b.release(s1);
}
