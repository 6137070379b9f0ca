//! The loop every streaming codec runs: hand the library the input and the
//! sink's free room, commit what it wrote, repeat until it has taken the
//! input (or ended its stream), looking at cancellation between calls.
//!
//! One subtlety lives here so that no codec gets it wrong: when the sink is
//! full (at `maxOutputBytes`), the library may still have nothing left to
//! write, but libraries only say so when given room. So the last call gets a
//! one-byte probe: only if the library fills it is the output really too
//! large. An output exactly at the limit is therefore allowed, and a bomb
//! stops one byte past it, before any memory beyond the limit is reserved.
//!
//! The loop also stops at the sink's pause point (a stream whose reader is
//! full): after a call that reached it, with the input still to take or
//! more to write, it returns [`Stop::Paused`], and the codec is called again
//! later with the rest. A stream's output so stays near its reader's
//! `highWaterMark` plus one call's worth ([`OUTPUT_STEP`]), whatever the
//! compression ratio.
//!
//! Here too are the errors every codec gives as node:zlib does, whatever
//! the format: the one for an input that stops inside a stream, and the
//! code of a corrupt input in a format zlib's codes do not cover.

use super::{Fed, KernelError, Parallel, RunContext, Sink, Transform};

/// What a streaming codec writes itself; every [`Transform`] call comes
/// from it, once for all the codecs (as flate2's `zio::Ops` serves every
/// format): `update`, `flush` and `finish` run the steps below until done,
/// so that a one-shot task and a stream's steps drive the same code.
pub(super) trait Codec: Send {
    /// See [`Transform::update_until`].
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError>;
    /// See [`Transform::finish_until`]; by default [`end`](Codec::end), at once.
    fn finish_until(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        self.end(out, ctx).map(|()| true)
    }
    /// The end of a codec that writes it at once, if at all: a decoder
    /// checks that its stream ended; the default does nothing.
    fn end(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        Ok(())
    }
    /// See [`Transform::flush_until`]; by default nothing is held back (a
    /// decoder's output is never waiting for a flush).
    fn flush_until(
        &mut self,
        _kind: u32,
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        Ok(true)
    }
    /// See [`Transform::reset`].
    fn reset(&mut self) -> Result<bool, KernelError> {
        Ok(false)
    }
    /// See [`Transform::allow_parts`].
    fn allow_parts(&mut self) -> bool {
        false
    }
    /// See [`Transform::update_parts`].
    fn update_parts(
        &mut self,
        _rest: &[&[u8]],
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
        _parallel: &dyn Parallel,
    ) -> Result<usize, KernelError> {
        Ok(0)
    }
    /// See [`Transform::pending`].
    fn pending(&self) -> usize {
        0
    }
}

impl<C: Codec> Transform for C {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        update_all(self, chunk, out, ctx)
    }

    fn finish(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        finish_all(self, out, ctx)
    }

    fn flush(
        &mut self,
        kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        flush_all(self, kind, out, ctx)
    }

    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        Codec::update_until(self, chunk, out, ctx)
    }

    fn finish_until(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        Codec::finish_until(self, out, ctx)
    }

    fn flush_until(
        &mut self,
        kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        Codec::flush_until(self, kind, out, ctx)
    }

    fn reset(&mut self) -> Result<bool, KernelError> {
        Codec::reset(self)
    }

    fn allow_parts(&mut self) -> bool {
        Codec::allow_parts(self)
    }

    fn update_parts(
        &mut self,
        rest: &[&[u8]],
        out: &mut Sink,
        ctx: &RunContext<'_>,
        parallel: &dyn Parallel,
    ) -> Result<usize, KernelError> {
        Codec::update_parts(self, rest, out, ctx, parallel)
    }

    fn pending(&self) -> usize {
        Codec::pending(self)
    }
}

/// Every compressor with its decoder.
pub const PAIRS: &[(&str, &str)] = &[
    ("gzip", "gunzip"),
    ("deflate", "inflate"),
    ("deflateRaw", "inflateRaw"),
    // unzip reads deflate's zlib format (and gzip's: see its own tests).
    ("deflate", "unzip"),
    ("brotliCompress", "brotliDecompress"),
    ("zstdCompress", "zstdDecompress"),
    ("lz4Compress", "lz4Decompress"),
];

/// The code of a corrupt input in a format zlib does not cover.
pub(super) const CORRUPT: &str = "ERR_TIDEPOOL_CORRUPT_INPUT";

/// node:zlib's error for an input that ends inside a stream, for every format.
pub(super) fn truncated() -> KernelError {
    KernelError::Format { code: "Z_BUF_ERROR", message: "unexpected end of file".to_owned() }
}

/// node:zlib's error for input after the end of a decoder's stream, when
/// told to refuse it (`rejectGarbageAfterEnd`).
pub(super) fn trailing_junk() -> KernelError {
    KernelError::Format {
        code: "ERR_TRAILING_JUNK_AFTER_STREAM_END",
        message: "Trailing junk found after the end of the compressed stream".to_owned(),
    }
}

/// How much output room to ask the sink for at a time: enough that a codec
/// is called a few times per input chunk, small enough that cancellation is
/// looked at often while a small input expands.
pub(crate) const OUTPUT_STEP: usize = 64 * 1024;

/// What one call of a codec did.
pub(super) struct Progress {
    /// Input bytes it took.
    pub consumed: usize,
    /// Output bytes it wrote.
    pub produced: usize,
    /// It reached the end of its stream (or frame, or member).
    pub ended: bool,
}

/// Why [`pump`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// The codec took all the input and wrote all it could; it wants more input.
    NeedsInput,
    /// The codec ended its stream; the input after it starts at `rest`.
    Ended { rest: usize },
    /// The sink reached its pause point with more to do: the input from
    /// `at` is still to take (or, when finishing, more is still to write).
    Paused { at: usize },
}

/// Runs `step` over `input` into `out` until the input is taken (and, when
/// `finishing`, until the stream ends or the codec makes no progress).
pub(super) fn pump(
    out: &mut Sink,
    ctx: &RunContext<'_>,
    input: &[u8],
    finishing: bool,
    step: impl FnMut(&[u8], &mut [u8]) -> Result<Progress, KernelError>,
) -> Result<Stop, KernelError> {
    pump_in(out, ctx, input, finishing, None, step)
}

/// Output buffers as node:zlib hands them to its library: `size` bytes
/// each (`chunkSize`), a call's room what is left of the current one, and
/// `total` the stream's output so far. Where a library's result depends on
/// its room (zstd reads a frame whole when the room holds it, and skips the
/// window check then; zlib's window check counts the call's own output),
/// calls with node:zlib's rooms give node:zlib's results.
pub(super) struct Rooms<'a> {
    pub size: usize,
    pub total: &'a mut u64,
}

/// [`pump`], each call's room at most what is left of `rooms`' buffer.
pub(super) fn pump_in(
    out: &mut Sink,
    ctx: &RunContext<'_>,
    input: &[u8],
    finishing: bool,
    mut rooms: Option<Rooms<'_>>,
    mut step: impl FnMut(&[u8], &mut [u8]) -> Result<Progress, KernelError>,
) -> Result<Stop, KernelError> {
    let mut at = 0;
    loop {
        // Up to the pause point: a step's output stops at its reader's room.
        let mut most = out.before_pause().max(1);
        if let Some(Rooms { size, total }) = &rooms {
            most = most.min(size - (**total % *size as u64) as usize);
        }
        let (progress, room_len) = match out.unfilled(OUTPUT_STEP.min(most)) {
            Ok(room) => {
                let room_len = room.len().min(most);
                (step(&input[at..], &mut room[..room_len])?, room_len)
            }
            Err(too_large @ KernelError::TooLarge { .. }) => {
                let mut probe = [0u8; 1];
                let progress = step(&input[at..], &mut probe)?;
                if progress.produced > 0 {
                    return Err(too_large);
                }
                (progress, probe.len())
            }
            Err(other) => return Err(other),
        };
        out.commit(progress.produced);
        if let Some(Rooms { total, .. }) = &mut rooms {
            **total += progress.produced as u64;
        }
        at += progress.consumed;
        if progress.ended {
            return Ok(Stop::Ended { rest: at });
        }
        let no_progress = progress.consumed == 0 && progress.produced == 0;
        let drained = at == input.len() && progress.produced < room_len;
        if no_progress || (drained && !finishing) {
            return Ok(Stop::NeedsInput);
        }
        if out.should_pause() {
            return Ok(Stop::Paused { at });
        }
        ctx.check()?;
    }
}

/// What `update_until` says for a stop of [`pump`] over a chunk that began
/// `base` bytes into the caller's (the codec's stream goes on).
pub(super) fn fed(stop: Stop, base: usize) -> Fed {
    match stop {
        Stop::Paused { at } => Fed::Paused(base + at),
        Stop::NeedsInput | Stop::Ended { .. } => Fed::All,
    }
}

/// [`Transform::update`] over [`Transform::update_until`]: takes the whole
/// chunk (a sink with a pause point is served in turns, as if unbounded).
pub(super) fn update_all(
    state: &mut impl Transform,
    chunk: &[u8],
    out: &mut Sink,
    ctx: &RunContext<'_>,
) -> Result<(), KernelError> {
    let mut at = 0;
    loop {
        match state.update_until(&chunk[at..], out, ctx)? {
            Fed::All | Fed::Ended(_) => return Ok(()),
            Fed::Paused(n) => at += n,
        }
    }
}

/// [`Transform::finish`] over [`Transform::finish_until`].
pub(super) fn finish_all(
    state: &mut impl Transform,
    out: &mut Sink,
    ctx: &RunContext<'_>,
) -> Result<(), KernelError> {
    while !state.finish_until(out, ctx)? {}
    Ok(())
}

/// [`Transform::flush`] over [`Transform::flush_until`].
pub(super) fn flush_all(
    state: &mut impl Transform,
    kind: u32,
    out: &mut Sink,
    ctx: &RunContext<'_>,
) -> Result<(), KernelError> {
    while !state.flush_until(kind, out, ctx)? {}
    Ok(())
}

/// Helpers for the codecs' tests.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::atomic::AtomicBool;

    use crate::input::Input;
    use crate::kernels::params::{RawParams, RawValue};
    use crate::kernels::{find, get, AnyKernel, KernelError, Params, RunContext, Sink};

    pub fn kernel(name: &str) -> &'static dyn AnyKernel {
        get(find(name).unwrap()).unwrap()
    }

    /// Checked parameters of `name` from numbers.
    pub fn params(name: &str, raw: &[(&'static str, f64)]) -> Params {
        let raw = RawParams::new(raw.iter().map(|&(n, v)| (n, RawValue::Number(v))).collect());
        kernel(name).params(&raw).unwrap()
    }

    pub fn run_with(
        name: &str,
        p: &Params,
        input: Input,
        limit: usize,
    ) -> Result<Vec<u8>, KernelError> {
        let flag = AtomicBool::new(false);
        let mut out = Sink::new(limit);
        kernel(name).run(p, &input, &RunContext::new(&flag), &mut out)?;
        Ok(out.into_output().as_bytes().to_vec())
    }

    pub fn run(name: &str, input: &[u8]) -> Result<Vec<u8>, KernelError> {
        run_with(name, &Params::NONE, Input::Owned(input.to_vec()), usize::MAX)
    }

    /// Text-like bytes that compress well.
    pub fn text(n: usize) -> Vec<u8> {
        let words = ["tidepool ", "queue ", "age ", "{\"id\":", "42, ", "thread ", "\n"];
        let mut out = Vec::with_capacity(n);
        let mut i = 0usize;
        while out.len() < n {
            out.extend_from_slice(words[(i * 7 + i / 3) % words.len()].as_bytes());
            i += 1;
        }
        out.truncate(n);
        out
    }

    /// Bytes that do not compress.
    pub fn noise(n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// Round trip, exact limits, a bomb, truncation and cancellation for
    /// one encoder/decoder pair: what every codec must do.
    pub fn check_pair(enc: &str, dec: &str, bomb_ratio_at_least: usize) {
        for data in [
            Vec::new(),
            vec![7],
            text(64 * 1024),
            noise(100_000),
            text(3 * crate::kernels::CHUNK + 11),
        ] {
            let packed = run(enc, &data).unwrap();
            assert_eq!(run(dec, &packed).unwrap(), data, "{enc}/{dec}, {} bytes", data.len());
        }
        // Exactly at the limit is fine, one byte less is too large, both ways.
        let data = text(100_000);
        let packed = run(enc, &data).unwrap();
        assert_eq!(
            run_with(dec, &Params::NONE, Input::Owned(packed.clone()), data.len()).unwrap(),
            data,
            "{dec} at the limit"
        );
        let less = run_with(dec, &Params::NONE, Input::Owned(packed.clone()), data.len() - 1);
        assert_eq!(less, Err(KernelError::TooLarge { limit: data.len() - 1 }), "{dec}");
        assert_eq!(
            run_with(enc, &Params::NONE, Input::Owned(data.clone()), packed.len()).unwrap().len(),
            packed.len(),
            "{enc} at the limit"
        );
        assert!(
            matches!(
                run_with(enc, &Params::NONE, Input::Owned(data), packed.len() - 1),
                Err(KernelError::TooLarge { .. })
            ),
            "{enc}"
        );
        // Truncated: node:zlib's Z_BUF_ERROR.
        let cut = run(dec, &packed[..packed.len() / 2]);
        assert!(
            matches!(cut, Err(KernelError::Format { code: "Z_BUF_ERROR", .. })),
            "{dec} of half: {cut:?}"
        );
        assert!(
            matches!(run(dec, &[]), Err(KernelError::Format { code: "Z_BUF_ERROR", .. })),
            "{dec} of nothing"
        );
        // A bomb stops at the limit, with the sink never past it.
        let zeros = vec![0u8; 16 << 20];
        let bomb = run(enc, &zeros).unwrap();
        assert!(bomb.len() * bomb_ratio_at_least <= zeros.len(), "{enc}: {} bytes", bomb.len());
        let limit = 1 << 20;
        let flag = AtomicBool::new(false);
        let mut out = Sink::new(limit);
        let err = kernel(dec)
            .run(&Params::NONE, &Input::Owned(bomb.clone()), &RunContext::new(&flag), &mut out)
            .unwrap_err();
        assert_eq!(err, KernelError::TooLarge { limit }, "{dec} bomb");
        assert!(out.len() <= limit);
        // A raised flag stops the decoder within a step of output.
        let raised = AtomicBool::new(true);
        let mut out = Sink::new(usize::MAX);
        let err = kernel(dec)
            .run(&Params::NONE, &Input::Owned(bomb), &RunContext::new(&raised), &mut out)
            .unwrap_err();
        assert_eq!(err, KernelError::Cancelled, "{dec}");
        assert!(out.len() <= 2 * super::OUTPUT_STEP, "{dec} ran on: {} bytes", out.len());
    }
}
