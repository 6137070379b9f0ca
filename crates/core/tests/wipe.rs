//! scrypt's memory, which its crate allocates and frees itself, is zeroed
//! before it is freed when `WipeOnFree` is the global allocator, as it is in
//! the addon. This binary installs it over an allocator that looks at
//! blocks of V's size as they are freed. (Reading them keeps the zeroes
//! alive whatever the compiler does; that they stay without the reading is
//! wipe.rs's barrier.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tidepool_core::kernels::{find, get, RawParams, RawValue, RunContext, Sink};
use tidepool_core::wipe::{wiping, WipeOnFree};
use tidepool_core::Input;

/// The size of scrypt's V at node:crypto's default costs (128 × r × N, r =
/// 8, N = 16384): only blocks of exactly this size are looked at (not the
/// kernel's size check, which it allocates unwritten and frees).
const V_BYTES: usize = 128 * 8 * 16384;

/// System's blocks; counts the blocks of V_BYTES freed, and those of them
/// with a byte not zero.
struct Watch {
    freed: AtomicUsize,
    dirty: AtomicUsize,
}

// SAFETY: System's, with a read of a block of V_BYTES (live until the
// dealloc below; every such block here is written whole before it is
// freed) before it is freed.
unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() == V_BYTES {
            // SAFETY: live, layout.size() bytes, until freed below.
            let bytes = unsafe { std::slice::from_raw_parts(ptr, layout.size()) };
            self.freed.fetch_add(1, Ordering::SeqCst);
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
    WipeOnFree(Watch { freed: AtomicUsize::new(0), dirty: AtomicUsize::new(0) });

fn counts() -> (usize, usize) {
    (ALLOCATOR.0.freed.load(Ordering::SeqCst), ALLOCATOR.0.dirty.load(Ordering::SeqCst))
}

// One test in this binary: the counts are the process's.
#[test]
fn scrypt_memory_is_zeroed_before_it_is_freed_and_a_control_is_not() {
    // The control: a block freed outside `wiping` is seen dirty.
    let (freed, dirty) = counts();
    drop(std::hint::black_box(vec![0xA5u8; V_BYTES]));
    assert_eq!(counts(), (freed + 1, dirty + 1));
    // Inside it, zeroed.
    wiping(|| drop(std::hint::black_box(vec![0xA5u8; V_BYTES])));
    assert_eq!(counts(), (freed + 2, dirty + 1));

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
    let (freed, dirty) = counts();
    let input = Input::Owned(b"password".to_vec());
    scrypt.run(&params, &input, &RunContext::new(&flag), &mut out).unwrap();
    // V, and nothing else of its size: freed once, zeroed.
    assert_eq!(counts(), (freed + 1, dirty), "scrypt's V, freed once and zeroed");
    assert_eq!(out.into_output().as_bytes().len(), 64);
}
