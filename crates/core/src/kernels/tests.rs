//! Every kernel through the registry: what must hold for all of them (and
//! helpers the kernels' own tests share).

use super::*;
use crate::input::{Input, RawSlice};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Kernels whose output is a function of the input bytes alone, for any
/// input, with their default parameters (not the decoders, which refuse
/// most inputs, nor hmac, which needs a key).
fn pure() -> impl Iterator<Item = &'static &'static dyn AnyKernel> {
    BUILTIN.iter().filter(|k| {
        !matches!(k.name(), "spin" | "sleep" | "panic")
            && !k.expands()
            && k.params(&RawParams::none()).is_ok()
    })
}

/// Runs kernel `name` over `data` (optionally split in parts).
pub(crate) fn run(name: &str, parts: &[&'static [u8]]) -> Result<Output, KernelError> {
    let flag = AtomicBool::new(false);
    let input = Input::Many(parts.iter().map(|p| RawSlice::from_static(p)).collect());
    get(find(name).expect("kernel registered")).unwrap().compute(&input, &RunContext::new(&flag))
}

/// An output in a form that does not depend on how the input was fed: a
/// compressor's bytes may differ with the chunking (zlib's may), so its
/// output is compared decompressed.
fn canonical(name: &str, out: Output) -> Vec<u8> {
    let Some(&(_, decoder)) = CODEC_PAIRS.iter().find(|(enc, _)| *enc == name) else {
        return out.as_bytes().to_vec();
    };
    let flag = AtomicBool::new(false);
    let decoded = get(find(decoder).unwrap())
        .unwrap()
        .compute(&Input::Owned(out.as_bytes().to_vec()), &RunContext::new(&flag));
    decoded.expect("a compressor's output decodes").as_bytes().to_vec()
}

pub(crate) fn hex(name: &str, data: &'static [u8]) -> String {
    format!("{:?}", run(name, &[data]).unwrap())
}

#[test]
fn names_are_unique_and_findable() {
    for (i, k) in BUILTIN.iter().enumerate() {
        assert_eq!(find(k.name()), Some(i as KernelId));
    }
    assert_eq!(find("nope"), None);
}

#[test]
fn split_input_hashes_like_contiguous() {
    for k in pure() {
        let whole = run(k.name(), &[b"hello, tidepool"]).unwrap();
        let split = run(k.name(), &[b"hel", b"", b"lo, tide", b"pool"]).unwrap();
        assert_eq!(whole, split, "{}", k.name());
    }
}

#[test]
fn chunking_does_not_change_digest() {
    let big: Vec<u8> = (0..CHUNK * 2 + 17).map(|i| (i % 251) as u8).collect();
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    for k in pure() {
        let a = k.compute(&Input::Owned(big.clone()), &ctx).unwrap();
        let mut joined = Vec::new();
        ctx.feed(&Input::Owned(big.clone()), |p| {
            joined.extend_from_slice(p);
            Ok(())
        })
        .unwrap();
        assert_eq!(joined, big);
        let b = k.compute(&Input::Owned(joined), &ctx).unwrap();
        assert_eq!(a, b, "{}", k.name());
    }
}

#[test]
fn task_flag_and_deadline_stop_a_kernel() {
    let pool_flag = AtomicBool::new(false);
    let task_flag = AtomicBool::new(true);
    let input = Input::Owned(vec![0; CHUNK * 3]);
    let sha = get(find("sha256").unwrap()).unwrap();
    let ctx = RunContext::for_task(&pool_flag, Some(&task_flag), None);
    assert_eq!(sha.compute(&input, &ctx), Err(KernelError::Cancelled));
    let past = Instant::now() - std::time::Duration::from_millis(1);
    let ctx = RunContext::for_task(&pool_flag, None, Some(past));
    assert_eq!(sha.compute(&input, &ctx), Err(KernelError::TimedOut));
    let ctx = RunContext::for_task(
        &pool_flag,
        None,
        Some(Instant::now() + std::time::Duration::from_secs(60)),
    );
    assert!(sha.compute(&input, &ctx).is_ok());
}

#[test]
fn timed_kernels_check_the_deadline_even_when_their_time_is_already_up() {
    // A thread descheduled for longer than the whole spin or sleep (as a
    // low-priority worker on a busy machine can be) must still time out.
    let pool_flag = AtomicBool::new(false);
    let past = Instant::now() - std::time::Duration::from_millis(1);
    let ctx = RunContext::for_task(&pool_flag, None, Some(past));
    let zero = Input::Owned(vec![0; 4]);
    for name in ["spin", "sleep"] {
        assert_eq!(
            get(find(name).unwrap()).unwrap().compute(&zero, &ctx),
            Err(KernelError::TimedOut),
            "{name}"
        );
    }
}

#[test]
fn cancel_flag_stops_a_kernel() {
    let flag = AtomicBool::new(true);
    let ctx = RunContext::new(&flag);
    let input = Input::Owned(vec![0; CHUNK * 3]);
    assert_eq!(
        get(find("sha256").unwrap()).unwrap().compute(&input, &ctx),
        Err(KernelError::Cancelled)
    );
}

#[test]
fn a_stream_fed_across_calls_equals_the_one_shot_run() {
    // The same trait serves one-shot tasks and streams: a boxed state fed
    // chunk by chunk (as a stream's tasks will) ends in the same output.
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
    for k in pure() {
        let whole = k.compute(&Input::Owned(data.clone()), &ctx).unwrap();
        let mut state = k.start(&Params::NONE, None).unwrap();
        let mut out = Sink::new(usize::MAX);
        for piece in data.chunks(9_999) {
            state.update(piece, &mut out, &ctx).unwrap();
        }
        state.finish(&mut out, &ctx).unwrap();
        assert_eq!(
            canonical(k.name(), out.into_output()),
            canonical(k.name(), whole),
            "{}",
            k.name()
        );
    }
}

#[test]
fn echo_returns_large_outputs_whole_and_respects_the_limit() {
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let echo = get(find("echo").unwrap()).unwrap();
    let data: Vec<u8> = (0..CHUNK * 3 + 5).map(|i| (i % 253) as u8).collect();
    let out = echo.compute(&Input::Owned(data.clone()), &ctx).unwrap();
    assert!(out.is_spilled());
    assert_eq!(out.as_bytes(), &data[..]);
    let mut small = Sink::new(1000);
    assert_eq!(
        echo.run(&Params::NONE, &Input::Owned(data), &ctx, &mut small),
        Err(KernelError::TooLarge { limit: 1000 })
    );
}

#[test]
fn parameters_of_another_kernel_are_refused() {
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let xxh = get(find("xxh64").unwrap()).unwrap();
    let wrong = Params::of(String::from("not a seed"));
    let err = xxh.run(&wrong, &Input::Owned(vec![1]), &ctx, &mut Sink::new(64)).unwrap_err();
    assert!(matches!(err, KernelError::InvalidInput(m) if m.contains("another kernel")));
}
