//! The hosts lent to a loaded kernel's calls, and how a host used after
//! its call returned is caught.
//!
//! A kernel function gets a `*const TpHost`; every host function gets the
//! host's `ctx`. The ABI says both are valid only until the function
//! returns, but a C library can keep them: before this module, the host
//! lived on the stack of the call, so a kept pointer read whatever host
//! the next call on that thread put at the same address, and wrote into
//! the output of whichever task ran then.
//!
//! Now `ctx` is not an address but a token, `slot << GEN_BITS | generation`:
//! each thread that calls kernels leases a [`Slot`] (never freed, reused by
//! later threads), which counts its calls. A host function looks the slot
//! up in [`SLOTS`] (so any `ctx`, even garbage, is safe to decode) and acts
//! only if the token is the one of the call in progress on that slot;
//! otherwise it does nothing (its function returns `TP_ERROR`, NULL or
//! `TP_CANCELLED`) and the misuse is recorded for the kernel the host was
//! lent to, whose next call to end fails with `ERR_TIDEPOOL_KERNEL_CONTRACT`
//! (foreign/host.rs). A kept copy of the host, or of its `ctx`, is always
//! caught.
//!
//! The `TpHost` structs themselves are lent in turn from a ring of
//! [`RING`] in the slot, so a kept `*const TpHost` still reads its own,
//! stale, token until the ring comes round: it is caught as long as fewer
//! than [`RING`] calls were made on that thread since (past that it may
//! read a later call's host; the pointer never dangles, as slots are never
//! freed). What no check can catch is a host function racing with the
//! return of its own call, which the ABI forbids: the ABI makes every
//! thread be done with the host before the kernel function returns.
//!
//! Cost per call: a few plain stores to publish the token, one to retire
//! it; per host function, one table read and one load compared.

use std::cell::{Cell, UnsafeCell};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

use tidepool_kernel_sdk::abi::TpHost;

/// Bits of a token that name its slot: at most this many threads hold a
/// slot at once.
const SLOT_BITS: u32 = 16;
/// Most slots.
const MAX_SLOTS: usize = 1 << SLOT_BITS;
/// Bits of a token that count the slot's calls (48 on 64-bit targets: a
/// slot would need centuries of calls to wrap).
const GEN_BITS: u32 = usize::BITS - SLOT_BITS;
const GEN_MASK: usize = (1 << GEN_BITS) - 1;
/// Hosts a slot lends in turn.
pub(crate) const RING: usize = 64;

/// Where the kernel's calls went wrong after they had returned: filled by
/// a stale host function, taken by the next call of the kernel to end.
pub(crate) struct Misuse {
    pending: AtomicBool,
    what: Mutex<Option<String>>,
}

impl Misuse {
    pub(crate) const fn new() -> Misuse {
        Misuse { pending: AtomicBool::new(false), what: Mutex::new(None) }
    }

    /// Records `what` (the first one recorded and not yet taken wins).
    fn record(&self, what: String) {
        self.what.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(what);
        self.pending.store(true, Ordering::Release);
    }

    /// What was recorded since the last take, if anything (one load when
    /// nothing was: every call of a loaded kernel asks).
    #[inline]
    pub(crate) fn take(&self) -> Option<String> {
        if !self.pending.load(Ordering::Relaxed) {
            return None;
        }
        self.take_recorded()
    }

    #[cold]
    fn take_recorded(&self) -> Option<String> {
        if !self.pending.swap(false, Ordering::Acquire) {
            return None;
        }
        self.what.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// Misuse of a host whose kernel can no longer be told (its ring entry was
/// lent again since): reported by the next call of any loaded kernel.
pub(crate) static UNATTRIBUTED: Misuse = Misuse::new();

/// One thread's lending: its hosts, the token of its call in progress.
pub(crate) struct Slot {
    index: usize,
    /// The token of the call in progress; 0 between calls.
    live: AtomicUsize,
    /// What the call in progress lends (foreign/host.rs's `Call`): meaningful
    /// while `live` holds its token.
    call: AtomicPtr<c_void>,
    /// The last generation handed out (only the leasing thread writes it).
    generation: Cell<usize>,
    /// The hosts, call `g` getting `hosts[g % RING]`: only their `ctx`
    /// changes after the slot is made, and only through [`Slot::ctx`].
    hosts: [UnsafeCell<TpHost>; RING],
    /// The misuse record of the kernel each host was last lent to.
    owners: [AtomicPtr<Misuse>; RING],
}

// SAFETY: a slot is shared by every thread holding one of its tokens.
// `live`, `call`, `owners` and the hosts' `ctx` are atomics (`ctx` through
// `Slot::ctx`); the hosts' other fields never change after `Slot::new`;
// `generation` is only touched by the thread that leases the slot (in
// `lend`, and a lease is one thread's at a time).
unsafe impl Sync for Slot {}

/// Every slot ever made, by index: a token's slot is found here, never by
/// following a pointer a library handed back.
static SLOTS: [AtomicPtr<Slot>; MAX_SLOTS] = [const { AtomicPtr::new(ptr::null_mut()) }; MAX_SLOTS];
/// Slots made so far.
static MADE: AtomicUsize = AtomicUsize::new(0);
/// Slots whose thread ended (or whose temporary lease did), to lease again.
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

impl Slot {
    /// A slot from the free list, or a new one (`None` when [`MAX_SLOTS`]
    /// threads hold one).
    fn take(functions: &TpHost) -> Option<&'static Slot> {
        if let Some(index) = FREE.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            // SAFETY: a freed index names a slot made and published below.
            return Some(unsafe { &*SLOTS[index].load(Ordering::Acquire) });
        }
        let index = MADE.fetch_add(1, Ordering::Relaxed);
        if index >= MAX_SLOTS {
            MADE.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        let host = |_| UnsafeCell::new(TpHost { ctx: ptr::null_mut(), ..*functions });
        let slot = Slot {
            index,
            live: AtomicUsize::new(0),
            call: AtomicPtr::new(ptr::null_mut()),
            generation: Cell::new(0),
            hosts: std::array::from_fn(host),
            owners: [const { AtomicPtr::new(ptr::null_mut()) }; RING],
        };
        // Never freed: a kept host pointer into it must never dangle.
        let slot: &'static Slot = Box::leak(Box::new(slot));
        SLOTS[index].store(ptr::from_ref(slot).cast_mut(), Ordering::Release);
        Some(slot)
    }

    fn free(&'static self) {
        FREE.lock().unwrap_or_else(|e| e.into_inner()).push(self.index);
    }

    /// The `ctx` of host `i`, as an atomic (a library may read it from any
    /// thread while a later call overwrites it).
    fn ctx(&self, i: usize) -> &AtomicUsize {
        // SAFETY: the field is a pointer, so aligned for an AtomicUsize of
        // the same size, inside a slot that is never freed; every access
        // tidepool makes to it is atomic.
        unsafe { AtomicUsize::from_ptr(ptr::addr_of_mut!((*self.hosts[i].get()).ctx).cast()) }
    }
}

/// The slot of the calling thread, given back when the thread ends.
struct ThreadSlot(Cell<Option<&'static Slot>>);

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        if let Some(slot) = self.0.get() {
            slot.free();
        }
    }
}

thread_local! {
    static THREAD_SLOT: ThreadSlot = const { ThreadSlot(Cell::new(None)) };
}

/// The calling thread's slot, leased on its first call; `None` when no
/// slot is left, or while the thread ends.
#[inline]
fn thread_slot(functions: &TpHost) -> Option<&'static Slot> {
    THREAD_SLOT
        .try_with(|t| {
            if t.0.get().is_none() {
                t.0.set(Slot::take(functions));
            }
            t.0.get()
        })
        .ok()
        .flatten()
}

/// A slot for one call only (see [`lend`]).
#[cold]
fn temporary_slot(functions: &TpHost) -> Option<&'static Slot> {
    Slot::take(functions)
}

/// Lends a host to one call: `f` runs the kernel function with it. `call`
/// is what the host functions act on while the call is in progress (see
/// [`live_call`]), `owner` where a later misuse of this host is recorded.
/// `None` (and `f` not run) when no slot can be had.
#[inline]
pub(crate) fn lend<R>(
    functions: &TpHost,
    call: *const c_void,
    owner: &'static Misuse,
    f: impl FnOnce(*const TpHost) -> R,
) -> Option<R> {
    // A thread's slot serves one call at a time: a call made while another
    // is in progress on the same thread (tidepool makes none) gets one of
    // its own, given back when it ends.
    let own = thread_slot(functions).filter(|s| s.live.load(Ordering::Relaxed) == 0);
    let (slot, temporary) = match own {
        Some(slot) => (slot, false),
        None => (temporary_slot(functions)?, true),
    };
    let generation = match (slot.generation.get() + 1) & GEN_MASK {
        0 => 1,
        g => g,
    };
    slot.generation.set(generation);
    let token = slot.index << GEN_BITS | generation;
    let i = generation % RING;
    // The entry is rewritten as a seqlock (its `ctx` the sequence), so a
    // stale host function reading it from another thread never pairs the
    // new owner with the old token.
    slot.ctx(i).store(0, Ordering::Relaxed);
    fence(Ordering::Release);
    slot.owners[i].store(ptr::from_ref(owner).cast_mut(), Ordering::Relaxed);
    slot.call.store(call.cast_mut(), Ordering::Relaxed);
    slot.ctx(i).store(token, Ordering::Release);
    slot.live.store(token, Ordering::Release);

    /// Retires the token when the call returns, however it returns.
    struct Retire(&'static Slot, bool);
    impl Drop for Retire {
        fn drop(&mut self) {
            self.0.live.store(0, Ordering::Release);
            if self.1 {
                self.0.free();
            }
        }
    }
    let _retire = Retire(slot, temporary);
    Some(f(slot.hosts[i].get().cast_const()))
}

/// The call a host function was called for, if its `ctx` is the token of
/// the call in progress on its slot. Otherwise `None`, and the misuse is
/// recorded: `what` names the host function.
pub(crate) fn live_call(ctx: *mut c_void, what: &str) -> Option<*const c_void> {
    let owner = match find(ctx as usize) {
        Ok(call) => return Some(call),
        Err(owner) => owner,
    };
    let message = format!("called its host's {what} after the call it was lent to had returned (the call did nothing)");
    match owner {
        Some(owner) => owner.record(message),
        None => {
            UNATTRIBUTED.record(format!("a loaded kernel {message}; too many calls ago on its thread to tell which kernel it was lent to"))
        }
    }
    None
}

/// `Ok(call)` if `token` is the one of the call in progress on its slot;
/// else `Err` with the misuse record of the kernel its host was lent to,
/// while its ring entry still tells. Any `token` is safe to look up.
fn find(token: usize) -> Result<*const c_void, Option<&'static Misuse>> {
    let slot =
        SLOTS.get(token >> GEN_BITS).map(|s| s.load(Ordering::Acquire)).filter(|s| !s.is_null());
    // SAFETY: a published slot is never freed.
    let Some(slot) = slot.map(|s| unsafe { &*s }) else {
        return Err(None);
    };
    if token & GEN_MASK == 0 {
        return Err(None); // no call has generation 0
    }
    if slot.live.load(Ordering::Acquire) == token {
        return Ok(slot.call.load(Ordering::Relaxed).cast_const());
    }
    let i = (token & GEN_MASK) % RING;
    let before = slot.ctx(i).load(Ordering::Acquire);
    let owner = slot.owners[i].load(Ordering::Relaxed);
    fence(Ordering::Acquire);
    let after = slot.ctx(i).load(Ordering::Relaxed);
    if before != token || after != token || owner.is_null() {
        return Err(None);
    }
    // SAFETY: owners are misuse records of kernels, never freed (a
    // registered kernel's is leaked, the others are statics).
    Err(Some(unsafe { &*owner }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn functions() -> TpHost {
        unsafe extern "C" fn fail(_: *mut c_void, _: *const u8, _: usize, _: *const u8, _: usize) {}
        unsafe extern "C" fn write(_: *mut c_void, _: *const u8, _: usize) -> i32 {
            0
        }
        unsafe extern "C" fn unfilled(_: *mut c_void, _: usize, _: *mut usize) -> *mut u8 {
            ptr::null_mut()
        }
        unsafe extern "C" fn commit(_: *mut c_void, _: usize) -> i32 {
            0
        }
        unsafe extern "C" fn reserve(_: *mut c_void, _: usize) {}
        unsafe extern "C" fn check(_: *mut c_void) -> i32 {
            0
        }
        TpHost {
            size: 0,
            reserved: 0,
            ctx: ptr::null_mut(),
            fail,
            write,
            unfilled,
            commit,
            reserve,
            check,
        }
    }

    #[test]
    fn a_token_is_live_during_its_call_only_and_a_late_one_is_charged_to_its_kernel() {
        static OWNER: Misuse = Misuse::new();
        let functions = functions();
        let marker = 7u8;
        let call = ptr::from_ref(&marker).cast::<c_void>();
        let mut kept: *const TpHost = ptr::null();
        let ctx = lend(&functions, call, &OWNER, |host| {
            kept = host;
            // SAFETY: the host of the call in progress.
            let ctx = unsafe { (*host).ctx };
            assert_eq!(live_call(ctx, "write"), Some(call));
            ctx
        })
        .unwrap();
        assert_eq!(OWNER.take(), None, "nothing misused yet");
        // After the call: the kept pointer still reads its own, stale, token.
        // SAFETY: slots are never freed.
        assert_eq!(unsafe { (*kept).ctx }, ctx);
        assert_eq!(live_call(ctx, "write"), None);
        assert!(OWNER.take().unwrap().contains("write after the call"));
        assert_eq!(OWNER.take(), None, "taken once");
        // During later calls on the same thread: still stale, and still
        // charged to its kernel until the ring comes round.
        for n in 1..RING {
            lend(&functions, call, &OWNER, |host| {
                assert_ne!(host, kept, "another host of the ring");
                assert_eq!(live_call(ctx, "check"), None);
            });
            assert!(OWNER.take().unwrap().contains("check"), "{n} calls later");
        }
        // The ring came round: the kept pointer now reads the live host
        // (the limit of what a ring can do); its old token is still stale,
        // but no longer names its kernel.
        lend(&functions, call, &OWNER, |host| {
            assert_eq!(host, kept);
            assert!(matches!(find(ctx as usize), Err(None)));
        });
    }

    #[test]
    fn any_ctx_is_looked_up_safely() {
        for garbage in [0, 1, usize::MAX, 0xdead_beef, (MAX_SLOTS - 1) << GEN_BITS | 5] {
            assert!(find(garbage).is_err(), "{garbage:#x}");
        }
    }
}
