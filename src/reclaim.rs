//! Frees large results away from the JS thread. A vector past the
//! allocator's mmap threshold (128 KiB with glibc, until glibc raises it)
//! is returned to the OS with munmap, which costs the calling thread time;
//! finalizers run on the JS thread, hundreds at a time after a GC, and the
//! event loop stalled behind them (docs/benchmarks-history.md, "Large
//! results"). So they go to one thread,
//! started with the first pool, that drops them, and (glibc) trims the heap
//! once a burst of frees is over:
//! glibc raises its mmap threshold after the first large frees, so later
//! results come from arenas that are not given back by themselves.

use std::sync::OnceLock;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;

/// Smaller vectors are freed in place: the allocator keeps them.
const AWAY_FROM: usize = 128 * 1024;
/// A burst is over when nothing came for this long.
const QUIET: Duration = Duration::from_millis(100);

static FREER: OnceLock<Option<crossbeam_channel::Sender<Vec<u8>>>> = OnceLock::new();

/// Starts the free thread, once per process: called when a pool is made,
/// so no thread is ever started from the delivery path.
pub(crate) fn start() {
    FREER.get_or_init(|| {
        let (tx, rx) = crossbeam_channel::unbounded::<Vec<u8>>();
        // If the OS refuses a thread, vectors are freed in place.
        let thread = std::thread::Builder::new().name("tidepool-free".into()).spawn(move || {
            // Housekeeping: it must never compete with the event loop
            // for a core (crate::priority in the core, as the workers).
            tidepool_core::priority::lower_current_thread(
                tidepool_core::pool::DEFAULT_NICE_INCREMENT,
            );
            drop_all(&rx)
        });
        thread.ok().map(|_| tx)
    });
}

pub(crate) fn free(bytes: Vec<u8>) {
    if bytes.capacity() < AWAY_FROM {
        return;
    }
    if let Some(Some(tx)) = FREER.get() {
        // Cannot fail: the receiving thread lives as long as the process.
        let _ = tx.send(bytes);
    }
}

/// The free thread: drops what arrives; trims once a burst is over
/// (and sleeps without a timeout while there is nothing to trim).
fn drop_all(rx: &crossbeam_channel::Receiver<Vec<u8>>) {
    let mut freed_since_trim = false;
    loop {
        let next = if freed_since_trim {
            rx.recv_timeout(QUIET)
        } else {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        match next {
            Ok(bytes) => {
                drop(bytes);
                freed_since_trim = true;
            }
            Err(RecvTimeoutError::Timeout) => {
                trim();
                freed_since_trim = false;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim has no preconditions and is thread-safe in
    // glibc; it only returns free memory to the OS.
    unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
