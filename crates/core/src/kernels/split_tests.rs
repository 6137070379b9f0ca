//! Kernels that run large one-shot inputs in parts ([`Kernel::run_split`]):
//! the output decodes to the input (or is the digest of a one-thread run)
//! at every size around their block edges, whichever threads run the
//! parts; cancellation stops the job; a limit holds over the whole output.

use super::*;
use crate::input::Input;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs parts on `threads` scoped threads (the calling one included).
struct Threads(usize);

impl Parallel for Threads {
    fn width(&self) -> usize {
        self.0
    }
    fn run_parts(&self, n: usize, part: &(dyn Fn(usize) + Sync)) {
        let next = AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return;
            }
            part(i);
        };
        std::thread::scope(|s| {
            for _ in 1..self.0 {
                s.spawn(work);
            }
            work();
        });
    }
}

/// Text and noise, as a log bundle or a backup has both.
fn mixed(len: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if (out.len() / 4096) % 3 == 0 {
            out.push(state as u8);
        } else {
            let line = format!("{} GET /item/{} 200\n", out.len(), state % 1000);
            out.extend_from_slice(line.as_bytes());
        }
    }
    out.truncate(len);
    out
}

fn run_with(
    name: &str,
    params: &Params,
    data: &[u8],
    parallel: Option<&dyn Parallel>,
) -> Result<Vec<u8>, KernelError> {
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let ctx = match parallel {
        Some(p) => ctx.with_parallel(p),
        None => ctx,
    };
    let mut out = Sink::new(usize::MAX);
    get(find(name).unwrap()).unwrap().run(params, &Input::Owned(data.to_vec()), &ctx, &mut out)?;
    Ok(out.into_output().as_bytes().to_vec())
}

fn decode(name: &str, data: &[u8]) -> Vec<u8> {
    run_with(name, &Params::NONE, data, None).expect("the output decodes")
}

#[test]
fn split_deflate_formats_decode_to_the_input_at_every_block_edge() {
    let b = zlib::parallel::BLOCK;
    let data = mixed(3 * b + 1);
    for len in [2 * b - 1, 2 * b, 2 * b + 1, 3 * b - 1, 3 * b, 3 * b + 1] {
        let input = &data[..len];
        for (enc, dec) in [("gzip", "gunzip"), ("deflate", "inflate"), ("deflateRaw", "inflateRaw")]
        {
            let whole = run_with(enc, &Params::NONE, input, None).unwrap();
            let split = run_with(enc, &Params::NONE, input, Some(&Threads(3))).unwrap();
            assert_eq!(decode(dec, &split), input, "{enc} {len}");
            let serial = run_with(enc, &Params::NONE, input, Some(&Threads(2))).unwrap();
            assert_eq!(split, serial, "{enc}: the bytes do not depend on the threads");
            if len >= zlib::parallel::MIN_SPLIT {
                assert_ne!(split, whole, "{enc} {len}: split");
                let grown = split.len() as f64 / whole.len() as f64;
                assert!(grown < 1.01, "{enc} {len}: {grown}");
            } else {
                assert_eq!(split, whole, "{enc} {len}: small inputs run whole");
            }
            if enc != "deflateRaw" {
                let header = if enc == "gzip" { 10 } else { 2 };
                assert_eq!(split[..header], whole[..header], "{enc}: a one-thread run's header");
            }
        }
    }
}

#[test]
fn split_deflate_keeps_the_level_and_a_width_of_one_runs_whole() {
    let data = mixed(2 * zlib::parallel::BLOCK + 5);
    let raw = RawParams::new(vec![("level", RawValue::Number(1.0))]);
    let params = get(find("gzip").unwrap()).unwrap().params(&raw).unwrap();
    let fast = run_with("gzip", &params, &data, Some(&Threads(2))).unwrap();
    let default = run_with("gzip", &Params::NONE, &data, Some(&Threads(2))).unwrap();
    assert!(fast.len() > default.len(), "level 1 compresses less");
    assert_eq!(decode("gunzip", &fast), data);
    let one = run_with("gzip", &Params::NONE, &data, Some(&Threads(1))).unwrap();
    assert_eq!(one, run_with("gzip", &Params::NONE, &data, None).unwrap());
}

#[test]
fn split_zstd_is_concatenated_frames_that_decode_to_the_input() {
    let b = zstd::ZSTD_BLOCK;
    let data = mixed(2 * b + 1);
    for len in [2 * b - 1, 2 * b, 2 * b + 1] {
        let input = &data[..len];
        let whole = run_with("zstdCompress", &Params::NONE, input, None).unwrap();
        let split = run_with("zstdCompress", &Params::NONE, input, Some(&Threads(3))).unwrap();
        assert_eq!(decode("zstdDecompress", &split), input, "{len}");
        let grown = split.len() as f64 / whole.len() as f64;
        assert!(grown < 1.02, "{len}: {grown}");
    }
}

#[test]
fn split_blake3_is_the_one_thread_digest_at_every_tree_boundary() {
    use hashes::{blake3_subtrees, Blake3Mode};
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let data = mixed(9 * 1024 + 1);
    let key = [7u8; 32];
    let modes = [
        (Blake3Mode::Hash, blake3::hash as fn(&[u8]) -> blake3::Hash),
        (Blake3Mode::Keyed(zeroize::Zeroizing::new(key)), |d: &[u8]| {
            blake3::keyed_hash(&[7u8; 32], d)
        }),
        (Blake3Mode::DeriveKey("tidepool test".into()), |d: &[u8]| {
            blake3::Hash::from(blake3::derive_key("tidepool test", d))
        }),
    ];
    for subtree in [1024, 2048, 4096] {
        for len in
            (subtree + 1..=data.len()).step_by(97).chain([2 * subtree, 4 * subtree, 8 * subtree])
        {
            if len > data.len() {
                continue;
            }
            for (mode, reference) in &modes {
                let got = blake3_subtrees(mode, &data[..len], subtree, &ctx, &Threads(3)).unwrap();
                assert_eq!(&got, reference(&data[..len]).as_bytes(), "subtree {subtree} len {len}");
            }
        }
    }
    // Through the kernel, above its threshold.
    let big = mixed(hashes::BLAKE3_MIN_SPLIT + 12345);
    let split = run_with("blake3", &Params::NONE, &big, Some(&Threads(2))).unwrap();
    assert_eq!(split, blake3::hash(&big).as_bytes());
}

#[test]
fn a_cancelled_job_stops_and_a_limit_holds_over_the_whole_output() {
    let data = mixed(4 * zlib::parallel::BLOCK);
    let flag = AtomicBool::new(true);
    let threads = Threads(2);
    let ctx = RunContext::new(&flag).with_parallel(&threads);
    for name in ["gzip", "zstdCompress", "blake3"] {
        let data =
            if name == "zstdCompress" { mixed(2 * zstd::ZSTD_MIN_SPLIT) } else { data.clone() };
        let mut out = Sink::new(usize::MAX);
        let err = get(find(name).unwrap()).unwrap().run(
            &Params::NONE,
            &Input::Owned(data),
            &ctx,
            &mut out,
        );
        assert!(matches!(err, Err(KernelError::Cancelled)), "{name}: {err:?}");
    }
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag).with_parallel(&threads);
    let mut out = Sink::new(1000);
    let err =
        get(find("gzip").unwrap()).unwrap().run(&Params::NONE, &Input::Owned(data), &ctx, &mut out);
    assert!(matches!(err, Err(KernelError::TooLarge { .. })), "{err:?}");
    assert!(out.len() <= 1000);
}

/// `gunzip` over one contiguous input (libdeflate when it takes it) and
/// over the same bytes as an array of binaries (always zlib-rs): the same
/// output or the same error, for whole members, several, lies and limits.
#[test]
fn gunzip_whole_or_in_pieces_gives_the_same_output_and_errors() {
    use crate::input::RawSlice;
    fn both(gz: &'static [u8], limit: usize) -> [Result<Vec<u8>, String>; 2] {
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let kernel = get(find("gunzip").unwrap()).unwrap();
        let run = |input: Input| {
            let mut out = Sink::new(limit);
            kernel
                .run(&Params::NONE, &input, &ctx, &mut out)
                .map(|()| out.into_output().as_bytes().to_vec())
                .map_err(|e| format!("{e:?}"))
        };
        let half = gz.len() / 2;
        [
            run(Input::One(RawSlice::from_static(gz))),
            run(Input::Many(Box::new([
                RawSlice::from_static(&gz[..half]),
                RawSlice::from_static(&gz[half..]),
            ]))),
        ]
    }
    let leak = |v: Vec<u8>| -> &'static [u8] { Box::leak(v.into_boxed_slice()) };
    let gzip = |data: &[u8]| run_with("gzip", &Params::NONE, data, None).unwrap();
    for len in [0, 1, 65536, 300_000] {
        let data = mixed(len);
        let [fast, slow] = both(leak(gzip(&data)), usize::MAX);
        assert_eq!(fast.as_deref(), Ok(&data[..]), "{len}");
        assert_eq!(fast, slow);
    }
    let (a, b) = (mixed(1000), mixed(3000));
    let mut two = gzip(&a);
    two.extend(gzip(&b));
    let [fast, slow] = both(leak(two.clone()), usize::MAX);
    assert_eq!(fast.as_deref(), Ok(&[a.clone(), b][..].concat()[..]), "two members");
    assert_eq!(fast, slow);
    let mut lying = gzip(&a);
    let n = lying.len();
    lying[n - 4] ^= 1;
    let [fast, slow] = both(leak(lying), usize::MAX);
    assert!(fast.is_err(), "a wrong length is an error");
    assert_eq!(fast, slow);
    let [fast, slow] = both(leak(gzip(&a)), 999);
    assert!(fast.as_ref().is_err_and(|e| e.contains("TooLarge")), "{fast:?}");
    assert_eq!(fast, slow);
    // A header CRC, which libdeflate does not check: zlib-rs decides.
    let mut hcrc = gzip(&a);
    hcrc[3] |= 0x02;
    hcrc.splice(10..10, [0xde, 0xad]);
    let [fast, slow] = both(leak(hcrc), usize::MAX);
    assert!(fast.as_ref().is_err_and(|e| e.contains("header crc")), "{fast:?}");
    assert_eq!(fast, slow);
    let mut cut = gzip(&a);
    cut.truncate(cut.len() - 3);
    let [fast, slow] = both(leak(cut), usize::MAX);
    assert!(fast.is_err());
    assert_eq!(fast, slow);
}

/// What a stream is given in one task.
#[derive(Clone, Copy)]
enum Step<'a> {
    Write(&'a [u8]),
    /// A flush of zlib's kind after the writes before it.
    Flush(u32),
    /// node:zlib's `params(level, strategy)`.
    Params(i32, i32),
    Reset,
}

/// Runs a `name` stream through `steps` then its end, a task per step (a
/// write of several parts when `parts` > 1), every task again while it
/// pauses at `budget`; parts of tasks run on `parallel` when given.
fn stream_run(
    name: &str,
    params: &Params,
    steps: &[Step<'_>],
    parts: usize,
    parallel: Option<&dyn Parallel>,
    budget: usize,
) -> Result<Vec<u8>, KernelError> {
    stream_steps(name, params, steps, true, parts, parallel, budget)
}

/// [`stream_run`], ended or not.
fn stream_steps(
    name: &str,
    params: &Params,
    steps: &[Step<'_>],
    end: bool,
    parts: usize,
    parallel: Option<&dyn Parallel>,
    budget: usize,
) -> Result<Vec<u8>, KernelError> {
    let run = StreamRun { end, parts, parallel, budget, limit: usize::MAX, here: false };
    run.steps(name, params, steps).map(|(output, _)| output)
}

/// How [`StreamRun::steps`] runs a stream.
struct StreamRun<'a> {
    /// The last write ends the stream.
    end: bool,
    /// Each write's input in this many slices.
    parts: usize,
    parallel: Option<&'a dyn Parallel>,
    budget: usize,
    /// The stream's output limit.
    limit: usize,
    /// After a paused step, the next runs here when it may
    /// (`Stream::step_here`), as the binding runs it.
    here: bool,
}

impl StreamRun<'_> {
    /// The output of a stream of `name` given `steps`, and how many steps
    /// ran here.
    fn steps(
        &self,
        name: &str,
        params: &Params,
        steps: &[Step<'_>],
    ) -> Result<(Vec<u8>, usize), KernelError> {
        use crate::input::RawSlice;
        use crate::stream::{ChunkEnd, Outcome, Stream, StreamChunk, RESET};
        let StreamRun { end, parts, parallel, budget, limit, here } = *self;
        let stream = Stream::new(find(name).unwrap(), params.clone(), limit);
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let ctx = match parallel {
            Some(p) => ctx.with_parallel(p),
            None => ctx,
        };
        let mut output = Vec::new();
        let mut ran_here = 0;
        let last: &[Step<'_>] = if end { &[Step::Write(b"")] } else { &[] };
        for (seq, step) in steps.iter().chain(last).enumerate() {
            let (data, end): (&[u8], ChunkEnd) = match *step {
                Step::Write(data) if seq == steps.len() => (data, ChunkEnd::Last),
                Step::Write(data) => (data, ChunkEnd::More),
                Step::Flush(kind) => (b"", ChunkEnd::Flush(kind)),
                Step::Params(level, strategy) => {
                    (b"", ChunkEnd::Flush(zlib::PARAMS + ((level + 1) * 8 + strategy) as u32))
                }
                Step::Reset => (b"", ChunkEnd::Flush(RESET)),
            };
            let leaked: &'static [u8] = Box::leak(data.to_vec().into_boxed_slice());
            let input = if parts > 1 && leaked.len() >= parts {
                let cut = leaked.len() / parts;
                let mut slices: Vec<RawSlice> =
                    leaked.chunks(cut).map(RawSlice::from_static).collect();
                slices.insert(1, RawSlice::from_static(b""));
                Input::Many(slices.into_boxed_slice())
            } else {
                Input::One(RawSlice::from_static(leaked))
            };
            let chunk = StreamChunk { stream: stream.clone(), seq: seq as u64, end, budget };
            let mut paused = false;
            loop {
                let before = stream.report().consumed;
                let made =
                    match (here && paused).then(|| stream.step_here(&chunk, &input)).flatten() {
                        Some(made) => {
                            ran_here += 1;
                            let made = made?;
                            // It only hands on output: it takes no input.
                            assert_eq!(stream.report().consumed, before, "a step here took input");
                            made
                        }
                        None => stream.step(&chunk, &input, &ctx)?,
                    };
                output.extend_from_slice(made.as_bytes());
                paused = stream.report().outcome == Outcome::Paused;
                if !paused {
                    break;
                }
            }
        }
        Ok((output, ran_here))
    }
}

/// `assert_eq!` of two outputs that says where they part, not what they hold.
#[track_caller]
fn assert_same(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let at =
            got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
        panic!("{what}: {} bytes against {}, first difference at {at}", got.len(), want.len());
    }
}

fn writes(data: &[u8], size: usize) -> Vec<Step<'_>> {
    data.chunks(size).map(Step::Write).collect()
}

/// zlib-rs's output depends on where its calls cut the input (its medium
/// levels look ahead as far as a call's input goes), so a stream's bytes
/// depend on how its writes were gathered, with blocks or without; what
/// they decode to does not, and the blocks cost a few bytes each.
#[test]
fn a_stream_in_blocks_decodes_to_its_input_however_it_is_written() {
    let b = zlib::block_stream::STREAM_BLOCK;
    let data = mixed(9 * b + 7);
    for len in [b / 2, b, b + 1, 4 * b, 4 * b + 1, 9 * b + 7] {
        let input = &data[..len];
        for (enc, dec) in [("gzip", "gunzip"), ("deflate", "inflate"), ("deflateRaw", "inflateRaw")]
        {
            // zlib-rs's own stream (a whole body is libdeflate's otherwise).
            let whole =
                zlib::whole_body::without(|| run_with(enc, &Params::NONE, input, None)).unwrap();
            for (size, parts, threads, budget) in [
                (len, 1, 3, usize::MAX),
                (4 * b, 2, 2, 100_000),
                (b + 3, 3, 2, usize::MAX),
                (300_000, 1, 2, 5000),
                (77_777, 1, 1, usize::MAX),
            ] {
                let threads = Threads(threads);
                let what = format!("{enc} {len} by {size} in {parts}");
                let got = stream_run(
                    enc,
                    &Params::NONE,
                    &writes(input, size),
                    parts,
                    Some(&threads),
                    budget,
                )
                .unwrap();
                assert_same(&decode(dec, &got), input, &what);
                let grown = got.len() as f64 / whole.len() as f64;
                assert!((0.995..1.005).contains(&grown), "{what}: {grown}");
                if len > b {
                    assert_ne!(got, whole, "{what}: in blocks");
                }
            }
            // Without parts (a pool of one thread): one deflate stream.
            let one = stream_run(enc, &Params::NONE, &writes(input, 262_144), 1, None, usize::MAX)
                .unwrap();
            assert_same(&one, &whole, &format!("{enc} {len}: one thread"));
        }
    }
}

#[test]
fn a_stream_in_blocks_is_today_s_stream_below_a_block_with_flushes_params_and_resets() {
    let data = mixed(250_000);
    let steps = [
        Step::Write(&data[..1000]),
        Step::Flush(2),
        // An empty write between two sync flushes (ws counts on the second
        // writing its four bytes).
        Step::Flush(zlib::EMPTY_WRITE),
        Step::Flush(2),
        Step::Write(&data[1000..60_000]),
        Step::Params(1, 0),
        Step::Write(&data[60_000..130_000]),
        Step::Flush(3),
        Step::Write(b""),
        Step::Flush(5),
        Step::Write(&data[130_000..200_000]),
        Step::Reset,
        Step::Write(&data[200_000..]),
    ];
    let threads = Threads(2);
    for name in ["gzip", "deflate", "deflateRaw"] {
        let whole = stream_run(name, &Params::NONE, &steps, 1, None, usize::MAX).unwrap();
        for budget in [usize::MAX, 1000] {
            let blocks =
                stream_run(name, &Params::NONE, &steps, 1, Some(&threads), budget).unwrap();
            assert_same(&blocks, &whole, &format!("{name}, budget {budget}"));
        }
    }
}

#[test]
fn a_stream_in_blocks_flushed_decodes_to_what_came_before_each_flush() {
    let b = zlib::block_stream::STREAM_BLOCK;
    let data = mixed(3 * b);
    let threads = Threads(3);
    // Flushes inside blocks and on their edges, and writes across edges.
    let cuts = [100, b - 5, b, 2 * b + 9, 3 * b];
    for kind in [2, 3] {
        let mut steps = Vec::new();
        let mut from = 0;
        for &cut in &cuts {
            steps.push(Step::Write(&data[from..cut]));
            steps.push(Step::Flush(kind));
            from = cut;
        }
        let mut ends = Vec::new();
        let got = stream_run_ends("gzip", &steps, 2, Some(&threads), 4096, &mut ends).unwrap();
        assert_same(&decode("gunzip", &got), &data, &format!("kind {kind}"));
        for (i, &cut) in cuts.iter().enumerate() {
            let flushed = &got[..ends[2 * i + 1]];
            let so_far = decode_so_far("gunzip", flushed);
            assert_same(&so_far, &data[..cut], &format!("kind {kind}, {cut}"));
        }
    }
    // A reset in blocks drops what the open block holds, as zlib's
    // deflateReset does, and starts a new stream.
    let steps = [Step::Write(&data[..b + 10]), Step::Reset, Step::Write(&data[b + 10..])];
    let got = stream_run("gzip", &Params::NONE, &steps, 1, Some(&threads), usize::MAX).unwrap();
    let mut members =
        stream_steps("gzip", &Params::NONE, &steps[..2], false, 1, Some(&threads), usize::MAX)
            .unwrap();
    let second = [Step::Write(&data[b + 10..])];
    members
        .extend(stream_run("gzip", &Params::NONE, &second, 1, Some(&threads), usize::MAX).unwrap());
    assert_same(&got, &members, "a reset");
}

/// [`stream_run`] of `gzip` with its parameters' defaults, noting the
/// output's length after each step in `ends`.
fn stream_run_ends(
    name: &str,
    steps: &[Step<'_>],
    parts: usize,
    parallel: Option<&dyn Parallel>,
    budget: usize,
    ends: &mut Vec<usize>,
) -> Result<Vec<u8>, KernelError> {
    let whole = stream_run(name, &Params::NONE, steps, parts, parallel, budget)?;
    for n in 0..steps.len() {
        // What the stream wrote so far, not ended.
        let prefix =
            stream_steps(name, &Params::NONE, &steps[..=n], false, parts, parallel, budget)?;
        assert_same(&whole[..prefix.len().min(whole.len())], &prefix, "a prefix");
        ends.push(prefix.len());
    }
    Ok(whole)
}

/// What a decoder stream writes for `data` without being ended.
fn decode_so_far(name: &str, data: &[u8]) -> Vec<u8> {
    stream_steps(name, &Params::NONE, &[Step::Write(data)], false, 1, None, usize::MAX).unwrap()
}

/// Threads that remember the largest job they were given.
struct Counting(Threads, AtomicUsize);

impl Parallel for Counting {
    fn width(&self) -> usize {
        self.0.width()
    }
    fn run_parts(&self, n: usize, part: &(dyn Fn(usize) + Sync)) {
        self.1.fetch_max(n, Ordering::Relaxed);
        self.0.run_parts(n, part);
    }
}

/// A task's thread owns its job until every part is claimed: one large
/// write taken whole would keep queued tasks (and other streams) waiting
/// for all of it. A stream takes four blocks per thread at a time.
#[test]
fn a_stream_takes_a_large_write_a_few_blocks_at_a_time() {
    let b = zlib::block_stream::STREAM_BLOCK;
    let data = mixed(40 * b + 3);
    let counting = Counting(Threads(2), AtomicUsize::new(0));
    let got =
        stream_run("gzip", &Params::NONE, &[Step::Write(&data)], 1, Some(&counting), usize::MAX)
            .unwrap();
    assert_same(&decode("gunzip", &got), &data, "one large write");
    // The open block's end, eight whole blocks, the block they open.
    let most = counting.1.load(Ordering::Relaxed);
    assert!((9..=10).contains(&most), "{most} parts in one job");
}

/// The binding runs a step that only hands on output made already on its
/// own thread (`Stream::step_here`). A stream so run writes what one whose
/// every step ran on a pool thread writes, whatever its writes, flushes,
/// `params()`, resets and reader's room, and fails alike at its limit.
#[test]
fn steps_here_write_what_steps_on_threads_write() {
    let b = zlib::block_stream::STREAM_BLOCK;
    let data = mixed(6 * b + 777);
    let threads = Threads(2);
    let mixed_steps = vec![
        Step::Write(&data[..b + 1000]),
        Step::Flush(2),
        Step::Write(&data[b + 1000..3 * b]),
        Step::Params(1, 0),
        Step::Write(&data[3 * b..4 * b + 5]),
        Step::Flush(zlib::EMPTY_WRITE),
        Step::Flush(3),
        Step::Reset,
        Step::Write(&data[4 * b + 5..]),
    ];
    let cases = [writes(&data, 1 << 20), writes(&data, 300_000), writes(&data, b), mixed_steps];
    let run = |here, budget, limit| StreamRun {
        end: true,
        parts: 2,
        parallel: Some(&threads),
        budget,
        limit,
        here,
    };
    for name in ["gzip", "deflate", "deflateRaw"] {
        for (i, steps) in cases.iter().enumerate() {
            for budget in [1000, 64 * 1024 + 1, usize::MAX] {
                let what = format!("{name}, case {i}, budget {budget}");
                let (want, _) =
                    run(false, budget, usize::MAX).steps(name, &Params::NONE, steps).unwrap();
                let (got, ran_here) =
                    run(true, budget, usize::MAX).steps(name, &Params::NONE, steps).unwrap();
                assert_same(&got, &want, &what);
                // A reader's room, or each block's output in a step of its
                // own: steps after the first hand on output here.
                assert!(ran_here > 0, "{what}: no step here");
            }
        }
        let (whole, _) =
            run(false, 1000, usize::MAX).steps(name, &Params::NONE, &cases[0]).unwrap();
        for limit in [whole.len() / 2, whole.len() - 1] {
            for here in [false, true] {
                let failed = run(here, 1000, limit).steps(name, &Params::NONE, &cases[0]);
                assert!(
                    matches!(failed, Err(KernelError::TooLarge { limit: l }) if l == limit),
                    "{name}, limit {limit}, here {here}: {:?}",
                    failed.map(|(out, _)| out.len())
                );
            }
        }
    }
}
