//! Kernels that run large one-shot inputs in parts ([`Kernel::run_split`]):
//! the output decodes to the input (or is the digest of a one-thread run)
//! at every size around their block edges, whichever threads run the
//! parts; cancellation stops the job; a limit holds over the whole output.

use super::*;
use crate::input::Input;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs parts on `threads` scoped threads (the calling one included).
pub(super) struct Threads(pub(super) usize);

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
pub(super) fn mixed(len: usize) -> Vec<u8> {
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

pub(super) fn run_with(
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

pub(super) fn decode(name: &str, data: &[u8]) -> Vec<u8> {
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
