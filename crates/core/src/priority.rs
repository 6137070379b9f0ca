//! Lowering the scheduling priority of the calling thread.
//!
//! A pool that keeps every core busy competes with the JavaScript thread that
//! feeds it. When the OS scheduler gives a core to a worker while the event
//! loop has a timer or a batch of results to handle, the loop stalls for a
//! scheduler tick (1-4 ms). Workers with a higher nice value than the event
//! loop's thread lose that contest: the loop runs as soon as it is runnable,
//! and the workers still get every cycle it leaves unused.
//!
//! Linux keeps a nice value per thread, so this affects only the caller.
//! Elsewhere (macOS, Windows) nice is per process or has other semantics, so
//! the request is ignored there and reported as not applied.

/// Raises the calling thread's nice value by `increment` (0..=19; higher is
/// lower priority). Returns true if the new value was applied.
///
/// Raising nice never needs privileges, so the only expected failure is a
/// sandbox that forbids the syscall; the thread then keeps its priority.
pub fn lower_current_thread(increment: u8) -> bool {
    if increment == 0 {
        return true;
    }
    imp::lower_current_thread(i32::from(increment.min(19)))
}

#[cfg(target_os = "linux")]
mod imp {
    pub fn lower_current_thread(increment: i32) -> bool {
        // SAFETY: gettid has no preconditions and cannot fail.
        let tid = unsafe { libc::gettid() } as libc::id_t;
        // getpriority may legitimately return -1, so errno tells errors apart.
        // SAFETY: errno_location returns this thread's errno slot, valid for
        // the thread's lifetime; getpriority only reads scheduler state.
        let current = unsafe {
            *libc::__errno_location() = 0;
            let nice = libc::getpriority(libc::PRIO_PROCESS, tid);
            if nice == -1 && *libc::__errno_location() != 0 {
                return false;
            }
            nice
        };
        let target = (current + increment).min(19);
        // SAFETY: plain syscall on this thread's own id; it only changes the
        // scheduling weight of the calling thread (Linux nice is per thread).
        unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, target) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn lower_current_thread(_increment: i32) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn own_nice() -> i32 {
        // SAFETY: see imp; reads this thread's nice value.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[test]
    fn raises_only_the_calling_thread() {
        let before = own_nice();
        let (child, applied) = std::thread::spawn(move || {
            let applied = lower_current_thread(3);
            (own_nice(), applied)
        })
        .join()
        .unwrap();
        assert!(applied);
        assert_eq!(child, (before + 3).min(19));
        assert_eq!(own_nice(), before, "the spawning thread keeps its priority");
    }

    #[test]
    fn zero_is_a_no_op_and_the_value_saturates_at_19() {
        let (zero, max) = std::thread::spawn(|| {
            let before = own_nice();
            assert!(lower_current_thread(0));
            let zero = own_nice() - before;
            assert!(lower_current_thread(40));
            (zero, own_nice())
        })
        .join()
        .unwrap();
        assert_eq!(zero, 0);
        assert_eq!(max, 19);
    }
}
