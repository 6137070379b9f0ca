//! Borrowed views of JavaScript memory that a worker thread reads in place.
//!
//! An [`Input`] is a list of raw `(pointer, length)` slices. It is built on the
//! JS thread from Buffers / TypedArrays / DataViews / ArrayBuffers and read on a
//! worker thread without copying. The binding layer guarantees the memory stays
//! valid: the JS wrapper keeps every posted binary reachable until its task has
//! settled, and the environment-teardown hook joins the worker threads before the
//! JS heap goes away.

use std::fmt;

/// One contiguous byte range owned by someone else (normally a V8 backing store).
#[derive(Clone, Copy)]
pub struct RawSlice {
    /// First byte. May be dangling when `len == 0`.
    ptr: *const u8,
    /// Number of bytes.
    len: usize,
}

impl RawSlice {
    /// Wraps a raw range.
    ///
    /// # Safety
    /// The caller promises that `ptr..ptr+len` stays readable and is not written
    /// to until every [`Input`] holding this slice has been dropped.
    pub unsafe fn new(ptr: *const u8, len: usize) -> Self {
        RawSlice { ptr, len }
    }

    /// A slice that borrows a `'static` byte string (tests, benchmarks).
    pub fn from_static(bytes: &'static [u8]) -> Self {
        RawSlice { ptr: bytes.as_ptr(), len: bytes.len() }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes `from..to` of this slice, under the promise made for it.
    ///
    /// # Panics
    /// Unless `from <= to <= self.len()`.
    pub fn range(&self, from: usize, to: usize) -> RawSlice {
        assert!(from <= to && to <= self.len, "bytes {from}..{to} of {}", self.len);
        // `wrapping_add`: no pointer arithmetic is asked of a dangling
        // pointer (an empty slice's); within the range it equals `add`.
        RawSlice { ptr: self.ptr.wrapping_add(from), len: to - from }
    }

    /// True when the slice holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes (valid under the promise made to [`RawSlice::new`]).
    pub fn as_slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `RawSlice::new` made the caller promise that the range stays
        // valid and unaliased by writers while any Input holding it lives; the
        // returned borrow is tied to `&self`, which lives inside such an Input.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

// SAFETY: a RawSlice is only a read-only view; the memory it points at is kept
// alive and unmutated by the contract of `RawSlice::new`, so reading it from
// another thread is the same as sharing a `&[u8]` (which is Send + Sync).
unsafe impl Send for RawSlice {}
// SAFETY: see the Send impl above; no interior mutability is reachable.
unsafe impl Sync for RawSlice {}

/// The binary part of one task: a single slice or several read as if concatenated.
#[derive(Clone)]
pub enum Input {
    /// The common case: one Buffer / TypedArray / ArrayBuffer.
    One(RawSlice),
    /// An array of binaries, hashed as their concatenation without copying them.
    Many(Box<[RawSlice]>),
    /// Bytes owned by Rust (tests and the Rust-side benchmark).
    Owned(Vec<u8>),
}

impl Input {
    /// Total length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Input::One(s) => s.len(),
            Input::Many(parts) => parts.iter().map(RawSlice::len).sum(),
            Input::Owned(v) => v.len(),
        }
    }

    /// The bytes as one slice, when they are one (not an array of binaries).
    pub fn contiguous(&self) -> Option<&[u8]> {
        match self {
            Input::One(s) => Some(s.as_slice()),
            Input::Many(_) => None,
            Input::Owned(v) => Some(v),
        }
    }

    /// True when there are no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` on each non-empty part in order.
    pub fn for_each_part<E>(&self, mut f: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        match self {
            Input::One(s) => f(s.as_slice()),
            Input::Many(parts) => {
                for p in parts.iter() {
                    if !p.is_empty() {
                        f(p.as_slice())?;
                    }
                }
                Ok(())
            }
            Input::Owned(v) => f(v),
        }
    }

    /// The non-empty parts in order, as slices.
    pub fn parts(&self) -> Vec<&[u8]> {
        match self {
            Input::One(s) => vec![s.as_slice()],
            Input::Many(parts) => {
                parts.iter().filter(|p| !p.is_empty()).map(RawSlice::as_slice).collect()
            }
            Input::Owned(v) => vec![v],
        }
    }

    /// Copies the first `out.len()` bytes (or fewer) into `out`; returns how many.
    pub fn read_prefix(&self, out: &mut [u8]) -> usize {
        let mut filled = 0;
        let _ = self.for_each_part(|part| {
            let n = part.len().min(out.len() - filled);
            out[filled..filled + n].copy_from_slice(&part[..n]);
            filled += n;
            if filled == out.len() {
                Err(())
            } else {
                Ok(())
            }
        });
        filled
    }
}

/// The bytes `from..to` of `parts` read as one (`to` may pass their end),
/// as slices of them, none empty.
pub fn slice_parts<'a>(parts: &[&'a [u8]], from: usize, to: usize) -> Vec<&'a [u8]> {
    let mut pieces = Vec::with_capacity(parts.len());
    let mut at = 0;
    for part in parts {
        let (start, end) = (at, at + part.len());
        at = end;
        let (a, b) = (from.max(start), to.min(end));
        if a < b {
            pieces.push(&part[a - start..b - start]);
        }
    }
    pieces
}

impl fmt::Debug for RawSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawSlice({} bytes)", self.len)
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Input({} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_reads_as_concatenation() {
        let input = Input::Many(
            vec![
                RawSlice::from_static(b"ab"),
                RawSlice::from_static(b""),
                RawSlice::from_static(b"cde"),
            ]
            .into_boxed_slice(),
        );
        assert_eq!(input.len(), 5);
        let mut seen = Vec::new();
        input
            .for_each_part::<()>(|p| {
                seen.extend_from_slice(p);
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, b"abcde");
        let mut prefix = [0u8; 3];
        assert_eq!(input.read_prefix(&mut prefix), 3);
        assert_eq!(&prefix, b"abc");
        let mut long = [0u8; 8];
        assert_eq!(input.read_prefix(&mut long), 5);
    }
}
