//! scrypt's memory, which its crate allocates and frees itself, is zeroed
//! before it is freed when `WipeOnFree` is the global allocator, as it is in
//! the addon. This binary installs it over an allocator that looks at every
//! large block as it is freed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tidepool_core::kernels::{find, get, RawParams, RawValue, RunContext, Sink};
use tidepool_core::wipe::{wiping, WipeOnFree};
use tidepool_core::Input;

/// Blocks of at least this many bytes are looked at (scrypt's V below).
const LARGE: usize = 1 << 20;

/// System's blocks; counts large blocks freed, and those of them with a
/// byte not zero.
struct Watch {
    large: AtomicUsize,
    dirty: AtomicUsize,
}

// SAFETY: System's, with a read of a large block (live until the
// dealloc below) before it is freed.
unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= LARGE {
            // SAFETY: live, layout.size() bytes, until freed below.
            let bytes = unsafe { std::slice::from_raw_parts(ptr, layout.size()) };
            self.large.fetch_add(1, Ordering::SeqCst);
            if bytes.iter().any(|&b| b != 0) {
                self.dirty.fetch_add(1, Ordering::SeqCst);
            }
        }
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: WipeOnFree<Watch> =
    WipeOnFree(Watch { large: AtomicUsize::new(0), dirty: AtomicUsize::new(0) });

fn counts() -> (usize, usize) {
    (ALLOCATOR.0.large.load(Ordering::SeqCst), ALLOCATOR.0.dirty.load(Ordering::SeqCst))
}

// One test in this binary: the counts are the process's.
#[test]
fn scrypt_memory_is_zeroed_before_it_is_freed_and_a_control_is_not() {
    // The control: a large block freed outside `wiping` is seen dirty.
    let (large, dirty) = counts();
    drop(std::hint::black_box(vec![0xA5u8; LARGE]));
    assert_eq!(counts(), (large + 1, dirty + 1));
    // Inside it, zeroed.
    wiping(|| drop(std::hint::black_box(vec![0xA5u8; LARGE])));
    assert_eq!(counts(), (large + 2, dirty + 1));

    // node:crypto's default costs: V is 16 MiB.
    let n = RawValue::Number;
    let raw = RawParams::new(vec![
        ("salt", RawValue::Text("salt")),
        ("N", n(16384.0)),
        ("r", n(8.0)),
        ("p", n(1.0)),
        ("keylen", n(64.0)),
    ]);
    let scrypt = get(find("scrypt").unwrap()).unwrap();
    let params = scrypt.params(&raw).unwrap();
    let flag = AtomicBool::new(false);
    let mut out = Sink::new(usize::MAX);
    let (large, dirty) = counts();
    let input = Input::Owned(b"password".to_vec());
    scrypt.run(&params, &input, &RunContext::new(&flag), &mut out).unwrap();
    let (after, dirty_after) = counts();
    assert!(after > large, "scrypt freed no large block");
    assert_eq!(dirty_after, dirty, "a large block scrypt freed was not zeroed");
    assert_eq!(out.into_output().as_bytes().len(), 64);
}
