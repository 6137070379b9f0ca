//! One-shot `gunzip` of a whole gzip member with libdeflate: 1.5x zlib-rs
//! per core on 64 KiB JSON (BENCHMARKS.md, "One big input"), as it
//! decodes into an output of the size the trailer gives, in one call.
//!
//! Only where that is safe and the same: one member exactly (a
//! multi-member input, trailing bytes, a cut or corrupt one go to zlib-rs,
//! which reads them as node:zlib does and names any error in its words),
//! the default window, no dictionary, an input small enough that the
//! uninterruptible call ends within milliseconds, and an output within the
//! task's limit and deflate's largest ratio.

use std::cell::RefCell;
use std::ptr::NonNull;

use libdeflate_sys as sys;

use crate::kernels::Sink;

/// Most compressed bytes decoded in one uncancellable call (~1 ms).
pub const MAX_INPUT: usize = 1 << 20;
/// Most bytes of output it allocates on the trailer's word.
pub const MAX_OUTPUT: usize = 16 << 20;
/// Deflate's largest expansion (a 258-byte match per 2 bits, about).
const MAX_RATIO: usize = 1032;
/// A gzip member's header and trailer, at the least.
const MIN_MEMBER: usize = 18;

/// A thread's libdeflate decompressor (about 10 KiB; made once).
struct Decompressor(NonNull<sys::libdeflate_decompressor>);

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: made by libdeflate_alloc_decompressor, freed once here.
        unsafe { sys::libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

thread_local! {
    static DECOMPRESSOR: RefCell<Option<Decompressor>> = const { RefCell::new(None) };
}

/// Decodes `input` into `out` if it is exactly one gzip member within the
/// bounds above: true once the output is written; false (and `out`
/// untouched) for anything else, which the caller runs through zlib-rs.
pub fn gunzip(input: &[u8], out: &mut Sink) -> bool {
    if !(MIN_MEMBER..=MAX_INPUT).contains(&input.len()) {
        return false;
    }
    // A header CRC (FHCRC), which libdeflate does not check, or reserved
    // flags: zlib-rs says what is wrong with them, as node:zlib does.
    const FHCRC: u8 = 0x02;
    const RESERVED: u8 = 0xe0;
    if input[3] & (FHCRC | RESERVED) != 0 {
        return false;
    }
    let trailer: [u8; 4] = input[input.len() - 4..].try_into().expect("four bytes");
    let size = u32::from_le_bytes(trailer) as usize;
    if size > MAX_OUTPUT
        || size > input.len().saturating_mul(MAX_RATIO)
        || size > out.limit().saturating_sub(out.len())
    {
        return false;
    }
    let Ok(room) = out.unfilled(size) else { return false };
    if room.len() < size {
        return false;
    }
    let written = DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            // SAFETY: no arguments; a null return (out of memory) is checked.
            let made = unsafe { sys::libdeflate_alloc_decompressor() };
            *slot = Some(Decompressor(NonNull::new(made)?));
        }
        let decompressor = slot.as_ref()?.0.as_ptr();
        let (mut taken, mut written) = (0usize, 0usize);
        // SAFETY: a live decompressor used by this thread alone; `input`
        // is readable for its length and `room` writable for `size` bytes
        // (checked above), both for the whole call; libdeflate writes no
        // more than `size` bytes and reports what it took and wrote.
        let result = unsafe {
            sys::libdeflate_gzip_decompress_ex(
                decompressor,
                input.as_ptr().cast(),
                input.len(),
                room.as_mut_ptr().cast(),
                size,
                &mut taken,
                &mut written,
            )
        };
        let whole = result == sys::libdeflate_result_LIBDEFLATE_SUCCESS
            && taken == input.len()
            && written == size;
        whole.then_some(written)
    });
    match written {
        Some(n) => {
            out.commit(n);
            true
        }
        None => false,
    }
}
