//! Streams: a kernel's state kept from one task to the next (`createHash`,
//! and later the zlib-style transforms).
//!
//! A stream's chunks are tasks like any other (queue, autoscaling, stats,
//! cancellation); each carries the stream's [`Stream`] and whether it is the
//! last. The first chunk starts the kernel's state ([`AnyKernel::start`]),
//! each chunk feeds it, the last one finishes it. Between chunks the state
//! is parked here, so the next chunk may run on any thread.
//!
//! Order is the binding's job: it submits a stream's next chunk only once
//! the previous one has completed, so chunks run one at a time and in
//! order. The mutex only turns a misuse (two chunks at once) into a wait,
//! never a race. A chunk that fails, panics or is cancelled ends the stream:
//! its state is dropped, and later chunks fail.

use std::sync::{Arc, Mutex};

use crate::input::Input;
use crate::kernels::{AnyKernel, KernelError, Output, Params, RunContext, Sink, Transform};

/// The state of one stream between its chunks.
pub struct Stream {
    state: Mutex<State>,
}

enum State {
    /// No chunk has run yet.
    Fresh,
    /// Between chunks, with the bytes output so far (the output limit is
    /// the whole stream's).
    Running(Box<dyn Transform>, usize),
    /// Finished, failed or abandoned.
    Ended,
}

/// What a task of a stream carries.
#[derive(Clone)]
pub struct StreamChunk {
    pub stream: Arc<Stream>,
    /// What follows the chunk's input.
    pub end: ChunkEnd,
}

/// What a stream's kernel does after a chunk's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkEnd {
    /// Nothing: more chunks follow.
    More,
    /// Flushes (`Transform::flush` with this kind); more chunks may follow.
    Flush(u32),
    /// Finishes: this chunk is the stream's last.
    Last,
}

impl std::fmt::Debug for StreamChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamChunk").field("end", &self.end).finish_non_exhaustive()
    }
}

impl Stream {
    /// A stream no chunk has run on yet.
    pub fn new() -> Arc<Stream> {
        Arc::new(Stream { state: Mutex::new(State::Fresh) })
    }

    /// Whether the stream has ended (finished, or a chunk failed).
    pub fn is_ended(&self) -> bool {
        matches!(*self.state.lock().unwrap_or_else(|e| e.into_inner()), State::Ended)
    }

    /// Runs one chunk: starts the kernel's state at the first, feeds it
    /// `input` (in the context's chunks, cancellable between them), then
    /// flushes or finishes it as `end` says; returns what the chunk output. `limit` bounds
    /// the output of the whole stream: a chunk gets the room the earlier ones
    /// left. The state is taken out while the chunk runs, so an error or a
    /// panic leaves the stream ended.
    pub(crate) fn step(
        &self,
        kernel: &dyn AnyKernel,
        params: &Params,
        input: &Input,
        end: ChunkEnd,
        ctx: &RunContext<'_>,
        limit: usize,
    ) -> Result<Output, KernelError> {
        let mut slot = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (mut state, produced) = match std::mem::replace(&mut *slot, State::Ended) {
            State::Fresh => (kernel.start(params, None)?, 0),
            State::Running(state, produced) => (state, produced),
            State::Ended => return Err(KernelError::InvalidInput("the stream has ended: a chunk failed, or it was finished".to_owned())),
        };
        let mut out = Sink::new(limit.saturating_sub(produced));
        let ran = ctx.feed(input, |piece| state.update(piece, &mut out, ctx)).and_then(|()| match end {
            ChunkEnd::More => Ok(()),
            ChunkEnd::Flush(kind) => state.flush(kind, &mut out, ctx),
            ChunkEnd::Last => state.finish(&mut out, ctx),
        });
        match ran {
            // The limit is the stream's, not this chunk's room.
            Err(KernelError::TooLarge { .. }) => Err(KernelError::TooLarge { limit }),
            Err(e) => Err(e),
            Ok(()) => {
                if end != ChunkEnd::Last {
                    *slot = State::Running(state, produced + out.len());
                }
                Ok(out.into_output())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels;
    use std::sync::atomic::AtomicBool;

    fn run(stream: &Stream, name: &str, data: &[u8], last: bool) -> Result<Vec<u8>, KernelError> {
        run_limited(stream, name, data, last, usize::MAX)
    }

    fn run_limited(stream: &Stream, name: &str, data: &[u8], last: bool, limit: usize) -> Result<Vec<u8>, KernelError> {
        run_to(stream, name, data, if last { ChunkEnd::Last } else { ChunkEnd::More }, limit)
    }

    fn run_to(stream: &Stream, name: &str, data: &[u8], end: ChunkEnd, limit: usize) -> Result<Vec<u8>, KernelError> {
        let kernel = kernels::get(kernels::find(name).unwrap()).unwrap();
        let cancel = AtomicBool::new(false);
        let ctx = RunContext::new(&cancel);
        let out = stream.step(kernel, &Params::NONE, &Input::Owned(data.to_vec()), end, &ctx, limit)?;
        Ok(out.as_bytes().to_vec())
    }

    #[test]
    fn a_compressor_fed_in_chunks_writes_one_valid_stream() {
        let data: Vec<u8> = (0..200_000u32).map(|i| b"tidepool streams "[(i % 17) as usize]).collect();
        let stream = Stream::new();
        let mut compressed = Vec::new();
        for piece in data.chunks(30_000) {
            compressed.extend(run(&stream, "gzip", piece, false).unwrap());
        }
        compressed.extend(run(&stream, "gzip", b"", true).unwrap());
        let back = Stream::new();
        assert_eq!(run(&back, "gunzip", &compressed, true).unwrap(), data);
    }

    #[test]
    fn the_output_limit_is_the_whole_stream_s() {
        let data = vec![0u8; 100_000];
        let compressed = run(&Stream::new(), "gzip", &data, true).unwrap();
        let (head, tail) = compressed.split_at(compressed.len() / 2);
        // 100,000 bytes out in all: a limit of 99,999 fails, whichever chunk passes it.
        let stream = Stream::new();
        let first = run_limited(&stream, "gunzip", head, false, 99_999).unwrap();
        let second = run_limited(&stream, "gunzip", tail, true, 99_999);
        assert_eq!(second, Err(KernelError::TooLarge { limit: 99_999 }), "after {} bytes from the first chunk", first.len());
        let exact = Stream::new();
        let a = run_limited(&exact, "gunzip", head, false, 100_000).unwrap();
        let b = run_limited(&exact, "gunzip", tail, true, 100_000).unwrap();
        assert_eq!(a.len() + b.len(), 100_000);
    }

    #[test]
    fn chunks_fed_one_by_one_give_the_one_shot_digest() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let whole = Stream::new();
        let expected = run(&whole, "sha256", &data, true).unwrap();
        assert_eq!(expected.len(), 32);
        let stream = Stream::new();
        let mut at = 0;
        for (i, size) in [0usize, 1, 63, 64, 65, 4096, 70_000].into_iter().enumerate() {
            let end = (at + size).min(data.len());
            assert!(run(&stream, "sha256", &data[at..end], false).unwrap().is_empty(), "chunk {i} outputs nothing");
            at = end;
        }
        assert_eq!(run(&stream, "sha256", &data[at..], true).unwrap(), expected);
        assert!(stream.is_ended());
        assert!(run(&stream, "sha256", b"more", false).is_err(), "a finished stream takes no more chunks");
    }

    /// After a flush, the output so far decodes to the input so far, and
    /// the stream goes on to one valid whole.
    #[test]
    fn a_flushed_compressor_s_output_decodes_to_the_input_so_far() {
        let data: Vec<u8> = (0..50_000u32).map(|i| b"flushing streams "[(i % 17) as usize]).collect();
        // node:zlib's default flush of each family: Z_FULL_FLUSH, BROTLI_OPERATION_FLUSH, ZSTD_e_flush, and LZ4's one.
        for (enc, dec, kind) in [
            ("gzip", "gunzip", 3),
            ("deflate", "inflate", 2),
            ("deflateRaw", "inflateRaw", 1),
            ("brotliCompress", "brotliDecompress", 1),
            ("zstdCompress", "zstdDecompress", 1),
            ("lz4Compress", "lz4Decompress", 1),
        ] {
            let stream = Stream::new();
            let decoder = Stream::new();
            let (head, tail) = data.split_at(20_000);
            let mut packed = run_to(&stream, enc, head, ChunkEnd::Flush(kind), usize::MAX).unwrap();
            // A second flush with nothing new writes nothing that breaks the stream.
            packed.extend(run_to(&stream, enc, b"", ChunkEnd::Flush(kind), usize::MAX).unwrap());
            let so_far = run_to(&decoder, dec, &packed, ChunkEnd::More, usize::MAX).unwrap();
            assert_eq!(so_far, head, "{enc}: the flushed output decodes to the input so far");
            let rest = run_to(&stream, enc, tail, ChunkEnd::Last, usize::MAX).unwrap();
            let end = run_to(&decoder, dec, &rest, ChunkEnd::Last, usize::MAX).unwrap();
            assert_eq!(end, tail, "{enc}: the stream goes on after a flush");
            packed.extend(rest);
            assert_eq!(run(&Stream::new(), dec, &packed, true).unwrap(), data, "{enc}: one valid stream");
        }
    }

    #[test]
    fn a_failed_chunk_ends_the_stream() {
        let stream = Stream::new();
        // Not gzip: the decoder refuses the first chunk.
        assert!(run(&stream, "gunzip", b"definitely not gzip", false).is_err());
        assert!(stream.is_ended());
        assert!(run(&stream, "gunzip", b"", true).is_err());
    }
}
