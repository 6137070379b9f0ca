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
    let _s1 = b.acquire(Duration::ZERO, None, || false).unwrap();
    let _s2 = b.acquire(Duration::ZERO, None, || false).unwrap();
    assert!(a.acquire(Duration::ZERO, None, || false).is_none());
    let a = std::sync::Arc::new(a);
    MachineBudget::start_monitor(&a).unwrap();
    // Closing b's file drops its lock, as a process's death would.
    drop(b);
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
    let path = d.0.join(format!("tidepool-budget-v1-{uid}"));
    std::fs::write(&path, b"old").unwrap();
    let err = MachineBudget::open(&d.0).unwrap_err().to_string();
    assert!(err.contains("mode 0600"), "others may read it: {err}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = MachineBudget::open(&d.0).unwrap_err().to_string();
    assert!(err.contains("another version"), "{err}");
}
