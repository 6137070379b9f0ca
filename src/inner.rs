//! The JS-thread state of one pool, and the invariants that tie it together:
//! `pending` counts the tasks submitted and not yet handed back; the cancel
//! flags exist exactly for the pending tasks posted with a signal; while
//! anything is pending (or a close/destroy is under way) the threadsafe
//! function keeps the event loop alive and the batch callback is strongly
//! referenced, and when nothing is, neither is held. The rest of the binding
//! changes this state only through the methods below.
//!
//! `Inner` is shared (`Rc`) by the JS object, the bound functions (`submit`,
//! `submitMany`, `submitStep`) and the threadsafe function; whichever goes
//! last frees it (lifecycle.rs). Worker threads never see it.

use std::cell::{Cell, OnceCell, RefCell};

use napi::sys;
use tidepool_core::{Completion, Pool, PoolEvent};

use crate::handles::{Reference, Tsfn};

/// JS-thread state of one pool.
pub(crate) struct Inner {
    /// The environment this pool lives in.
    pub(crate) env: sys::napi_env,
    /// The core pool (set right after construction of the TSFN it needs).
    pub(crate) pool: OnceCell<Pool>,
    /// Wakes the JS thread (set right after `Inner` is made, since the TSFN's
    /// finalizer owns a share of it); released on drop.
    pub(crate) tsfn: OnceCell<Tsfn>,
    /// lib/engine/'s batch callback; strong while `held`, weak otherwise.
    pub(crate) callback: Reference,
    /// Strong references keeping the shared meta array and slab alive.
    pub(crate) buffers: [Reference; 2],
    /// Shared `Uint32Array`: `[slot, code << 24 | len]` per completion.
    pub(crate) meta: *mut u32,
    /// Shared byte slab: result bytes (or error text) back to back.
    pub(crate) slab: *mut u8,
    /// Reused buffers for taking completions and events (no allocation per batch).
    pub(crate) scratch: RefCell<(Vec<Completion>, Vec<PoolEvent>)>,
    /// Tasks submitted and not yet handed back to JavaScript.
    pending: Cell<usize>,
    /// close() or destroy() was called and termination not yet delivered.
    closing: Cell<bool>,
    /// The TSFN is ref'd and `callback` strong.
    held: Cell<bool>,
    /// The environment is being torn down: touch nothing of N-API any more.
    torn_down: Cell<bool>,
    /// A delivery left results for a later turn of the event loop and
    /// lib/engine/ has a `deliver()` scheduled: until it runs, wake-ups from
    /// the threads deliver nothing (one chain, at most one budget per turn).
    pub(crate) deferred: Cell<bool>,
    /// The pool's encoding makes a string of each result (delivery budget).
    pub(crate) string_results: bool,
}

impl Inner {
    /// A pool's state, before its TSFN and core pool are set.
    pub(crate) fn new(
        env: sys::napi_env,
        callback: Reference,
        buffers: [Reference; 2],
        meta: *mut u32,
        slab: *mut u8,
        batch: usize,
        string_results: bool,
    ) -> Inner {
        Inner {
            env,
            pool: OnceCell::new(),
            tsfn: OnceCell::new(),
            callback,
            buffers,
            meta,
            slab,
            scratch: RefCell::new((Vec::with_capacity(batch), Vec::new())),
            pending: Cell::new(0),
            closing: Cell::new(false),
            held: Cell::new(false),
            torn_down: Cell::new(false),
            deferred: Cell::new(false),
            string_results,
        }
    }

    pub(crate) fn pool(&self) -> &Pool {
        self.pool.get().expect("pool is set in the constructor")
    }

    /// A task was queued.
    pub(crate) fn task_queued(&self) {
        self.pending.set(self.pending.get() + 1);
        if self.pending.get() == 1 {
            self.update_hold();
        }
    }

    /// `count` tasks of a batch were queued (their flag is the batch's, which
    /// lib/engine/ holds: none is kept here).
    pub(crate) fn tasks_queued(&self, count: usize) {
        if count == 0 {
            return;
        }
        let before = self.pending.get();
        self.pending.set(before + count);
        if before == 0 {
            self.update_hold();
        }
    }

    /// `count` tasks will not be handed back again (delivered now, or taken
    /// out of the queue): uncounts them. The hold is updated by
    /// [`update_hold`](Self::update_hold), once per batch.
    pub(crate) fn tasks_done(&self, count: usize) {
        self.pending.set(self.pending.get() - count);
    }

    /// close() or destroy() was called: hold on until termination is delivered.
    pub(crate) fn begin_closing(&self) {
        self.closing.set(true);
        self.update_hold();
    }

    /// Whether a close/destroy awaits its termination.
    pub(crate) fn is_closing(&self) -> bool {
        self.closing.get()
    }

    /// Termination was delivered (the hold is updated with the batch).
    pub(crate) fn end_closing(&self) {
        self.closing.set(false);
    }

    /// The environment is going away: from now on nothing touches N-API.
    pub(crate) fn tear_down(&self) {
        self.torn_down.set(true);
    }

    pub(crate) fn is_torn_down(&self) -> bool {
        self.torn_down.get()
    }

    /// Refs or unrefs the TSFN and the callback to match the pending work.
    pub(crate) fn update_hold(&self) {
        let want = self.pending.get() > 0 || self.closing.get();
        if want == self.held.get() || self.torn_down.get() {
            return;
        }
        let Some(tsfn) = self.tsfn.get() else { return };
        self.held.set(want);
        // Failures (the environment is closing) leave nothing to keep alive.
        if want {
            let _ = self.callback.strengthen();
            let _ = tsfn.hold();
        } else {
            let _ = self.callback.weaken();
            let _ = tsfn.release_hold();
        }
    }
}
