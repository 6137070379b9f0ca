//! Where a kernel writes: a [`Sink`] of any length, bounded by a limit, and
//! the [`Output`] it becomes.
//!
//! Small results (every digest) stay in [`INLINE`] bytes on the stack and
//! travel inline in the completion, so a tiny task allocates nothing. Past
//! that the sink *spills* into one `Vec<u8>` that grows geometrically (never
//! past the limit) and is handed to the binding as is: the bytes the kernel
//! wrote are the bytes JavaScript gets, with no copy in between.

use super::KernelError;

/// Bytes a result may have and still travel inline (SHA-512 is the largest digest).
pub const INLINE: usize = 64;

/// A kernel's result.
#[derive(Clone, PartialEq, Eq)]
pub struct Output(Repr);

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Spilled(Vec<u8>),
}

impl Output {
    /// An empty result (used by `spin` and `sleep`).
    pub const EMPTY: Output = Output(Repr::Inline { len: 0, bytes: [0; INLINE] });

    /// A result holding a copy of `bytes` (inline when it fits).
    pub fn from_slice(bytes: &[u8]) -> Output {
        if bytes.len() <= INLINE {
            let mut inline = [0; INLINE];
            inline[..bytes.len()].copy_from_slice(bytes);
            Output(Repr::Inline { len: bytes.len() as u8, bytes: inline })
        } else {
            Output(Repr::Spilled(bytes.to_vec()))
        }
    }

    /// The result bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..*len as usize],
            Repr::Spilled(v) => v,
        }
    }

    /// The spilled vector, if the result did not fit inline; the inline
    /// result back otherwise.
    pub fn into_spilled(self) -> Result<Vec<u8>, Output> {
        match self.0 {
            Repr::Spilled(v) => Ok(v),
            inline => Err(Output(inline)),
        }
    }

    /// True when the result lives in its own heap vector.
    pub fn is_spilled(&self) -> bool {
        matches!(self.0, Repr::Spilled(_))
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// An append-only byte buffer a kernel writes its output into.
///
/// Kernels either copy bytes in ([`Sink::write`]) or, like a codec that
/// writes in place, ask for room ([`Sink::unfilled`]) and say how much they
/// used ([`Sink::commit`]). Neither ever holds more than `limit` bytes: a
/// write that would pass it fails with [`KernelError::TooLarge`] before any
/// memory is reserved for it.
///
/// A sink may also have a *pause point* below its limit: the room a stream's
/// reader has. A kernel that can stop in the middle of its input (a codec,
/// see [`Transform::update_until`](super::Transform::update_until)) stops
/// once [`should_pause`](Sink::should_pause) says so, and the stream goes on
/// from there when the reader wants more. Nothing else changes: a kernel
/// that never stops still may write up to the limit.
pub struct Sink {
    /// Bytes written while the output still fits inline.
    inline: [u8; INLINE],
    /// Output length so far (inline or spilled).
    len: usize,
    /// Once spilled: every byte of the output, then zeroed spare room
    /// (`spill.len()` is how much is initialized, `len` how much is output).
    spill: Vec<u8>,
    spilled: bool,
    limit: usize,
    /// Output length at which a kernel that can stop should stop.
    pause_at: usize,
    /// A writer that holds pieces of output made already may stop between
    /// two of them (see [`stop_between_pieces`](Sink::stop_between_pieces)).
    between_pieces: bool,
}

/// The least room `unfilled` hands out once spilled, so codecs that ask for
/// "some" room do not crawl forward a few bytes at a time.
const MIN_ROOM: usize = 16 * 1024;

impl Sink {
    /// An empty sink that refuses to hold more than `limit` bytes.
    pub fn new(limit: usize) -> Sink {
        Sink {
            inline: [0; INLINE],
            len: 0,
            spill: Vec::new(),
            spilled: false,
            limit,
            pause_at: usize::MAX,
            between_pieces: false,
        }
    }

    /// An empty sink that refuses to hold more than `limit` bytes, and whose
    /// writer should stop where it can once it holds `pause_at` (at least 1).
    pub fn with_pause(limit: usize, pause_at: usize) -> Sink {
        Sink { pause_at: pause_at.max(1), ..Sink::new(limit) }
    }

    /// Lets a writer that holds pieces of output made already (a stream's
    /// blocks) stop between two of them, as at the pause point, so that
    /// each goes on as it was made ([`adopt`](Sink::adopt)): for a stream's
    /// step that pauses or ends once that output is written anyway.
    pub fn stop_between_pieces(&mut self) {
        self.between_pieces = true;
    }

    /// Whether a writer may stop between two pieces of output made already.
    pub fn stops_between_pieces(&self) -> bool {
        self.between_pieces
    }

    /// True once the output has reached the pause point: a kernel that can
    /// stop in the middle of its input should stop now.
    pub fn should_pause(&self) -> bool {
        self.len >= self.pause_at
    }

    /// Bytes that may be written before the pause point (0 once reached).
    pub fn before_pause(&self) -> usize {
        self.pause_at.saturating_sub(self.len)
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Moves the limit: a packed task's sink gives each input's output a
    /// limit of its own past what it already holds.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// The most bytes this sink will hold.
    pub fn limit(&self) -> usize {
        self.limit
    }

    fn too_large(&self) -> KernelError {
        KernelError::TooLarge { limit: self.limit }
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), KernelError> {
        let end = self
            .len
            .checked_add(bytes.len())
            .filter(|&e| e <= self.limit)
            .ok_or_else(|| self.too_large())?;
        if !self.spilled && end <= INLINE {
            self.inline[self.len..end].copy_from_slice(bytes);
        } else {
            self.spill_inline(end);
            self.grow_to(end);
            // Overwrite the initialized room `unfilled` left, then append
            // the rest: no byte is zeroed only to be overwritten.
            let init = self.spill.len().min(end);
            let (over, rest) = bytes.split_at(init - self.len);
            self.spill[self.len..init].copy_from_slice(over);
            self.spill.extend_from_slice(rest);
        }
        self.len = end;
        Ok(())
    }

    /// Takes `output` as the whole output so far, without a copy, when
    /// nothing was written yet and it fits under the limit and the pause
    /// point; otherwise hands it back.
    pub fn adopt(&mut self, output: Output) -> Result<(), Output> {
        let len = output.as_bytes().len();
        if self.len != 0 || len > self.limit || len > self.before_pause() {
            return Err(output);
        }
        match output.into_spilled() {
            Ok(bytes) => {
                self.spill = bytes;
                self.spilled = true;
                self.len = len;
                Ok(())
            }
            Err(inline) => self.write(inline.as_bytes()).map_err(|_| inline),
        }
    }

    /// Room after the output for at least `at_least` bytes (fewer only when
    /// the limit is closer; an error if no byte is left under it). The
    /// room is initialized; write into its front, then [`commit`](Sink::commit).
    pub fn unfilled(&mut self, at_least: usize) -> Result<&mut [u8], KernelError> {
        let left = self.limit - self.len;
        if left == 0 && at_least > 0 {
            return Err(self.too_large());
        }
        let want = at_least.min(left);
        if !self.spilled && self.len + want <= INLINE {
            return Ok(&mut self.inline[self.len..self.len + want]);
        }
        let room = want.max(MIN_ROOM).min(left);
        self.make_room(self.len + room);
        let end = self.spill.len();
        Ok(&mut self.spill[self.len..end])
    }

    /// Like [`unfilled`](Sink::unfilled) for exactly `n` bytes, for a
    /// large output written at once by several threads: on an empty sink
    /// the room is memory the allocator hands out zeroed (its pages are
    /// mapped as the writers touch them, not cleared first by this
    /// thread). An error if `n` is past the limit.
    pub fn unfilled_exact(&mut self, n: usize) -> Result<&mut [u8], KernelError> {
        if n > self.limit - self.len {
            return Err(self.too_large());
        }
        if self.len == 0 && n > INLINE && self.spill.capacity() < n {
            self.spilled = true;
            self.spill = vec![0; n];
            return Ok(&mut self.spill[..n]);
        }
        let room = self.unfilled(n)?;
        Ok(&mut room[..n])
    }

    /// Marks the first `n` bytes of the last [`unfilled`](Sink::unfilled)
    /// room as output.
    ///
    /// # Panics
    /// If `n` is more than that room (a kernel bug, caught like any panic).
    pub fn commit(&mut self, n: usize) {
        let room = if self.spilled { self.spill.len() } else { INLINE.min(self.limit) };
        assert!(self.len + n <= room, "Sink::commit past the room unfilled() gave");
        self.len += n;
    }

    /// Reserves memory for `additional` more bytes of output (cut to the
    /// limit), for kernels that know their output size: one allocation, and
    /// no regrowth copies.
    pub fn reserve(&mut self, additional: usize) {
        let end = self.len.saturating_add(additional).min(self.limit);
        if self.spilled || end > INLINE {
            self.spill_inline(end);
            if end > self.spill.capacity() {
                self.spill.reserve_exact(end - self.spill.len());
            }
        }
    }

    /// Moves the inline bytes to the heap the first time the output outgrows
    /// them, with capacity for `end` bytes.
    fn spill_inline(&mut self, end: usize) {
        if !self.spilled {
            self.spilled = true;
            self.spill.reserve_exact(end.max(2 * INLINE).min(self.limit));
            self.spill.extend_from_slice(&self.inline[..self.len]);
        }
    }

    /// Makes the spill vector's capacity at least `end`. Growth doubles,
    /// capped by the limit, so memory stays within 2× of the output and
    /// never past the limit.
    fn grow_to(&mut self, end: usize) {
        if end > self.spill.capacity() {
            let grown = end.max(self.spill.capacity().saturating_mul(2)).min(self.limit);
            self.spill.reserve_exact(grown - self.spill.len());
        }
    }

    /// Makes the spill vector hold at least `end` initialized bytes (the
    /// room `unfilled` hands out).
    fn make_room(&mut self, end: usize) {
        self.spill_inline(end);
        if end > self.spill.len() {
            self.grow_to(end);
            self.spill.resize(end, 0);
        }
    }

    /// The output written: inline whenever it fits (even if it was spilled
    /// on the way), so a spilled output is always longer than [`INLINE`].
    pub fn into_output(mut self) -> Output {
        if self.spilled && self.len <= INLINE {
            return Output::from_slice(&self.spill[..self.len]);
        }
        if self.spilled {
            self.spill.truncate(self.len);
            // A reservation made on a guess (a compressor's quarter of its
            // input) may be far larger than the output; the result lives as
            // long as JavaScript keeps it, so give the rest back (a shrinking
            // realloc, in place for large blocks).
            if self.spill.capacity() - self.len > self.len / 2 {
                self.spill.shrink_to_fit();
            }
            Output(Repr::Spilled(self.spill))
        } else {
            Output(Repr::Inline { len: self.len as u8, bytes: self.inline })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adopt_takes_an_output_whole_into_an_empty_sink_only() {
        let spilled = |byte: u8, len: usize| Output(Repr::Spilled(vec![byte; len]));
        // Its memory, not a copy.
        let made = spilled(5, 1000);
        let at = made.as_bytes().as_ptr();
        let mut sink = Sink::with_pause(usize::MAX, 1000);
        sink.adopt(made).unwrap();
        assert!(sink.should_pause());
        assert_eq!(sink.into_output().as_bytes().as_ptr(), at);
        // What is written after it follows it.
        let mut sink = Sink::new(usize::MAX);
        sink.adopt(spilled(5, 1000)).unwrap();
        sink.write(b"after").unwrap();
        let out = sink.into_output();
        assert_eq!(&out.as_bytes()[..1000], &[5; 1000][..]);
        assert_eq!(&out.as_bytes()[1000..], b"after");
        // Handed back: into a sink that holds output, past its pause point,
        // past its limit.
        let mut holding = Sink::new(usize::MAX);
        holding.write(b"x").unwrap();
        assert!(holding.adopt(spilled(1, 100)).is_err());
        assert!(Sink::with_pause(usize::MAX, 99).adopt(spilled(1, 100)).is_err());
        assert!(Sink::new(99).adopt(spilled(1, 100)).is_err());
        // An inline output is copied in.
        let mut sink = Sink::new(usize::MAX);
        sink.adopt(Output::from_slice(b"small")).unwrap();
        assert_eq!(sink.into_output().as_bytes(), b"small");
    }

    #[test]
    fn small_output_stays_inline() {
        let mut sink = Sink::new(usize::MAX);
        sink.write(b"abc").unwrap();
        sink.write(&[7; 61]).unwrap();
        let out = sink.into_output();
        assert!(!out.is_spilled());
        assert_eq!(out.as_bytes().len(), INLINE);
        assert_eq!(&out.as_bytes()[..3], b"abc");
    }

    #[test]
    fn large_output_spills_once_and_keeps_every_byte() {
        let mut sink = Sink::new(usize::MAX);
        let mut expected = Vec::new();
        for i in 0..1000u32 {
            let piece: Vec<u8> = (0..(i % 97)).map(|j| (i + j) as u8).collect();
            sink.write(&piece).unwrap();
            expected.extend_from_slice(&piece);
        }
        let out = sink.into_output();
        assert!(out.is_spilled());
        assert_eq!(out.as_bytes(), &expected[..]);
    }

    #[test]
    fn writes_in_place_through_unfilled_and_commit() {
        let mut sink = Sink::new(usize::MAX);
        let room = sink.unfilled(10).unwrap();
        room[..4].copy_from_slice(b"head");
        sink.commit(4);
        let room = sink.unfilled(100_000).unwrap();
        assert!(room.len() >= 100_000);
        room[..3].copy_from_slice(b"big");
        sink.commit(3);
        sink.write(b"!").unwrap();
        assert_eq!(sink.into_output().as_bytes(), b"headbig!");
    }

    #[test]
    fn the_limit_is_never_passed() {
        let mut sink = Sink::new(100);
        sink.write(&[1; 60]).unwrap();
        assert_eq!(sink.write(&[2; 41]), Err(KernelError::TooLarge { limit: 100 }));
        sink.write(&[2; 40]).unwrap();
        assert_eq!(sink.unfilled(1), Err(KernelError::TooLarge { limit: 100 }));
        assert!(sink.spill.capacity() <= 100);
        assert_eq!(sink.into_output().as_bytes().len(), 100);

        let mut sink = Sink::new(1000);
        assert_eq!(sink.unfilled(5000).unwrap().len(), 1000, "room is cut to the limit");
        let mut tiny = Sink::new(16);
        assert!(tiny.write(&[0; 32]).is_err(), "a digest longer than the limit is refused");
    }

    #[test]
    fn exact_room_is_zeroed_and_bounded_whatever_came_before() {
        let mut s = Sink::new(1 << 20);
        let room = s.unfilled_exact(100_000).unwrap();
        assert!(room.len() == 100_000 && room.iter().all(|&b| b == 0));
        room[99_999] = 7;
        s.commit(100_000);
        assert!(matches!(s.unfilled_exact(1 << 20), Err(KernelError::TooLarge { .. })));
        let room = s.unfilled_exact(10).unwrap();
        room.copy_from_slice(b"0123456789");
        s.commit(10);
        let out = s.into_output();
        assert_eq!(out.as_bytes().len(), 100_010);
        assert_eq!(&out.as_bytes()[99_999..], b"\x070123456789");
        let mut small = Sink::new(8);
        small.write(b"ab").unwrap();
        assert_eq!(small.unfilled_exact(6).unwrap().len(), 6);
        assert!(small.unfilled_exact(7).is_err());
    }

    #[test]
    fn reserve_allocates_once_for_a_known_size() {
        let mut sink = Sink::new(usize::MAX);
        sink.reserve(10_000);
        let at = sink.spill.as_ptr();
        for _ in 0..100 {
            sink.write(&[9; 100]).unwrap();
        }
        assert_eq!(sink.spill.as_ptr(), at, "no regrowth");
        assert_eq!(sink.into_output().as_bytes(), &[9; 10_000][..]);
        let mut small = Sink::new(usize::MAX);
        small.reserve(8);
        assert!(!small.spilled, "a small reservation stays inline");
        let mut shrunk = Sink::new(usize::MAX);
        shrunk.reserve(1000);
        shrunk.write(b"short").unwrap();
        assert!(
            !shrunk.into_output().is_spilled(),
            "a short output comes back inline even after a reservation"
        );
    }

    #[test]
    #[should_panic(expected = "past the room")]
    fn committing_more_than_the_room_panics() {
        let mut sink = Sink::new(usize::MAX);
        let _ = sink.unfilled(4).unwrap();
        sink.commit(65);
    }
}
