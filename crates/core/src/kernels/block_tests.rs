//! A stream in blocks (kernels::zlib::block_stream): however it is
//! written, flushed, re-leveled or reset, it decodes to its input as
//! today's whole stream does, and steps run here write what steps on
//! threads write.

use super::split_tests::{decode, mixed, run_with, Threads};
use super::*;
use crate::input::Input;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
