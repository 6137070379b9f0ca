//! Streams run chunk by chunk: pauses at the budget, ends, takeovers,
//! and every codec pair through them.

use super::*;
use crate::kernels::{self, CHUNK};
use std::sync::atomic::AtomicBool;

fn open(name: &str, limit: usize) -> Arc<Stream> {
    Stream::new(kernels::find(name).unwrap(), Params::NONE, limit)
}

/// Runs chunk `seq` of `stream` to its end (again and again while it
/// pauses), collecting the output; the number of steps it took.
fn run_chunk(
    stream: &Arc<Stream>,
    seq: u64,
    data: &[u8],
    end: ChunkEnd,
    budget: usize,
) -> Result<(Vec<u8>, usize), KernelError> {
    // A codec stops after a call of its own (OUTPUT_STEP of room), LZ4
    // after a block (at most 4 MiB, its header and checksum).
    let lz4 = stream.kernel == kernels::find("lz4Compress").unwrap()
        || stream.kernel == kernels::find("lz4Decompress").unwrap();
    let slack = if lz4 { (4 << 20) + 16 } else { 2 * crate::kernels::codec::OUTPUT_STEP };
    let cancel = AtomicBool::new(false);
    let ctx = RunContext::new(&cancel);
    let chunk = StreamChunk { stream: stream.clone(), seq, end, budget };
    let input = Input::Owned(data.to_vec());
    let mut output = Vec::new();
    for steps in 1.. {
        let out = stream.step(&chunk, &input, &ctx)?;
        assert!(
            out.as_bytes().len() <= budget.saturating_add(slack),
            "a step ran far past its budget: {} bytes",
            out.as_bytes().len()
        );
        output.extend_from_slice(out.as_bytes());
        if stream.report().outcome != Outcome::Paused {
            return Ok((output, steps));
        }
    }
    unreachable!()
}

fn run(stream: &Arc<Stream>, seq: u64, data: &[u8], last: bool) -> Result<Vec<u8>, KernelError> {
    run_chunk(stream, seq, data, if last { ChunkEnd::Last } else { ChunkEnd::More }, usize::MAX)
        .map(|(out, _)| out)
}

fn one_shot(name: &str, data: &[u8]) -> Vec<u8> {
    run(&open(name, usize::MAX), 0, data, true).unwrap()
}

#[test]
fn a_compressor_fed_in_chunks_writes_one_valid_stream() {
    let data: Vec<u8> = (0..200_000u32).map(|i| b"tidepool streams "[(i % 17) as usize]).collect();
    let stream = open("gzip", usize::MAX);
    let mut compressed = Vec::new();
    for (seq, piece) in data.chunks(30_000).enumerate() {
        compressed.extend(run(&stream, seq as u64, piece, false).unwrap());
    }
    compressed.extend(run(&stream, 7, b"", true).unwrap());
    assert_eq!(one_shot("gunzip", &compressed), data);
    assert_eq!(stream.report().consumed, data.len() as u64);
}

#[test]
fn the_output_limit_is_the_whole_stream_s() {
    let data = vec![0u8; 100_000];
    let compressed = one_shot("gzip", &data);
    let (head, tail) = compressed.split_at(compressed.len() / 2);
    // 100,000 bytes out in all: a limit of 99,999 fails, whichever chunk passes it.
    let stream = open("gunzip", 99_999);
    let first = run(&stream, 0, head, false).unwrap();
    let second = run(&stream, 1, tail, true);
    assert_eq!(
        second,
        Err(KernelError::TooLarge { limit: 99_999 }),
        "after {} bytes from the first chunk",
        first.len()
    );
    let exact = open("gunzip", 100_000);
    let a = run(&exact, 0, head, false).unwrap();
    let b = run(&exact, 1, tail, true).unwrap();
    assert_eq!(a.len() + b.len(), 100_000);
}

#[test]
fn chunks_fed_one_by_one_give_the_one_shot_digest() {
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
    let expected = one_shot("sha256", &data);
    assert_eq!(expected.len(), 32);
    let stream = open("sha256", usize::MAX);
    let mut at = 0;
    for (i, size) in [0usize, 1, 63, 64, 65, 4096, 70_000].into_iter().enumerate() {
        let end = (at + size).min(data.len());
        assert!(
            run(&stream, i as u64, &data[at..end], false).unwrap().is_empty(),
            "chunk {i} outputs nothing"
        );
        at = end;
    }
    assert_eq!(run(&stream, 7, &data[at..], true).unwrap(), expected);
    assert!(stream.is_ended());
    assert!(run(&stream, 8, b"more", false).is_err(), "a finished stream takes no more chunks");
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
        let stream = open(enc, usize::MAX);
        let decoder = open(dec, usize::MAX);
        let (head, tail) = data.split_at(20_000);
        let mut packed = run_chunk(&stream, 0, head, ChunkEnd::Flush(kind), usize::MAX).unwrap().0;
        // A second flush with nothing new writes nothing that breaks the stream.
        packed.extend(run_chunk(&stream, 1, b"", ChunkEnd::Flush(kind), usize::MAX).unwrap().0);
        let so_far = run(&decoder, 0, &packed, false).unwrap();
        assert_eq!(so_far, head, "{enc}: the flushed output decodes to the input so far");
        let rest = run(&stream, 2, tail, true).unwrap();
        let end = run(&decoder, 1, &rest, true).unwrap();
        assert_eq!(end, tail, "{enc}: the stream goes on after a flush");
        packed.extend(rest);
        assert_eq!(one_shot(dec, &packed), data, "{enc}: one valid stream");
    }
}

#[test]
fn a_failed_chunk_ends_the_stream() {
    let stream = open("gunzip", usize::MAX);
    // Not gzip: the decoder refuses the first chunk.
    assert!(run(&stream, 0, b"definitely not gzip", false).is_err());
    assert!(stream.is_ended());
    assert!(run(&stream, 1, b"", true).is_err());
}

/// A decoder whose output passes its budget stops and goes on where it
/// stopped: every step stays near the budget, and the output is whole.
#[test]
fn every_decoder_pauses_at_its_budget_and_goes_on() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| b"pause and go on "[(i % 16) as usize]).collect();
    for (enc, dec) in kernels::CODEC_PAIRS {
        let packed = one_shot(enc, &data);
        let budget = 16 * 1024;
        let stream = open(dec, usize::MAX);
        let (mut out, steps) = run_chunk(&stream, 0, &packed, ChunkEnd::More, budget).unwrap();
        out.extend(run_chunk(&stream, 1, b"", ChunkEnd::Last, budget).unwrap().0);
        assert_eq!(out.len(), data.len(), "{dec}");
        assert!(out == data, "{dec}: the output is whole");
        // lz4's unit is a block of up to 4 MiB: it stops between blocks.
        let least = if *dec == "lz4Decompress" {
            1
        } else {
            data.len() / (budget + 2 * crate::kernels::codec::OUTPUT_STEP)
        };
        assert!(
            steps >= least,
            "{dec}: {steps} steps for {} bytes at a {budget}-byte budget",
            data.len()
        );
        assert_eq!(stream.report().consumed, packed.len() as u64, "{dec}: bytesWritten");
    }
}

/// A compressor's finish that passes the budget is finished in steps.
#[test]
fn a_compressor_s_finish_pauses_and_goes_on() {
    let noise = crate::kernels::codec::testing::noise(600_000);
    for (enc, dec) in kernels::CODEC_PAIRS {
        let stream = open(enc, usize::MAX);
        let (mut packed, _) = run_chunk(&stream, 0, &noise, ChunkEnd::More, 4096).unwrap();
        let (end, _) = run_chunk(&stream, 1, b"", ChunkEnd::Last, 4096).unwrap();
        packed.extend(end);
        assert!(stream.is_ended(), "{enc}: finished");
        assert_eq!(one_shot(dec, &packed), noise, "{enc}");
    }
}

/// A zlib, raw deflate or brotli stream followed by more bytes: the
/// decoder ends, and neither those bytes nor later chunks are read.
#[test]
fn a_decoder_ends_at_its_format_s_end() {
    for (enc, dec) in [
        ("deflate", "inflate"),
        ("deflateRaw", "inflateRaw"),
        ("brotliCompress", "brotliDecompress"),
    ] {
        let packed = one_shot(enc, b"0123456789");
        let trailing = [packed.clone(), b"not valid compressed data".to_vec()].concat();
        let stream = open(dec, usize::MAX);
        assert_eq!(run(&stream, 0, &trailing, false).unwrap(), b"0123456789", "{dec}");
        assert_eq!(
            stream.report(),
            Report { outcome: Outcome::Ended, consumed: packed.len() as u64 },
            "{dec}"
        );
        assert_eq!(run(&stream, 1, b"more", false).unwrap(), b"", "{dec}");
        assert_eq!(
            stream.report(),
            Report { outcome: Outcome::Ended, consumed: packed.len() as u64 },
            "{dec}"
        );
        run(&stream, 2, b"", true).unwrap();
        // Ending exactly at a chunk's end: as node:zlib, the stream ends
        // when more bytes come (or at its end), and those are not read.
        let exact = open(dec, usize::MAX);
        run(&exact, 0, &packed, false).unwrap();
        assert_eq!(
            exact.report(),
            Report { outcome: Outcome::Done, consumed: packed.len() as u64 },
            "{dec}"
        );
        assert_eq!(run(&exact, 1, b"x", false).unwrap(), b"", "{dec}");
        assert_eq!(
            exact.report(),
            Report { outcome: Outcome::Ended, consumed: packed.len() as u64 },
            "{dec}"
        );
    }
    // gzip: a zero byte after a member is padding, the end of the input.
    let member = one_shot("gzip", b"abc");
    let padded = [member.clone(), vec![0; 4], b"ignored".to_vec()].concat();
    let stream = open("gunzip", usize::MAX);
    assert_eq!(run(&stream, 0, &padded, false).unwrap(), b"abc");
    assert_eq!(stream.report(), Report { outcome: Outcome::Ended, consumed: member.len() as u64 });
}

/// run_inline takes over the chunk in flight (from where a paused step
/// left it, or whole if it never ran) and the rest; the chunk's own
/// task, run later, does nothing.
#[test]
fn run_inline_takes_over_the_chunk_in_flight() {
    let data: Vec<u8> = (0..900_000u32).map(|i| (i ^ i >> 9) as u8).collect();
    let expected = one_shot("sha256", &data);
    let (a, rest) = data.split_at(700_000);
    let (b, c) = rest.split_at(150_000);
    let cancel = AtomicBool::new(false);
    let ctx = RunContext::new(&cancel);
    for ran_before in [false, true] {
        let stream = open("sha256", usize::MAX);
        let chunk =
            StreamChunk { stream: stream.clone(), seq: 0, end: ChunkEnd::More, budget: usize::MAX };
        let input = Input::Owned(a.to_vec());
        if ran_before {
            // A step that stopped after its first piece (as a yield would make it).
            stream.yield_requested.store(true, Ordering::Relaxed);
            let mut slot = stream.state.lock().unwrap();
            let State::Open(position) = &mut *slot else { panic!() };
            let kernel = kernels::get(stream.kernel).unwrap();
            let mut out = Sink::new(usize::MAX);
            stream.yield_requested.store(false, Ordering::Relaxed);
            position.transform = Some(kernel.start(&Params::NONE, None).unwrap());
            position.transform.as_mut().unwrap().update(&a[..CHUNK], &mut out, &ctx).unwrap();
            position.fed = CHUNK;
            position.consumed = CHUNK as u64;
        }
        let inline = stream.run_inline(Some((0, &input)), &Input::Owned(b.to_vec()), &ctx).unwrap();
        assert!(inline.as_bytes().is_empty());
        // The chunk's task, run late, finds it done.
        assert_eq!(stream.step(&chunk, &input, &ctx).unwrap().as_bytes(), b"");
        assert_eq!(run(&stream, 1, c, true).unwrap(), expected, "ran before: {ran_before}");
    }
}

/// A reset starts any codec over, as a new stream: an encoder's output
/// after it is a stream of its own; a decoder reads a new stream after it,
/// also once the one before had ended.
#[test]
fn a_reset_starts_a_stream_over_as_a_new_one() {
    let (a, b) = (b"first stream, first stream".repeat(100), b"second stream".repeat(100));
    for (enc, dec, flush) in [
        ("deflateRaw", "inflateRaw", 2),
        ("deflate", "inflate", 2),
        ("gzip", "gunzip", 2),
        ("brotliCompress", "brotliDecompress", 1),
        ("zstdCompress", "zstdDecompress", 1),
        ("lz4Compress", "lz4Decompress", 1),
    ] {
        let stream = open(enc, usize::MAX);
        let first = run_chunk(&stream, 0, &a, ChunkEnd::Flush(flush), usize::MAX).unwrap().0;
        let _ = run_chunk(&stream, 1, b"", ChunkEnd::Flush(RESET), usize::MAX).unwrap();
        let second = run(&stream, 2, &b, true).unwrap();
        assert_eq!(one_shot(dec, &second), b, "{enc}: after a reset, a new stream");
        let decoder = open(dec, usize::MAX);
        assert_eq!(run(&decoder, 0, &first, false).unwrap(), a, "{dec}");
        let _ = run_chunk(&decoder, 1, b"", ChunkEnd::Flush(RESET), usize::MAX).unwrap();
        assert_eq!(run(&decoder, 2, &second, true).unwrap(), b, "{dec}: after a reset");
        // Past the end of a whole stream (a decoder that ends reads no
        // more), a reset reads the next.
        let decoder = open(dec, usize::MAX);
        assert_eq!(run(&decoder, 0, &one_shot(enc, &a), false).unwrap(), a, "{dec}");
        let _ = run_chunk(&decoder, 1, b"", ChunkEnd::Flush(RESET), usize::MAX).unwrap();
        assert_eq!(run(&decoder, 2, &second, true).unwrap(), b, "{dec}: reset after its end");
    }
}

#[test]
fn params_changes_the_level_mid_stream_after_a_sync_flush() {
    use crate::kernels::ZLIB_PARAMS as PARAMS;
    let head = b"compressible, compressible, compressible ".repeat(300);
    let tail: Vec<u8> =
        (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    for (enc, dec) in [("deflate", "inflate"), ("gzip", "gunzip"), ("deflateRaw", "inflateRaw")] {
        let stream = open(enc, usize::MAX);
        // node:zlib's params(0, Z_DEFAULT_STRATEGY): level 0 stores what follows.
        let mut packed =
            run_chunk(&stream, 0, &head, ChunkEnd::Flush(PARAMS + 8), usize::MAX).unwrap().0;
        let after = run(&stream, 1, &tail, true).unwrap();
        assert!(after.windows(tail.len()).any(|w| w == tail), "{enc}: level 0 stores the tail");
        packed.extend(after);
        let mut both = head.clone();
        both.extend(&tail);
        assert_eq!(one_shot(dec, &packed), both, "{enc}: one valid stream");
        // And back up to 9 with a strategy: still one valid stream.
        let stream = open(enc, usize::MAX);
        let mut packed =
            run_chunk(&stream, 0, &tail, ChunkEnd::Flush(PARAMS + 10 * 8 + 1), usize::MAX)
                .unwrap()
                .0;
        packed.extend(run(&stream, 1, &head, true).unwrap());
        let mut both = tail.clone();
        both.extend(&head);
        assert_eq!(one_shot(dec, &packed), both, "{enc}: level 9, Z_FILTERED");
        // A reset keeps the level params() set, as zlib's deflateReset does.
        let stream = open(enc, usize::MAX);
        let _ = run_chunk(&stream, 0, b"", ChunkEnd::Flush(PARAMS + 8), usize::MAX).unwrap();
        let _ = run_chunk(&stream, 1, b"", ChunkEnd::Flush(RESET), usize::MAX).unwrap();
        let after = run(&stream, 2, &head, true).unwrap();
        assert!(after.len() > head.len(), "{enc}: still level 0 after the reset");
        assert_eq!(one_shot(dec, &after), head, "{enc}: a stream of its own");
    }
}

#[test]
fn an_empty_write_between_two_sync_flushes_makes_the_second_write_its_block() {
    use crate::kernels::ZLIB_EMPTY_WRITE as EMPTY_WRITE;
    let stream = open("deflateRaw", usize::MAX);
    let first = run_chunk(&stream, 0, b"hello", ChunkEnd::Flush(2), usize::MAX).unwrap().0;
    assert!(first.ends_with(&[0, 0, 0xff, 0xff]));
    // Two flushes in a row: the second writes nothing (zlib's rule).
    assert!(run_chunk(&stream, 1, b"", ChunkEnd::Flush(2), usize::MAX).unwrap().0.is_empty());
    // An empty write between them: the flush after it writes an empty stored block, as Node's.
    let _ = run_chunk(&stream, 2, b"", ChunkEnd::Flush(EMPTY_WRITE), usize::MAX).unwrap();
    let second = run_chunk(&stream, 3, b"", ChunkEnd::Flush(2), usize::MAX).unwrap().0;
    assert_eq!(second, [0, 0, 0, 0xff, 0xff]);
}

/// A fork goes on from the state it was made at, apart from its source:
/// both digests are of their own input, for every hash kernel and HMAC.
#[test]
fn a_fork_goes_on_apart_from_its_source() {
    let data: Vec<u8> = (0..200_000u32).map(|i| ((i * 31) ^ (i >> 5)) as u8).collect();
    let (head, tail) = data.split_at(70_001);
    for name in ["sha256", "sha512", "sha1", "md5", "blake3", "xxh3", "xxh64", "crc32", "hmac"] {
        let params = if name == "hmac" {
            use crate::kernels::params::{RawParams, RawValue};
            let raw = RawParams::new(vec![
                ("hash", RawValue::Text("sha256")),
                ("key", RawValue::Bytes(b"k")),
            ]);
            kernels::get(kernels::find(name).unwrap()).unwrap().params(&raw).unwrap()
        } else {
            Params::NONE
        };
        let open = || Stream::new(kernels::find(name).unwrap(), params.clone(), usize::MAX);
        let whole = |parts: &[&[u8]]| {
            let stream = open();
            for (i, part) in parts.iter().enumerate() {
                run(&stream, i as u64, part, false).unwrap();
            }
            run(&stream, parts.len() as u64, b"", true).unwrap()
        };
        let source = open();
        // Not started: the fork starts as a new stream would.
        let blank = source.fork().unwrap();
        run(&source, 0, head, false).unwrap();
        let fork = source.fork().unwrap();
        assert_eq!(run(&source, 1, tail, true).unwrap(), whole(&[head, tail]), "{name}: source");
        assert_eq!(run(&fork, 0, b"other", true).unwrap(), whole(&[head, b"other"]), "{name}");
        assert_eq!(run(&blank, 0, tail, true).unwrap(), whole(&[tail]), "{name}: blank");
        assert!(source.fork().is_err(), "{name}: a finished stream has nothing to copy");
    }
}

/// A codec's state is not copied: the fork is refused, and the source
/// goes on unharmed.
#[test]
fn a_codec_stream_is_not_forked() {
    let stream = open("gzip", usize::MAX);
    let mut gz = run(&stream, 0, b"hello", false).unwrap();
    let err = stream.fork().err().expect("refused");
    assert!(err.to_string().contains("cannot be copied"), "{err}");
    gz.extend(run(&stream, 1, b" world", true).unwrap());
    assert_eq!(one_shot("gunzip", &gz), b"hello world");
}

#[test]
fn a_failed_stream_gives_the_error_that_ended_it_again() {
    let stream = open("gunzip", usize::MAX);
    let first = run(&stream, 0, b"not gzip at all", false).unwrap_err();
    assert!(matches!(first, KernelError::Format { .. }), "{first:?}");
    assert!(stream.is_ended());
    // The next chunk, and an inline run, say why the stream ended.
    assert_eq!(run(&stream, 1, b"more", true).unwrap_err(), first);
    let cancel = AtomicBool::new(false);
    let inline = stream.run_inline(None, &Input::Owned(b"x".to_vec()), &RunContext::new(&cancel));
    assert_eq!(inline.unwrap_err(), first);
    // A finished stream says it was finished.
    let done = open("gzip", usize::MAX);
    run(&done, 0, b"data", true).unwrap();
    let after = run(&done, 1, b"more", true).unwrap_err();
    assert!(matches!(&after, KernelError::InvalidInput(m) if m.contains("finished")), "{after:?}");
}

#[test]
fn a_digest_stream_refuses_output_before_its_end_however_cut() {
    // echo writes its input as it takes it: no hash.
    let echo = kernels::find("echo").unwrap();
    for cut in [1, 100, 70_000] {
        let stream = Stream::new_digest(echo, Params::NONE, usize::MAX);
        let data = vec![7u8; 200_000];
        let mut failed = None;
        for (seq, piece) in data.chunks(cut).enumerate() {
            let last = (seq + 1) * cut >= data.len();
            if let Err(e) = run(&stream, seq as u64, piece, last) {
                failed = Some(e);
                break;
            }
        }
        let err = failed.expect("a digest stream of echo failed");
        assert!(
            matches!(&err, KernelError::Failed { code, .. } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT"),
            "{err:?}"
        );
    }
    // A hash writes only at its end: taken.
    let sha = Stream::new_digest(kernels::find("sha256").unwrap(), Params::NONE, usize::MAX);
    assert_eq!(run(&sha, 0, b"abc", true).unwrap().len(), 32);
}

/// What the binding reports to V8 for a stream is its codec's state, given
/// back once: a second take (the finalizer after the stream's end) gives 0.
#[test]
fn a_streams_reported_state_is_given_back_once() {
    let gzip = open("gzip", usize::MAX);
    assert_eq!(gzip.reported(), gzip.state_bytes());
    assert!(gzip.reported() > 0, "a deflate stream holds state");
    assert_eq!(gzip.take_reported(), gzip.state_bytes());
    assert_eq!(gzip.reported(), 0);
    assert_eq!(gzip.take_reported(), 0);
    let digest = Stream::new_digest(kernels::find("sha256").unwrap(), Params::NONE, usize::MAX);
    assert_eq!(digest.take_reported(), digest.state_bytes());
}

/// A brotli stream reports what its encoder holds: little when made, or
/// after its only chunk ran whole (the encoder sized to it and let go),
/// its window and hashers while it lives between chunks; nothing after
/// its bytes were given back, however often it is synced.
#[test]
fn a_streams_report_follows_what_its_state_holds() {
    let data = kernels::codec::testing::text(64 << 10);
    let whole = open("brotliCompress", usize::MAX);
    let made = whole.reported();
    assert!(made > 0 && made < whole.state_bytes() / 100, "made {made}");
    run(&whole, 0, &data, true).unwrap();
    assert_eq!(whole.sync_reported(), -(made as isize), "an ended stream holds nothing");
    assert_eq!(whole.reported(), 0);

    let long = open("brotliCompress", usize::MAX);
    run(&long, 0, &data, false).unwrap();
    assert_eq!(long.sync_reported(), (long.state_bytes() - made) as isize);
    assert_eq!(long.reported(), long.state_bytes());
    assert_eq!(long.sync_reported(), 0, "nothing changed");
    assert_eq!(long.take_reported(), long.state_bytes());
    run(&long, 1, &data, false).unwrap();
    assert_eq!(long.sync_reported(), 0, "given back: never reported again");
    assert_eq!(long.reported(), 0);

    // zlib takes its state when made: reported whole from the start.
    let gzip = open("gzip", usize::MAX);
    run(&gzip, 0, &data, false).unwrap();
    assert_eq!(gzip.sync_reported(), 0);
    assert_eq!(gzip.reported(), gzip.state_bytes());
}
