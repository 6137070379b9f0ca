//! A guard for the table's mapping against SIGBUS. The table is a file
//! that any process of the user may truncate (`: > /dev/shm/tidepool-...`);
//! a shared mapping's pages past the file's end then kill whoever touches
//! them, and every member touches the table at each share it takes. So a
//! handler for SIGBUS replaces a guarded mapping hit by the fault with
//! private zeroed memory of the same size, notes it, and lets the access
//! run again: the member goes on alone on a table of its own (every bit
//! pattern of the table is valid) until its monitor thread sees the file
//! changed and joins the machine's table anew (`Membership::stale`).
//!
//! A fault elsewhere, or a SIGBUS sent by `kill`, goes to what was there
//! before: the previous handler, or the default action (the fault runs
//! again under it; a sent signal is raised again).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Mappings guarded at once (one per membership: a process has one, a
/// test a few); a mapping beyond them goes unguarded.
const REGIONS: usize = 16;

static CLAIMED: [AtomicBool; REGIONS] = [const { AtomicBool::new(false) }; REGIONS];
static STARTS: [AtomicUsize; REGIONS] = [const { AtomicUsize::new(0) }; REGIONS];
static LENS: [AtomicUsize; REGIONS] = [const { AtomicUsize::new(0) }; REGIONS];
static FAULTED: [AtomicBool; REGIONS] = [const { AtomicBool::new(false) }; REGIONS];
/// SIGBUS's disposition before ours (set once, before ours is installed).
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// A guarded mapping, unguarded when dropped (before it is unmapped).
#[derive(Debug)]
pub(super) struct Guarded(usize);

impl Guarded {
    /// Whether the mapping was hit by SIGBUS (and now stands on private
    /// memory).
    pub(super) fn faulted(&self) -> bool {
        FAULTED[self.0].load(Ordering::Acquire)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        STARTS[self.0].store(0, Ordering::Release);
        FAULTED[self.0].store(false, Ordering::Release);
        CLAIMED[self.0].store(false, Ordering::Release);
    }
}

/// Guards `len` bytes mapped at `start`; None if every place is taken or
/// the handler could not be installed.
pub(super) fn guard(start: *mut libc::c_void, len: usize) -> Option<Guarded> {
    if !install() {
        return None;
    }
    let i = (0..REGIONS).find(|&i| {
        CLAIMED[i].compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok()
    })?;
    FAULTED[i].store(false, Ordering::Release);
    LENS[i].store(len, Ordering::Release);
    STARTS[i].store(start as usize, Ordering::Release);
    Some(Guarded(i))
}

/// Installs the handler once; whether it is installed.
fn install() -> bool {
    static INSTALLED: Mutex<Option<bool>> = Mutex::new(None);
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    *installed.get_or_insert_with(|| {
        // SAFETY: zeroed sigactions are valid; sigaction only reads `ours`
        // and writes `previous`, both live through the call. The previous
        // disposition is stored before ours can run.
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return false;
            }
            let _ = PREVIOUS.set(previous);
            let mut ours: libc::sigaction = std::mem::zeroed();
            ours.sa_sigaction = on_sigbus as *const () as usize;
            ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut ours.sa_mask);
            libc::sigaction(libc::SIGBUS, &ours, std::ptr::null_mut()) == 0
        }
    })
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let (addr, code) = unsafe { ((*info).si_addr() as usize, (*info).si_code) };
    for i in 0..REGIONS {
        let start = STARTS[i].load(Ordering::Acquire);
        let len = LENS[i].load(Ordering::Acquire);
        if start != 0 && addr >= start && addr - start < len {
            // SAFETY: [start, start + len) is a mapping of ours (guarded
            // until unmapped); MAP_FIXED replaces it in one step with
            // zeroed private memory, which every access to the table may
            // read and write. mmap is a plain system call, safe here.
            let p = unsafe {
                libc::mmap(
                    start as *mut libc::c_void,
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                FAULTED[i].store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not ours: what was there before.
    let Some(previous) = PREVIOUS.get() else { return };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restores the default disposition; a fault then runs
        // again and takes it, a sent signal is raised again.
        unsafe {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
            if code <= 0 {
                libc::raise(libc::SIGBUS);
            }
        }
    } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: an SA_SIGINFO handler takes these three arguments.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: a plain handler takes the signal's number.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}
