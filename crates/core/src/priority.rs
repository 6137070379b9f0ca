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
//!
//! The workers of a pool under a machine budget also run under
//! `SCHED_BATCH` ([`batch_current_thread`]): a thread woken by another
//! does not take that one's CPU at once. A worker that gives its share
//! over wakes the thread that takes it and then sleeps; a wakee that
//! preempted it would leave it runnable, one thread above the budget,
//! until the wakee's slice ended (see `budget/README.md`).

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

/// Puts the calling thread under `SCHED_BATCH` (Linux), keeping its nice
/// value: when woken, it waits for the running thread's turn to end
/// instead of preempting it. Only from the default policy (`SCHED_OTHER`),
/// which a thread may leave for `SCHED_BATCH` without privileges: a thread
/// its process's owner put under another policy (`SCHED_IDLE`, a real-time
/// one) keeps it. Returns true if applied; elsewhere, false.
pub fn batch_current_thread() -> bool {
    imp::batch_current_thread()
}

#[cfg(target_os = "linux")]
mod imp {
    /// The calling thread's scheduling policy, by the system call itself:
    /// musl's `sched_getscheduler` and `sched_setscheduler` only fail
    /// (ENOSYS), by design.
    pub fn current_policy() -> libc::c_long {
        // SAFETY: pid 0 is the calling thread; the call only reads its policy.
        unsafe { libc::syscall(libc::SYS_sched_getscheduler, 0 as libc::pid_t) }
    }

    pub fn batch_current_thread() -> bool {
        if current_policy() != libc::c_long::from(libc::SCHED_OTHER) {
            return false;
        }
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 is the calling thread; `param` is initialised and
        // outlives the call, which only reads it.
        let set = unsafe {
            libc::syscall(
                libc::SYS_sched_setscheduler,
                0 as libc::pid_t,
                libc::SCHED_BATCH,
                &param as *const libc::sched_param,
            )
        };
        set == 0
    }

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
    pub fn batch_current_thread() -> bool {
        false
    }

    pub fn lower_current_thread(_increment: i32) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use imp::current_policy as own_policy;

    fn own_nice() -> i32 {
        // SAFETY: see imp; reads this thread's nice value.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[test]
    fn batch_applies_to_the_calling_thread_only_and_keeps_its_nice_value() {
        // A thread starts under its spawner's policy.
        let before = own_policy();
        let (policy, nice, applied) = std::thread::spawn(|| {
            assert!(lower_current_thread(4));
            let nice = own_nice();
            let applied = batch_current_thread();
            (own_policy(), (nice, own_nice()), applied)
        })
        .join()
        .unwrap();
        if before == libc::c_long::from(libc::SCHED_OTHER) {
            assert!(applied);
            assert_eq!(policy, libc::c_long::from(libc::SCHED_BATCH));
        } else {
            // Run under another policy (chrt): it is kept.
            assert!(!applied);
            assert_eq!(policy, before);
        }
        assert_eq!(nice.0, nice.1, "the policy's change keeps the nice value");
        assert_eq!(own_policy(), before, "the spawning thread keeps its policy");
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
