//! Memory a dependency frees without wiping it. scrypt's crate allocates
//! its V and B (secret-derived, 128 × r × (N + p) bytes) and frees them as
//! they are; nothing outside the crate can reach them before it does. The
//! addon's global allocator is [`WipeOnFree`]: while a thread runs inside
//! [`wiping`], every block it frees (or moves away from in a `realloc`) is
//! zeroed first, then handed back to the allocator beneath. Elsewhere, and
//! on every other thread, it only asks one thread-local flag.
//!
//! Without [`WipeOnFree`] installed (the crates' own test binaries),
//! [`wiping`] only runs its closure.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

thread_local! {
    // const, no destructor: readable at any point of a thread's life,
    // teardown included.
    static WIPING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every block this thread frees meanwhile wiped first (when
/// [`WipeOnFree`] is the global allocator). Nested calls and panics leave
/// the flag as it was before the call.
pub fn wiping<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            WIPING.with(|w| w.set(self.0));
        }
    }
    let _restore = Restore(WIPING.with(|w| w.replace(true)));
    f()
}

fn wiping_now() -> bool {
    WIPING.try_with(Cell::get).unwrap_or(false)
}

/// A global allocator over `A` that zeroes what a thread inside [`wiping`]
/// frees. `WipeOnFree(std::alloc::System)` in the addon.
pub struct WipeOnFree<A>(pub A);

/// Zeroes `len` bytes at `ptr`, stores the compiler may not drop as dead
/// although the block is freed next.
///
/// # Safety
/// `ptr` is valid for writes of `len` bytes.
unsafe fn wipe(ptr: *mut u8, len: usize) {
    // SAFETY: the caller's promise.
    unsafe { ptr.write_bytes(0, len) };
    // The zeroes must reach memory: a free() right after lets the compiler
    // treat them as dead stores. An asm block given the pointer, without
    // `nomem` or `readonly`, may read whatever it reaches, so the stores
    // before it stay (black_box promises this only as best effort).
    #[cfg(all(
        not(miri),
        any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")
    ))]
    // SAFETY: an empty asm block: it reads no register but the one given,
    // writes nothing, and keeps the stack and flags.
    unsafe {
        std::arch::asm!("/* {0} */", in(reg) ptr, options(nostack, preserves_flags));
    }
    #[cfg(any(
        miri,
        not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64"))
    ))]
    std::hint::black_box(ptr);
}

// SAFETY: every method hands `A` exactly the pointers and layouts the
// GlobalAlloc contract hands it, after at most zeroing a block that is
// still allocated and about to be freed; realloc while wiping is the
// trait's own default (allocate, copy the common prefix, free the old
// block), so the layout rules are `A`'s.
unsafe impl<A: GlobalAlloc> GlobalAlloc for WipeOnFree<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given (layout has a non-zero size).
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given.
        unsafe { self.0.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if wiping_now() {
            // SAFETY: `ptr` is a live block of `layout.size()` bytes from
            // this allocator (the caller's promise), freed only below.
            unsafe { wipe(ptr, layout.size()) };
        }
        // SAFETY: forwarded as given.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !wiping_now() {
            // SAFETY: forwarded as given.
            return unsafe { self.0.realloc(ptr, layout, new_size) };
        }
        // Not A's realloc: it may move the block and free the old one
        // unwiped. The caller promises new_size, rounded up to the
        // alignment, does not overflow isize, so this layout is valid.
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: new_layout has a non-zero size (new_size > 0, the
        // caller's promise).
        let new = unsafe { self.0.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live and distinct, each at least
            // min(old, new) bytes long; the old one is then wiped and freed
            // as dealloc would.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::System;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// System's blocks; counts the bytes of freed blocks that were not
    /// all zero when freed.
    struct Watch {
        dirty: AtomicUsize,
    }

    // SAFETY: System's, with a read of the block (still live) before freeing.
    unsafe impl GlobalAlloc for Watch {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: forwarded.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: the block is live and layout.size() long until freed below.
            let bytes = unsafe { std::slice::from_raw_parts(ptr, layout.size()) };
            let dirty = bytes.iter().filter(|&&b| b != 0).count();
            self.dirty.fetch_add(dirty, Ordering::Relaxed);
            // SAFETY: forwarded.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    fn filled(a: &WipeOnFree<Watch>, layout: Layout) -> *mut u8 {
        // SAFETY: a non-zero layout; the block is written within its size.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            p.write_bytes(0xA5, layout.size());
            p
        }
    }

    #[test]
    fn blocks_freed_inside_wiping_are_zeroed_and_others_are_not() {
        let a = WipeOnFree(Watch { dirty: AtomicUsize::new(0) });
        let layout = Layout::from_size_align(4096, 8).unwrap();
        let p = filled(&a, layout);
        // SAFETY: p is a live block of `layout` from `a`.
        wiping(|| unsafe { a.dealloc(p, layout) });
        assert_eq!(a.0.dirty.load(Ordering::Relaxed), 0);
        let p = filled(&a, layout);
        // SAFETY: as above.
        unsafe { a.dealloc(p, layout) };
        assert_eq!(a.0.dirty.load(Ordering::Relaxed), 4096);
    }

    #[test]
    fn a_block_moved_by_realloc_inside_wiping_leaves_nothing_behind() {
        let a = WipeOnFree(Watch { dirty: AtomicUsize::new(0) });
        let layout = Layout::from_size_align(100, 8).unwrap();
        let p = filled(&a, layout);
        // SAFETY: p is live, of `layout`; 300 bytes fit any isize.
        let q = wiping(|| unsafe { a.realloc(p, layout, 300) });
        assert!(!q.is_null());
        assert_eq!(a.0.dirty.load(Ordering::Relaxed), 0, "the old block");
        // SAFETY: q is live, 300 bytes, its first 100 copied from p.
        let kept = unsafe { std::slice::from_raw_parts(q, 100) }.iter().all(|&b| b == 0xA5);
        assert!(kept);
        let bigger = Layout::from_size_align(300, 8).unwrap();
        // SAFETY: q is live, of `bigger`.
        wiping(|| unsafe { a.dealloc(q, bigger) });
        assert_eq!(a.0.dirty.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_flag_is_restored_after_nesting_and_panics() {
        assert!(!wiping_now());
        wiping(|| {
            wiping(|| assert!(wiping_now()));
            assert!(wiping_now());
            let caught = std::panic::catch_unwind(|| wiping(|| panic!("in a kernel")));
            assert!(caught.is_err());
            assert!(wiping_now());
        });
        assert!(!wiping_now());
    }
}
