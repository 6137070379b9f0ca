//! The encoder, `zstdCompress`: frames of zstd's streaming API, a large
//! one-shot input as several frames made on idle threads.

use std::sync::Arc;

use zstd_safe::zstd_sys::ZSTD_EndDirective;
use zstd_safe::{CCtx, CParameter, InBuffer, OutBuffer};

use super::{c_parameter, pairs, refused, zstd_error};
use crate::kernels::codec::Codec;
use crate::kernels::codec::{fed, pump, Progress, Stop};
use crate::kernels::model::{Fed, Kernel, Transform};
use crate::kernels::params::{ParamError, RawParams};
use crate::kernels::{write_parts, KernelError, Parallel, PartResults, RunContext, Sink};
use crate::kernels::{Dialect, Facts, Family, Packing};

pub struct ZstdCompress;
pub static ZSTD_COMPRESS: ZstdCompress = ZstdCompress;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZstdParams {
    level: i32,
    checksum: bool,
    /// A dictionary the frames are made with (zstd's raw content or a
    /// trained one); the decoder needs the same.
    dictionary: Option<Arc<[u8]>>,
    /// zstd's own `(key, value)` parameters (node:zlib's `params`), set
    /// after `level` and `checksum`, in key order; checked.
    parameters: Vec<(i32, i32)>,
    /// The input's size, as the caller pledges it: a frame of any other
    /// size fails (`ZSTD_error_srcSize_wrong`), and the header records it.
    pledged: Option<u64>,
}

impl ZstdParams {
    /// The level the frames are made at: `level`, or `parameters`'.
    fn level(&self) -> i32 {
        let given = self.parameters.iter().rev().find(|(key, _)| *key == 100);
        given.map_or(self.level, |&(_, level)| level)
    }
}

impl Kernel for ZstdCompress {
    type Params = ZstdParams;
    type State = ZstdCompressState;

    fn name(&self) -> &'static str {
        "zstdCompress"
    }

    fn facts(&self) -> Facts {
        // node:zlib's ZSTD_c_compressionLevel and ZSTD_c_checksumFlag.
        Facts {
            // Small inputs' outputs are small: several may share a task.
            packing: Packing::Sized,
            ..Facts::codec(
                Family::Zstd,
                Dialect { names: &["dictionary"], keyed: &[(100, "level"), (201, "checksum")] },
            )
        }
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<ZstdParams, ParamError> {
        raw.only(&["level", "checksum", "dictionary", "parameters", "pledgedSrcSize"])?;
        let levels = i128::from(zstd_safe::min_c_level())..=i128::from(zstd_safe::max_c_level());
        let parameters = pairs(raw)?;
        if !parameters.is_empty() {
            // Checked now, as node:zlib's binding sets them when the stream
            // is made: what zstd refuses is refused here.
            let mut cctx = CCtx::try_create().ok_or_else(refused)?;
            for &(key, value) in &parameters {
                if let Some(parameter) = c_parameter(key, value)? {
                    cctx.set_parameter(parameter).map_err(|_| refused())?;
                }
            }
        }
        Ok(ZstdParams {
            // ZSTD_CLEVEL_DEFAULT.
            level: raw.integer("level", levels)?.unwrap_or(3) as i32,
            checksum: raw.boolean("checksum")?.unwrap_or(false),
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
            parameters,
            pledged: raw.integer("pledgedSrcSize", 0..=(1 << 53) - 1)?.map(|n| n as u64),
        })
    }

    fn state_bytes(&self, p: &ZstdParams) -> usize {
        // SAFETY: a pure function of the level; it reads no memory of ours.
        let state = unsafe { zstd_safe::zstd_sys::ZSTD_estimateCStreamSize(p.level()) };
        state + p.dictionary.as_ref().map_or(0, |d| d.len())
    }

    fn start(
        &self,
        p: &ZstdParams,
        len_hint: Option<usize>,
    ) -> Result<ZstdCompressState, KernelError> {
        let cctx = CCtx::try_create().ok_or_else(out_of_memory)?;
        // A one-shot task knows its size: the frame header records it (as
        // `zstd` does for a file; node:zlib's one-shots do from Node 26)
        // and zstd sizes its tables to it. A size pledged is the caller's.
        let pledged = p.pledged.or(len_hint.map(|n| n as u64));
        self.start_with(cctx, p, pledged, len_hint)
    }

    /// A large input as frames of [`ZSTD_BLOCK`] bytes compressed on
    /// several threads, back to back: a zstd decoder reads concatenated
    /// frames as one stream (the format says so; the CLI, node:zlib and
    /// this pool's decoder do). Independent frames rather than blocks of one
    /// frame: zstd's API makes a frame on one thread, and a frame of several
    /// blocks would need their history, as one thread has it. The cost is
    /// the matches a frame cannot take from the one before it. An input
    /// of another size than the one pledged runs whole, to fail as zstd
    /// fails it.
    fn run_split(
        &self,
        p: &ZstdParams,
        input: &[u8],
        ctx: &RunContext<'_>,
        out: &mut Sink,
        parallel: &dyn Parallel,
    ) -> Option<Result<(), KernelError>> {
        if input.len() < ZSTD_MIN_SPLIT || p.pledged.is_some_and(|n| n != input.len() as u64) {
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
                    None => CCtx::try_create().ok_or_else(out_of_memory)?,
                };
                let size = Some(block.len());
                let mut state = self.start_with(cctx, p, size.map(|n| n as u64), size)?;
                let mut sink = Sink::new(room);
                sink.reserve(zstd_safe::compress_bound(block.len()));
                state.reserve = None;
                state.update(block, &mut sink, ctx)?;
                state.finish(&mut sink, ctx)?;
                // Kept for the next frame only at the levels whose tables
                // are small: a high level's would stay with the thread.
                if p.level() <= FRAME_CCTX_MAX_LEVEL {
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
    /// A compression state over `cctx` (fresh, or reset), of a frame of
    /// `pledged` bytes if known.
    fn start_with(
        &self,
        mut cctx: CCtx<'static>,
        p: &ZstdParams,
        pledged: Option<u64>,
        len_hint: Option<usize>,
    ) -> Result<ZstdCompressState, KernelError> {
        cctx.set_parameter(CParameter::CompressionLevel(p.level)).map_err(zstd_error)?;
        cctx.set_parameter(CParameter::ChecksumFlag(p.checksum)).map_err(zstd_error)?;
        for &(key, value) in &p.parameters {
            // Checked by `params`: zstd takes them.
            if let Some(parameter) = c_parameter(key, value).map_err(|_| refused_late())? {
                cctx.set_parameter(parameter).map_err(zstd_error)?;
            }
        }
        if let Some(dictionary) = &p.dictionary {
            cctx.load_dictionary(dictionary).map_err(zstd_error)?;
        }
        if let Some(n) = pledged {
            cctx.set_pledged_src_size(Some(n)).map_err(zstd_error)?;
        }
        Ok(ZstdCompressState {
            cctx,
            reserve: len_hint.map(|n| n / 4 + 64),
            pledged: pledged.is_some(),
        })
    }
}

/// zstd's error for a context it could not allocate.
fn out_of_memory() -> KernelError {
    KernelError::Format {
        code: "ZSTD_error_memory_allocation",
        message: "Allocation error : not enough memory".into(),
    }
}

/// A parameter `params` took that zstd then refused (it cannot be).
fn refused_late() -> KernelError {
    KernelError::InvalidInput("zstd refused a parameter it had taken".into())
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
    /// A size was pledged and zstd has not been called yet. zstd takes a
    /// first call that ends the frame as the whole input and pledges its
    /// size itself, over ours: an empty stream pledged 42 bytes would end
    /// without an error. The first call is made to go on instead.
    pledged: bool,
}

impl ZstdCompressState {
    /// What zstd's context holds now (for the test of `state_bytes`).
    #[cfg(test)]
    pub(super) fn held_bytes(&self) -> usize {
        self.cctx.sizeof()
    }

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
        if std::mem::take(&mut self.pledged) && !continuing {
            // Starts the frame with the size pledged, taking nothing.
            let mut dst = OutBuffer::around(&mut [][..]);
            cctx.compress_stream2(
                &mut dst,
                &mut InBuffer::around(&[]),
                ZSTD_EndDirective::ZSTD_e_continue,
            )
            .map_err(zstd_error)?;
        }
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

impl Codec for ZstdCompressState {
    /// ZSTD_e_flush, the one flush zstd has: the blocks so far are written.
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
