//! The encoders: `gzip`, `deflate`, `deflateRaw`, on zlib's API
//! ([`Deflater`]) so that `params()` can change the level mid-stream.

use std::sync::Arc;

use super::block_stream::BlockStream;
use super::blocks::{Settings, Z_NO_FLUSH, Z_SYNC_FLUSH};
use super::deflater::{deflate_error, pump_deflate, Deflater};
use super::{Format, EMPTY_WRITE, Z_FINISH};
use crate::kernels::codec::Codec;
use crate::kernels::codec::{fed, Stop};
use crate::kernels::model::{Fed, Kernel};
use crate::kernels::params::{ParamError, RawParams};
use crate::kernels::{Dialect, Facts, Family, Packing};
use crate::kernels::{KernelError, Parallel, RunContext, Sink};

impl CompressParams {
    /// What a block is compressed with.
    pub(super) fn settings(&self) -> Settings {
        Settings { level: self.level, mem_level: self.mem_level, strategy: self.strategy }
    }

    /// True when the output can be cut into blocks: the defaults' window
    /// and end, no dictionary.
    fn splits(&self) -> bool {
        self.dictionary.is_none() && self.finish_flush == Z_FINISH as i32 && self.window_bits == 15
    }
}

/// `gzip`, `deflate`, `deflateRaw`.
pub struct Compress {
    name: &'static str,
    format: Format,
}

pub static GZIP: Compress = Compress { name: "gzip", format: Format::Gzip };
pub static DEFLATE: Compress = Compress { name: "deflate", format: Format::Zlib };
pub static DEFLATE_RAW: Compress = Compress { name: "deflateRaw", format: Format::Raw };

/// zlib's deflate parameters, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressParams {
    pub(super) level: i32,
    pub(super) window_bits: u8,
    pub(super) mem_level: i32,
    pub(super) strategy: i32,
    dictionary: Option<Arc<[u8]>>,
    /// The flush the end is (node:zlib's `finishFlush`): Z_FINISH closes
    /// the stream; another kind leaves it open, flushed that way.
    finish_flush: i32,
}

const GZIP_PARAMS: &[&str] = &["level", "windowBits", "memLevel", "strategy", "finishFlush"];
/// A gzip stream has no preset dictionary (zlib refuses one).
const COMPRESS_PARAMS: &[&str] =
    &["level", "windowBits", "memLevel", "strategy", "finishFlush", "dictionary"];

impl Kernel for Compress {
    type Params = CompressParams;
    type State = CompressState;

    fn name(&self) -> &'static str {
        self.name
    }

    fn facts(&self) -> Facts {
        // Its stream may run in blocks on idle threads (block_stream.rs).
        Facts {
            in_blocks: true,
            packing: Packing::Sized,
            ..Facts::codec(
                Family::Deflate,
                Dialect {
                    names: &[
                        "level",
                        "windowBits",
                        "memLevel",
                        "strategy",
                        "dictionary",
                        "finishFlush",
                    ],
                    keyed: &[],
                },
            )
        }
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<CompressParams, ParamError> {
        raw.only(if self.format == Format::Gzip { GZIP_PARAMS } else { COMPRESS_PARAMS })?;
        // Node's ranges and defaults (zlib.constants: Z_DEFAULT_COMPRESSION,
        // Z_DEFAULT_WINDOWBITS, Z_DEFAULT_MEMLEVEL, Z_DEFAULT_STRATEGY).
        // windowBits 8 is zlib's "9 in disguise"; Node refuses it for gzip.
        let min_bits = if self.format == Format::Gzip { 9 } else { 8 };
        // Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED.
        let strategy = raw.integer("strategy", 0..=4)?.unwrap_or(0) as i32;
        Ok(CompressParams {
            level: raw.integer("level", -1..=9)?.unwrap_or(-1) as i32,
            window_bits: raw.integer("windowBits", min_bits..=15)?.unwrap_or(15) as u8,
            mem_level: raw.integer("memLevel", 1..=9)?.unwrap_or(8) as i32,
            strategy,
            dictionary: raw.bytes("dictionary")?.map(Arc::from),
            finish_flush: raw.integer("finishFlush", 0..=5)?.unwrap_or(Z_FINISH) as i32,
        })
    }

    fn state_bytes(&self, p: &CompressParams) -> usize {
        // zlib's own sum for deflateInit2 (zlib.h, "memory footprint"): the
        // window twice over and the hash chains, plus the state itself.
        let bits = u32::from(p.window_bits.clamp(9, 15));
        let mem_level = p.mem_level.clamp(1, 9) as u32;
        (1 << (bits + 2)) + (1 << (mem_level + 9)) + 6 * 1024
    }

    fn start(
        &self,
        p: &CompressParams,
        len_hint: Option<usize>,
    ) -> Result<CompressState, KernelError> {
        // zlib turns a window of 8 into 9 for zlib streams; for raw ones
        // zlib-rs refuses 8, and Node passes 9 itself: so do we.
        let bits = if self.format == Format::Raw { p.window_bits.max(9) } else { p.window_bits };
        let mut deflate =
            Deflater::new(p.level, self.format.window_bits(bits), p.mem_level, p.strategy)
                .map_err(deflate_error)?;
        if let Some(dictionary) = &p.dictionary {
            deflate.set_dictionary(dictionary).map_err(deflate_error)?;
        }
        // Text compresses 3-10x, random data not at all: a quarter of the
        // input is one reservation for the common case, and the sink grows
        // (doubling) for the rest.
        Ok(CompressState {
            engine: Engine::Whole(deflate),
            split: p.splits().then(|| (self.format, p.settings())),
            finish_flush: p.finish_flush,
            dictionary: p.dictionary.clone(),
            reserve: len_hint.map(|n| n / 4 + 64),
        })
    }

    /// A whole body in one call of libdeflate (`whole_body.rs`): smaller
    /// output than zlib-rs's at the same level, at less CPU.
    fn run_contiguous(
        &self,
        p: &CompressParams,
        input: &[u8],
        _ctx: &RunContext<'_>,
        out: &mut Sink,
    ) -> Option<Result<(), KernelError>> {
        let level = super::whole_body::level_for(p.level)?;
        // The strategy and memLevel are zlib's alone (libdeflate's are
        // Z_DEFAULT_STRATEGY's and about memLevel 8's).
        if !p.splits() || p.strategy != 0 || p.mem_level != 8 {
            return None;
        }
        super::whole_body::compress(self.format, level, input, out).then_some(Ok(()))
    }

    /// In blocks on several threads (`parallel.rs`): a large input, with
    /// the defaults' window and end (no dictionary, a finished stream).
    fn run_split(
        &self,
        p: &CompressParams,
        input: &[u8],
        ctx: &RunContext<'_>,
        out: &mut Sink,
        parallel: &dyn Parallel,
    ) -> Option<Result<(), KernelError>> {
        (p.splits() && input.len() >= super::parallel::MIN_SPLIT)
            .then(|| super::parallel::run(self.format, p.settings(), input, ctx, out, parallel))
    }
}

pub struct CompressState {
    engine: Engine,
    /// The format and settings of a stream that may be cut into blocks.
    split: Option<(Format, Settings)>,
    finish_flush: i32,
    /// Set again by a reset.
    dictionary: Option<Arc<[u8]>>,
    reserve: Option<usize>,
}

/// What compresses: one deflate stream, or (a stream once
/// [`allow_parts`](Transform::allow_parts) was called) a stream in blocks.
enum Engine {
    Whole(Deflater),
    Blocks(Box<BlockStream>),
}

impl CompressState {
    /// The one deflate stream; the methods that use it are called only
    /// when there are no blocks.
    fn deflate(&mut self) -> Result<&mut Deflater, KernelError> {
        match &mut self.engine {
            Engine::Whole(deflate) => Ok(deflate),
            Engine::Blocks(_) => {
                Err(KernelError::InvalidInput("a stream in blocks has no one deflater".into()))
            }
        }
    }

    /// Runs deflate over `input` with `flush` until it has taken all of it
    /// (and, for a flush or `Finish`, written all it holds: deflate says
    /// so by writing nothing more), or the sink's pause point.
    fn pump(
        &mut self,
        input: &[u8],
        flush: i32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Stop, KernelError> {
        if let Some(n) = self.reserve.take() {
            out.reserve(n);
        }
        pump_deflate(self.deflate()?, input, flush, out, ctx)
    }

    /// node:zlib's params(): a sync flush, then the new level and strategy.
    fn params(
        &mut self,
        level: i32,
        strategy: i32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        if matches!(self.pump(&[], Z_SYNC_FLUSH, out, ctx)?, Stop::Paused { .. }) {
            return Ok(false);
        }
        // After the flush nothing is held back: no output is written.
        let room = out.unfilled(64)?;
        let produced = self.deflate()?.params(level, strategy, room).map_err(deflate_error)?;
        out.commit(produced);
        Ok(true)
    }
}

/// zlib's flush constants as `node:zlib` passes them: Z_PARTIAL_FLUSH,
/// Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_BLOCK.
fn deflate_flush(kind: u32) -> Result<i32, KernelError> {
    match kind {
        1 | 2 | 3 | 5 => Ok(kind as i32),
        _ => Err(KernelError::InvalidInput(format!("no deflate flush of kind {kind}"))),
    }
}

/// node:zlib's `params(level, strategy)` as a flush kind (above zlib's,
/// below the stream's [`RESET`](crate::stream::RESET)): `PARAMS + (level + 1) * 8 + strategy`.
pub const PARAMS: u32 = 0x100;

/// The level and strategy a [`PARAMS`] kind carries, if it is one.
fn params_of(kind: u32) -> Option<(i32, i32)> {
    let code = kind.checked_sub(PARAMS)?;
    let (level, strategy) = ((code / 8) as i32 - 1, (code % 8) as i32);
    ((-1..=9).contains(&level) && (0..=4).contains(&strategy)).then_some((level, strategy))
}

impl Codec for CompressState {
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        if let Engine::Blocks(blocks) = &mut self.engine {
            return blocks.update(chunk, out, ctx);
        }
        Ok(fed(self.pump(chunk, Z_NO_FLUSH, out, ctx)?, 0))
    }

    fn allow_parts(&mut self) -> bool {
        if let Some((format, settings)) = self.split.take() {
            // A deflater that cannot be made leaves the stream whole.
            if let Ok(blocks) = BlockStream::new(format, settings) {
                self.engine = Engine::Blocks(Box::new(blocks));
            }
        }
        matches!(self.engine, Engine::Blocks(_))
    }

    fn update_parts(
        &mut self,
        rest: &[&[u8]],
        out: &mut Sink,
        ctx: &RunContext<'_>,
        parallel: &dyn Parallel,
    ) -> Result<usize, KernelError> {
        match &mut self.engine {
            Engine::Blocks(blocks) => blocks.update_parts(rest, out, ctx, parallel),
            Engine::Whole(_) => Ok(0),
        }
    }

    fn pending(&self) -> usize {
        match &self.engine {
            Engine::Blocks(blocks) => blocks.pending(),
            Engine::Whole(_) => 0,
        }
    }

    // Called again after a pause, deflate goes on with the same flush
    // (zlib's rule: the same flush value until it is done).
    fn finish_until(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        if let Engine::Blocks(blocks) = &mut self.engine {
            return blocks.finish(out, ctx);
        }
        Ok(!matches!(self.pump(&[], self.finish_flush, out, ctx)?, Stop::Paused { .. }))
    }

    /// zlib's `deflateReset`, which keeps the level and strategy of the last
    /// `params()`, as node:zlib's `reset()` does; the dictionary set again.
    fn reset(&mut self) -> Result<bool, KernelError> {
        if let Engine::Blocks(blocks) = &mut self.engine {
            blocks.reset()?;
            return Ok(true);
        }
        self.deflate()?.reset().map_err(deflate_error)?;
        if let Some(dictionary) = self.dictionary.clone() {
            self.deflate()?.set_dictionary(&dictionary).map_err(deflate_error)?;
        }
        Ok(true)
    }

    fn flush_until(
        &mut self,
        kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        if let Engine::Blocks(blocks) = &mut self.engine {
            return match (params_of(kind), kind) {
                (Some((level, strategy)), _) => blocks.params(level, strategy, out, ctx),
                (None, EMPTY_WRITE) => blocks.empty_write(out),
                (None, kind) => blocks.flush(deflate_flush(kind)?, out, ctx),
            };
        }
        if let Some((level, strategy)) = params_of(kind) {
            return self.params(level, strategy, out, ctx);
        }
        if kind == EMPTY_WRITE {
            let room = out.unfilled(64)?;
            let step = self.deflate()?.deflate(&[], room, Z_NO_FLUSH).map_err(deflate_error)?;
            out.commit(step.produced);
            return Ok(true);
        }
        Ok(!matches!(self.pump(&[], deflate_flush(kind)?, out, ctx)?, Stop::Paused { .. }))
    }
}
