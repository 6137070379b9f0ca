//! Stopping: `abort` takes the queue back and raises the cancel flag;
//! `join` waits for every thread to leave and joins them.

use std::sync::atomic::Ordering;

use super::state::{Lifecycle, Shared};

pub(super) fn abort_queue(shared: &Shared) -> Vec<u32> {
    let mut st = shared.lock();
    st.lifecycle = Lifecycle::Stopping;
    shared.cancel.store(true, Ordering::Release);
    let slots = st.queue.drain(..).map(|t| t.slot).collect();
    shared.queued.store(0, Ordering::Release);
    drop(st);
    shared.wake_all();
    slots
}

pub(super) fn abort_and_join(shared: &Shared) {
    abort_queue(shared);
    join_all(shared);
}

pub(super) fn join_all(shared: &Shared) {
    let mut st = shared.lock();
    while st.threads > 0 || !st.supervisor_exited {
        st = shared.exit_cv.wait(st).unwrap_or_else(|e| e.into_inner());
    }
    let handles = std::mem::take(&mut st.finished);
    drop(st);
    for h in handles {
        let _ = h.join();
    }
}
