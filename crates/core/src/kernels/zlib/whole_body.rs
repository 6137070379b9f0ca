//! A whole body compressed in one call by libdeflate: a one-shot `gzip`,
//! `deflate` or `deflateRaw` task, and a stream's body written whole
//! (`end(body)` on a fresh stream, what compression middleware does with a
//! response). libdeflate sees the whole input at once, which makes it
//! smaller output than zlib's at less CPU: each `level` is mapped to the
//! cheapest libdeflate level whose output is no larger than zlib-rs's at
//! that level (`LEVELS`; the measurement is in BENCHMARKS.md, "Compression:
//! whole bodies").
//!
//! Only where the output is the same stream zlib would write, decoded
//! alike: the default window (a smaller `windowBits` bounds distances
//! libdeflate does not), no dictionary, the default strategy, a finished
//! stream, and an input small enough that the uncancellable call ends
//! within milliseconds. Everything else is zlib-rs's.

use std::cell::RefCell;
use std::ptr::NonNull;

use libdeflate_sys as sys;

use super::Format;
use crate::kernels::Sink;

/// Most input compressed in one uncancellable call (about 4 ms at the
/// levels used, on one core of the machines in BENCHMARKS.md); a larger
/// input runs in blocks on several threads, or through zlib-rs in chunks.
pub const MAX_INPUT: usize = 1 << 20;

/// The libdeflate level for each zlib level 0..=9 (`-1` is 6), or 0 where
/// zlib-rs stays: level 0 (stored); level 1 (zlib-rs's quick strategy is
/// faster on JSON, its larger output what level 1 asks for); level 2
/// (libdeflate's 1 is larger on repetitive text, its 2 slower on JSON);
/// level 4 (libdeflate's 4 is a little larger on JSON, its 5 slower there).
const LEVELS: [i32; 10] = [0, 0, 0, 2, 0, 5, 5, 6, 6, 6];

/// The libdeflate level that stands for zlib's `level`, if libdeflate
/// takes it.
pub fn level_for(level: i32) -> Option<i32> {
    let zlib = if level == -1 { 6 } else { level };
    let mapped = *LEVELS.get(usize::try_from(zlib).ok()?)?;
    (mapped > 0).then_some(mapped)
}

/// A thread's libdeflate compressor of one level (made once, kept).
struct Compressor(NonNull<sys::libdeflate_compressor>);

impl Drop for Compressor {
    fn drop(&mut self) {
        // SAFETY: made by libdeflate_alloc_compressor, freed once here.
        unsafe { sys::libdeflate_free_compressor(self.0.as_ptr()) }
    }
}

thread_local! {
    /// By libdeflate level (1..=12): this thread's compressors.
    static COMPRESSORS: RefCell<[Option<Compressor>; 13]> = const { RefCell::new([const { None }; 13]) };
}

#[cfg(test)]
thread_local! {
    /// Tests that compare with zlib-rs's own output turn libdeflate off.
    static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with this thread's whole bodies left to zlib-rs (tests).
#[cfg(test)]
pub fn without<T>(f: impl FnOnce() -> T) -> T {
    OFF.with(|off| off.set(true));
    let result = f();
    OFF.with(|off| off.set(false));
    result
}

/// Compresses `input` whole into `out` in `format` at libdeflate `level`
/// (from [`level_for`]): true once the output is written; false (and
/// nothing of `out` committed) when it cannot be, which the caller runs
/// through zlib-rs (it then fails as zlib-rs fails, at the output limit).
pub(super) fn compress(format: Format, level: i32, input: &[u8], out: &mut Sink) -> bool {
    if input.len() > MAX_INPUT || !(1..=12).contains(&level) || format == Format::Auto {
        return false;
    }
    #[cfg(test)]
    if OFF.with(|off| off.get()) {
        return false;
    }
    COMPRESSORS.with(|cell| {
        let mut slots = cell.borrow_mut();
        let slot = &mut slots[level as usize];
        if slot.is_none() {
            // SAFETY: a level in 1..=12, as checked; a null return (out of
            // memory) is checked.
            let made = unsafe { sys::libdeflate_alloc_compressor(level) };
            match NonNull::new(made) {
                Some(made) => *slot = Some(Compressor(made)),
                None => return false,
            }
        }
        let Some(compressor) = slot.as_ref().map(|c| c.0.as_ptr()) else { return false };
        // SAFETY: a live compressor; the bound functions read nothing else.
        let bound = unsafe {
            match format {
                Format::Gzip => sys::libdeflate_gzip_compress_bound(compressor, input.len()),
                Format::Zlib => sys::libdeflate_zlib_compress_bound(compressor, input.len()),
                _ => sys::libdeflate_deflate_compress_bound(compressor, input.len()),
            }
        };
        let Ok(room) = out.unfilled(bound) else { return false };
        let available = room.len();
        // SAFETY: a live compressor used by this thread alone; `input` is
        // readable for its length and `room` writable for `available`
        // bytes, both for the whole call; libdeflate writes at most
        // `available` bytes and returns how many (0: they did not fit).
        let written = unsafe {
            let (inp, len, dst) = (input.as_ptr().cast(), input.len(), room.as_mut_ptr().cast());
            match format {
                Format::Gzip => sys::libdeflate_gzip_compress(compressor, inp, len, dst, available),
                Format::Zlib => sys::libdeflate_zlib_compress(compressor, inp, len, dst, available),
                _ => sys::libdeflate_deflate_compress(compressor, inp, len, dst, available),
            }
        };
        if written == 0 {
            return false;
        }
        if format == Format::Gzip {
            // The header's OS byte: libdeflate writes 255 (unknown); zlib,
            // and so node:zlib, writes 3 (Unix) on Linux and macOS.
            room[9] = 3;
        }
        out.commit(written);
        true
    })
}
