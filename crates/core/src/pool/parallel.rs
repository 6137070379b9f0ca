//! A pool as the place a running task's parts run ([`Parallel`]): the
//! board (parts.rs) with the pool's threads to wake for it. Apart from the
//! board, which knows nothing of the pool's state.

use super::state::{pick_parked, Shared};
use crate::kernels::Parallel;

/// A pool as the place a task's parts run ([`Parallel`]).
pub(super) struct PoolParallel<'a>(pub(super) &'a Shared);

impl Parallel for PoolParallel<'_> {
    fn width(&self) -> usize {
        self.0.config.policy.max_threads
    }

    fn run_parts(&self, n: usize, part: &(dyn Fn(usize) + Sync)) {
        let shared = self.0;
        shared.parts.run(n, part, |most| {
            // Parked threads first; the supervisor counts the parts as
            // queued work and starts threads for them as for tasks.
            let mut st = shared.lock();
            let mut woken = Vec::new();
            while woken.len() < most {
                match pick_parked(&mut st, true) {
                    Some(seat) => woken.push(seat),
                    None => break,
                }
            }
            drop(st);
            for seat in woken {
                shared.seat_cvs[seat].notify_one();
            }
            shared.supervisor_cv.notify_one();
        });
    }
}
