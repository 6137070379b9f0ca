//! `zstdCompress` / `zstdDecompress`: Zstandard (RFC 8878) frames with the
//! reference C library, named as in Node 22's `node:zlib`.
//!
//! Parameters: `level` (zstd's range, negative levels included; default 3)
//! and `checksum` (a content checksum in the frame; default false). The
//! decoder reads concatenated frames (and skips skippable ones), as the zstd
//! CLI does; an input that stops inside a frame is `Z_BUF_ERROR`
//! ("unexpected end of file", as node:zlib says for every format), a corrupt
//! one `ERR_TIDEPOOL_CORRUPT_INPUT` with zstd's own words. A frame's window
//! is held in memory besides the output, so the decoder refuses (as too
//! large) frames whose window is past the power of two above the output
//! limit, and any over 128 MiB.

use std::sync::Arc;

use zstd_safe::zstd_sys::ZSTD_EndDirective;
use zstd_safe::{CCtx, CParameter, DCtx, DParameter, InBuffer, OutBuffer};

use super::codec::{
    fed, finish_all, flush_all, pump, truncated, update_all, Progress, Stop, CORRUPT,
};
use super::model::{Fed, Kernel, Transform};
use super::params::{ParamError, RawParams};
use super::{write_parts, KernelError, Parallel, PartResults, RunContext, Sink};

fn zstd_error(code: usize) -> KernelError {
    let message = zstd_safe::get_error_name(code);
    if message.contains("llocat") {
        // "Allocation error : not enough memory"
        return KernelError::Format { code: "Z_MEM_ERROR", message: message.to_owned() };
    }
    KernelError::Format { code: CORRUPT, message: message.to_owned() }
}

pub struct ZstdCompress;
pub static ZSTD_COMPRESS: ZstdCompress = ZstdCompress;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZstdParams {
    level: i32,
    checksum: bool,
    /// A dictionary the frames are made with (zstd's raw content or a
    /// trained one); the decoder needs the same.
    dictionary: Option<Arc<[u8]>>,
}

impl Kernel for ZstdCompress {
    type Params = ZstdParams;
    type State = ZstdCompressState;

    fn name(&self) -> &'static str {
        "zstdCompress"
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<ZstdParams, ParamError> {
        raw.only(&["level", "checksum", "dictionary"])?;
        let levels = i128::from(zstd_safe::min_c_level())..=i128::from(zstd_safe::max_c_level());
        Ok(ZstdParams {
            // ZSTD_CLEVEL_DEFAULT.
            level: raw.integer("level", levels)?.unwrap_or(3) as i32,
            checksum: raw.boolean("checksum")?.unwrap_or(false),
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
        })
    }

    fn state_bytes(&self, p: &ZstdParams) -> usize {
        // SAFETY: a pure function of the level; it reads no memory of ours.
        let state = unsafe { zstd_safe::zstd_sys::ZSTD_estimateCStreamSize(p.level) };
        state + p.dictionary.as_ref().map_or(0, |d| d.len())
    }

    fn start(
        &self,
        p: &ZstdParams,
        len_hint: Option<usize>,
    ) -> Result<ZstdCompressState, KernelError> {
        let cctx = CCtx::try_create().ok_or_else(|| KernelError::Format {
            code: "Z_MEM_ERROR",
            message: "out of memory".into(),
        })?;
        self.start_with(cctx, p, len_hint)
    }

    /// A large input as frames of [`ZSTD_BLOCK`] bytes compressed on
    /// several threads, back to back: a zstd decoder reads concatenated
    /// frames as one stream (the format says so; the CLI, node:zlib and
    /// this pool's decoder do). Independent frames rather than blocks of one
    /// frame: zstd's API makes a frame on one thread, and a frame of several
    /// blocks would need their history, as one thread has it. The cost is
    /// the matches a frame cannot take from the one before it.
    fn run_split(
        &self,
        p: &ZstdParams,
        input: &[u8],
        ctx: &RunContext<'_>,
        out: &mut Sink,
        parallel: &dyn Parallel,
    ) -> Option<Result<(), KernelError>> {
        if input.len() < ZSTD_MIN_SPLIT {
            return None;
        }
        let blocks: Vec<&[u8]> = input.chunks(ZSTD_BLOCK).collect();
        let frames = PartResults::new(blocks.len(), out.limit().saturating_sub(out.len()));
        let part = |i: usize| {
            let frame = ctx.check().and_then(|()| {
                let room = frames.room()?;
                let block = blocks[i];
                // A thread's context is made once and reset for each frame:
                // zstd keeps its tables, which a fresh one would allocate
                // and clear again.
                let cctx = FRAME_CCTX.with(|c| c.borrow_mut().take());
                let cctx = match cctx {
                    Some(mut cctx) => {
                        cctx.reset(zstd_safe::ResetDirective::SessionAndParameters)
                            .map_err(zstd_error)?;
                        cctx
                    }
                    None => CCtx::try_create().ok_or_else(|| KernelError::Format {
                        code: "Z_MEM_ERROR",
                        message: "out of memory".into(),
                    })?,
                };
                let mut state = self.start_with(cctx, p, Some(block.len()))?;
                let mut sink = Sink::new(room);
                sink.reserve(zstd_safe::compress_bound(block.len()));
                state.reserve = None;
                state.update(block, &mut sink, ctx)?;
                state.finish(&mut sink, ctx)?;
                // Kept for the next frame only at the levels whose tables
                // are small: a high level's would stay with the thread.
                if p.level <= FRAME_CCTX_MAX_LEVEL {
                    FRAME_CCTX.with(|c| *c.borrow_mut() = Some(state.cctx));
                }
                frames.count(sink.len())?;
                Ok(sink.into_output())
            });
            frames.set(i, frame);
        };
        parallel.run_parts(blocks.len(), &part);
        let done = match frames.into_results() {
            Ok(done) => done,
            Err(e) => return Some(Err(e)),
        };
        let pieces: Vec<&[u8]> = done.iter().map(|f| f.as_bytes()).collect();
        Some(write_parts(out, &pieces, parallel))
    }
}

impl ZstdCompress {
    /// A compression state over `cctx` (fresh, or reset).
    fn start_with(
        &self,
        mut cctx: CCtx<'static>,
        p: &ZstdParams,
        len_hint: Option<usize>,
    ) -> Result<ZstdCompressState, KernelError> {
        cctx.set_parameter(CParameter::CompressionLevel(p.level)).map_err(zstd_error)?;
        cctx.set_parameter(CParameter::ChecksumFlag(p.checksum)).map_err(zstd_error)?;
        if let Some(dictionary) = &p.dictionary {
            cctx.load_dictionary(dictionary).map_err(zstd_error)?;
        }
        if let Some(n) = len_hint {
            // A one-shot task knows its size: the frame header records it
            // (as `zstd` does for a file) and zstd sizes its tables to it.
            cctx.set_pledged_src_size(Some(n as u64)).map_err(zstd_error)?;
        }
        Ok(ZstdCompressState { cctx, reserve: len_hint.map(|n| n / 4 + 64) })
    }
}

/// The highest level whose context a thread keeps between frames (a few
/// MB; level 19's, with its 8 MiB window, would be tens).
const FRAME_CCTX_MAX_LEVEL: i32 = 9;

thread_local! {
    /// The context the frames of split jobs are made with on this thread.
    static FRAME_CCTX: std::cell::RefCell<Option<CCtx<'static>>> = const { std::cell::RefCell::new(None) };
}

/// Bytes of input per frame of a zstd job in parts: twice the window of
/// the default level, so a frame loses few matches to its start.
pub const ZSTD_BLOCK: usize = 4 << 20;
/// Inputs below this are one frame.
pub const ZSTD_MIN_SPLIT: usize = 2 * ZSTD_BLOCK;

pub struct ZstdCompressState {
    cctx: CCtx<'static>,
    reserve: Option<usize>,
}

impl ZstdCompressState {
    fn pump(
        &mut self,
        input: &[u8],
        end: ZSTD_EndDirective,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Stop, KernelError> {
        if let Some(n) = self.reserve.take() {
            out.reserve(n);
        }
        let cctx = &mut self.cctx;
        let continuing = end == ZSTD_EndDirective::ZSTD_e_continue;
        pump(out, ctx, input, !continuing, |input, room| {
            let mut src = InBuffer::around(input);
            let mut dst = OutBuffer::around(room);
            let left = cctx.compress_stream2(&mut dst, &mut src, end).map_err(zstd_error)?;
            // With e_end or e_flush, 0 left means the frame is complete, or flushed.
            Ok(Progress {
                consumed: src.pos(),
                produced: dst.pos(),
                ended: !continuing && left == 0,
            })
        })
    }
}

impl Transform for ZstdCompressState {
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

    /// ZSTD_e_flush, the one flush zstd has: the blocks so far are written.
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
        Ok(fed(self.pump(chunk, ZSTD_EndDirective::ZSTD_e_continue, out, ctx)?, 0))
    }

    // Called again after a pause, zstd goes on with the same directive.
    fn finish_until(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        Ok(!matches!(self.pump(&[], ZSTD_EndDirective::ZSTD_e_end, out, ctx)?, Stop::Paused { .. }))
    }

    fn flush_until(
        &mut self,
        _kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        Ok(!matches!(
            self.pump(&[], ZSTD_EndDirective::ZSTD_e_flush, out, ctx)?,
            Stop::Paused { .. }
        ))
    }
}

pub struct ZstdDecompress;
pub static ZSTD_DECOMPRESS: ZstdDecompress = ZstdDecompress;

/// node:zlib's `finishFlush` for a zstd decoder: anything but ZSTD_e_end
/// (2) makes an input cut short no error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZstdDecompressParams {
    truncated_ok: bool,
    /// The dictionary the frames were made with.
    dictionary: Option<Arc<[u8]>>,
}

/// The window of a frame made at zstd's default level, for a decoder's
/// state size before it has read one.
const DEFAULT_WINDOW: usize = 1 << 21;

impl Kernel for ZstdDecompress {
    type Params = ZstdDecompressParams;
    type State = ZstdDecompressState;

    fn name(&self) -> &'static str {
        "zstdDecompress"
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<ZstdDecompressParams, ParamError> {
        raw.only(&["finishFlush", "dictionary"])?;
        let finish_flush = raw.integer("finishFlush", 0..=2)?.unwrap_or(2);
        Ok(ZstdDecompressParams {
            truncated_ok: finish_flush != 2,
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
        })
    }

    fn expands(&self) -> bool {
        true
    }

    fn state_bytes(&self, p: &ZstdDecompressParams) -> usize {
        // The window is the frame's, unknown until its header: that of a
        // frame of zstd's default level (3), 2 MiB.
        // SAFETY: a pure function of a size; it reads no memory of ours.
        let state = unsafe { zstd_safe::zstd_sys::ZSTD_estimateDStreamSize(DEFAULT_WINDOW) };
        state + p.dictionary.as_ref().map_or(0, |d| d.len())
    }

    fn start(
        &self,
        p: &ZstdDecompressParams,
        _len_hint: Option<usize>,
    ) -> Result<ZstdDecompressState, KernelError> {
        let mut dctx = DCtx::try_create().ok_or_else(|| KernelError::Format {
            code: "Z_MEM_ERROR",
            message: "out of memory".into(),
        })?;
        if let Some(dictionary) = &p.dictionary {
            dctx.load_dictionary(dictionary).map_err(zstd_error)?;
        }
        Ok(ZstdDecompressState {
            dctx,
            seen_input: false,
            between_frames: true,
            window_capped: false,
            truncated_ok: p.truncated_ok,
        })
    }
}

pub struct ZstdDecompressState {
    dctx: DCtx<'static>,
    truncated_ok: bool,
    seen_input: bool,
    /// The last call ended a frame (or none has begun): the input may end here.
    between_frames: bool,
    /// The window limit has been set from the output limit.
    window_capped: bool,
}

/// The largest window zstd's decoder accepts for an output limit: the
/// smallest power of two that holds the limit (a frame of that much content
/// may need it), within zstd's 1 KiB..128 MiB. A frame needs its window in
/// memory besides the output, so a task holds at most its limit plus twice
/// that (zstd sizes the buffer to the content when the frame says it).
fn window_log_max(limit: usize) -> u32 {
    let ceil_log2 = usize::BITS - (limit.max(2) - 1).leading_zeros();
    ceil_log2.clamp(10, 27)
}

impl Transform for ZstdDecompressState {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        update_all(self, chunk, out, ctx)
    }

    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        if !self.window_capped {
            self.window_capped = true;
            self.dctx
                .set_parameter(DParameter::WindowLogMax(window_log_max(out.limit())))
                .map_err(zstd_error)?;
        }
        self.seen_input |= !chunk.is_empty();
        let limit = out.limit();
        let (dctx, between) = (&mut self.dctx, &mut self.between_frames);
        let stop = pump(out, ctx, chunk, false, |input, room| {
            let mut src = InBuffer::around(input);
            let mut dst = OutBuffer::around(room);
            let hint = dctx.decompress_stream(&mut dst, &mut src).map_err(|code| {
                // A window larger than the output limit allows: refused as
                // too large (its output would likely be, and its memory is).
                if zstd_safe::get_error_name(code).contains("too much memory") {
                    KernelError::TooLarge { limit }
                } else {
                    zstd_error(code)
                }
            })?;
            if src.pos() > 0 || dst.pos() > 0 {
                // 0: a frame just ended (the next input, if any, starts another).
                *between = hint == 0;
            }
            Ok(Progress { consumed: src.pos(), produced: dst.pos(), ended: false })
        })?;
        debug_assert!(!matches!(stop, Stop::Ended { .. }));
        Ok(fed(stop, 0))
    }

    fn finish(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        if (!self.seen_input || !self.between_frames) && !self.truncated_ok {
            return Err(truncated());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;
    use crate::kernels::codec::testing::{check_pair, params, run, run_with, text};
    use crate::kernels::params::RawValue;

    /// `printf 'hello, tidepool\n' | zstd -19 --check` (zstd CLI 1.5.4).
    const CLI_FRAME: &str = "28b52ffd241081000068656c6c6f2c2074696465706f6f6c0ab5003666";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn round_trips_limits_bombs_truncation_and_cancellation() {
        check_pair("zstdCompress", "zstdDecompress", 1000);
    }

    #[test]
    fn a_streams_reported_size_is_what_its_context_holds() {
        use std::sync::atomic::AtomicBool;
        let never = AtomicBool::new(false);
        let ctx = RunContext::new(&never);
        for level in [1, 3, 6] {
            let p = ZstdParams { level, checksum: false, dictionary: None };
            let mut state = Kernel::start(&ZstdCompress, &p, None).unwrap();
            let mut out = Sink::new(usize::MAX);
            state.update(&text(4 << 20), &mut out, &ctx).unwrap();
            let held = state.cctx.sizeof();
            let reported = Kernel::state_bytes(&ZstdCompress, &p);
            assert!(
                reported >= held * 9 / 10 && reported <= held * 2,
                "level {level}: reported {reported}, held {held}"
            );
        }
    }

    #[test]
    fn reads_the_cli_frame_and_concatenated_frames() {
        assert_eq!(run("zstdDecompress", &unhex(CLI_FRAME)).unwrap(), b"hello, tidepool\n");
        let two = [run("zstdCompress", b"hello ").unwrap(), run("zstdCompress", b"world").unwrap()]
            .concat();
        assert_eq!(run("zstdDecompress", &two).unwrap(), b"hello world");
        let garbage = [run("zstdCompress", b"hello").unwrap(), b"garbage".to_vec()].concat();
        assert!(matches!(
            run("zstdDecompress", &garbage),
            Err(KernelError::Format { code: CORRUPT, .. })
        ));
        let corrupt = run("zstdDecompress", b"this is not zstd");
        assert!(
            matches!(corrupt, Err(KernelError::Format { code: CORRUPT, ref message }) if message.contains("frame")),
            "{corrupt:?}"
        );
    }

    #[test]
    fn level_and_checksum_reach_zstd() {
        let data = text(300_000);
        let fast = run_with(
            "zstdCompress",
            &params("zstdCompress", &[("level", 1.0)]),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        let best = run_with(
            "zstdCompress",
            &params("zstdCompress", &[("level", 19.0)]),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        assert!(best.len() < fast.len(), "{} vs {}", best.len(), fast.len());
        let raw = RawParams::new(vec![("checksum", RawValue::Bool(true))]);
        let checked = crate::kernels::codec::testing::kernel("zstdCompress").params(&raw).unwrap();
        let with_sum =
            run_with("zstdCompress", &checked, Input::Owned(data.clone()), usize::MAX).unwrap();
        let plain = run("zstdCompress", &data).unwrap();
        assert_eq!(with_sum.len(), plain.len() + 4, "a 4-byte content checksum");
        assert_eq!(run("zstdDecompress", &with_sum).unwrap(), data);
        // A flipped checksum byte is caught.
        let mut bad = with_sum.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(matches!(
            run("zstdDecompress", &bad),
            Err(KernelError::Format { code: CORRUPT, .. })
        ));
        let out_of_range = RawParams::new(vec![("level", RawValue::Number(23.0))]);
        assert!(matches!(
            crate::kernels::codec::testing::kernel("zstdCompress").params(&out_of_range),
            Err(ParamError::Range { name: "level", .. })
        ));
    }

    #[test]
    fn a_dictionary_is_used_both_ways_and_needed_to_decode() {
        use crate::kernels::codec::testing::kernel;
        let dictionary: &[u8] = b"tidepool queue age thread {\"id\": 42, \"user\": ";
        let with = |name: &str| {
            kernel(name)
                .params(&RawParams::new(vec![("dictionary", RawValue::Bytes(dictionary))]))
                .unwrap()
        };
        let data = text(20_000);
        let packed =
            run_with("zstdCompress", &with("zstdCompress"), Input::Owned(data.clone()), usize::MAX)
                .unwrap();
        assert!(packed != run("zstdCompress", &data).unwrap(), "the dictionary changed nothing");
        let back = run_with(
            "zstdDecompress",
            &with("zstdDecompress"),
            Input::Owned(packed.clone()),
            usize::MAX,
        );
        assert!(back.unwrap() == data);
        // Without it, the frame cannot be read: a typed error, not wrong bytes.
        assert!(matches!(run("zstdDecompress", &packed), Err(KernelError::Format { .. })));
    }

    #[test]
    fn a_decoder_told_not_to_finish_takes_a_cut_input() {
        let data = text(100_000);
        let packed = run("zstdCompress", &data).unwrap();
        let cut = &packed[..packed.len() / 2];
        assert!(matches!(
            run("zstdDecompress", cut),
            Err(KernelError::Format { code: "Z_BUF_ERROR", .. })
        ));
        let p = params("zstdDecompress", &[("finishFlush", 1.0)]);
        let got = run_with("zstdDecompress", &p, Input::Owned(cut.to_vec()), usize::MAX).unwrap();
        assert!(data.starts_with(&got), "a prefix of the input");
        // The whole input is whole, as without it.
        let p = params("zstdDecompress", &[("finishFlush", 1.0)]);
        assert_eq!(run_with("zstdDecompress", &p, Input::Owned(packed), usize::MAX).unwrap(), data);
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;
    use crate::input::Input;
    use crate::kernels::codec::testing::run_with;
    use crate::kernels::Params;

    /// A 100-byte frame that declares a 128 MiB window (streamed, so no
    /// content size lets the decoder shrink it).
    fn wide_frame() -> Vec<u8> {
        let mut cctx = CCtx::create();
        cctx.set_parameter(CParameter::WindowLog(27)).unwrap();
        cctx.set_parameter(CParameter::ContentSizeFlag(false)).unwrap();
        let mut out = vec![0u8; 1024];
        let mut dst = OutBuffer::around(&mut out[..]);
        // Fed, then ended: zstd cannot shrink the window to the input.
        let mut src = InBuffer::around(&[7u8; 100]);
        cctx.compress_stream2(&mut dst, &mut src, ZSTD_EndDirective::ZSTD_e_continue).unwrap();
        let mut empty = InBuffer::around(&[]);
        cctx.compress_stream2(&mut dst, &mut empty, ZSTD_EndDirective::ZSTD_e_end).unwrap();
        let n = dst.pos();
        out.truncate(n);
        out
    }

    #[test]
    fn a_window_beyond_the_output_limit_is_refused_as_too_large() {
        assert_eq!(window_log_max(1 << 20), 20);
        assert_eq!(window_log_max((1 << 20) + 1), 21);
        assert_eq!(window_log_max(usize::MAX), 27);
        assert_eq!(window_log_max(1), 10);
        let frame = wide_frame();
        let small = run_with("zstdDecompress", &Params::NONE, Input::Owned(frame.clone()), 1 << 20);
        assert_eq!(small, Err(KernelError::TooLarge { limit: 1 << 20 }));
        let roomy =
            run_with("zstdDecompress", &Params::NONE, Input::Owned(frame), 256 << 20).unwrap();
        assert_eq!(roomy, vec![7u8; 100]);
    }
}
