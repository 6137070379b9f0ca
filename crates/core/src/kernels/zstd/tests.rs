use zstd_safe::zstd_sys::ZSTD_EndDirective;
use zstd_safe::{CCtx, CParameter, InBuffer, OutBuffer};

use super::decompress::window_log_max;
use crate::input::Input;
use crate::kernels::codec::testing::{check_pair, kernel, params, run, run_with, text};
use crate::kernels::params::{ParamError, RawParams, RawValue};
use crate::kernels::{KernelError, Params};

/// `printf 'hello, tidepool\n' | zstd -19 --check` (zstd CLI 1.5.4).
const CLI_FRAME: &str = "28b52ffd241081000068656c6c6f2c2074696465706f6f6c0ab5003666";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// `name`'s checked params of `raw`.
fn with(name: &str, raw: Vec<(&'static str, RawValue<'_>)>) -> Result<Params, ParamError> {
    kernel(name).params(&RawParams::new(raw))
}

/// zstd's `(key, value)` pairs as node:zlib's module hands them.
fn pairs(list: &[(i32, i32)]) -> Vec<u8> {
    list.iter().flat_map(|(k, v)| [k.to_le_bytes(), v.to_le_bytes()].concat()).collect()
}

fn code_of(result: Result<Vec<u8>, KernelError>) -> &'static str {
    match result {
        Err(KernelError::Format { code, .. }) => code,
        other => panic!("not a format error: {other:?}"),
    }
}

#[test]
fn round_trips_limits_bombs_truncation_and_cancellation() {
    check_pair("zstdCompress", "zstdDecompress", 1000);
}

#[test]
fn reads_the_cli_frame_and_concatenated_frames() {
    assert_eq!(run("zstdDecompress", &unhex(CLI_FRAME)).unwrap(), b"hello, tidepool\n");
    let two =
        [run("zstdCompress", b"hello ").unwrap(), run("zstdCompress", b"world").unwrap()].concat();
    assert_eq!(run("zstdDecompress", &two).unwrap(), b"hello world");
    let garbage = [run("zstdCompress", b"hello").unwrap(), b"garbage".to_vec()].concat();
    assert_eq!(code_of(run("zstdDecompress", &garbage)), "ZSTD_error_prefix_unknown");
}

/// zstd's errors have node:zlib's codes and numbers, and zstd's words.
#[test]
fn errors_are_named_and_numbered_as_node_zlib_s() {
    let corrupt = run("zstdDecompress", b"this is not zstd");
    assert_eq!(
        corrupt,
        Err(KernelError::Format {
            code: "ZSTD_error_prefix_unknown",
            message: "Unknown frame descriptor".into()
        })
    );
    assert_eq!(super::errno_of("ZSTD_error_prefix_unknown"), Some(10));
    assert_eq!(super::errno_of("ZSTD_error_srcSize_wrong"), Some(72));
    assert_eq!(super::errno_of("Z_DATA_ERROR"), None);
}

#[test]
fn level_and_checksum_reach_zstd() {
    let data = text(300_000);
    let at = |level: f64| {
        let p = params("zstdCompress", &[("level", level)]);
        run_with("zstdCompress", &p, Input::Owned(data.clone()), usize::MAX).unwrap()
    };
    let (fast, best) = (at(1.0), at(19.0));
    assert!(best.len() < fast.len(), "{} vs {}", best.len(), fast.len());
    let checked = with("zstdCompress", vec![("checksum", RawValue::Bool(true))]).unwrap();
    let with_sum =
        run_with("zstdCompress", &checked, Input::Owned(data.clone()), usize::MAX).unwrap();
    let plain = run("zstdCompress", &data).unwrap();
    assert_eq!(with_sum.len(), plain.len() + 4, "a 4-byte content checksum");
    assert_eq!(run("zstdDecompress", &with_sum).unwrap(), data);
    // A flipped checksum byte is caught.
    let mut bad = with_sum.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(code_of(run("zstdDecompress", &bad)), "ZSTD_error_checksum_wrong");
    let out_of_range = with("zstdCompress", vec![("level", RawValue::Number(23.0))]);
    assert!(matches!(out_of_range, Err(ParamError::Range { name: "level", .. })));
}

/// node:zlib's `params`: zstd's own keys, taken or refused as zstd takes
/// or refuses them when the stream is made.
#[test]
fn zstd_s_own_parameters_are_checked_by_zstd_and_reach_it() {
    let given = |list: &[(i32, i32)]| {
        let bytes = pairs(list);
        with("zstdCompress", vec![("parameters", RawValue::Bytes(&bytes))])
    };
    // zstd clamps a level, takes a strategy of 0 (the level's) and the
    // workers' parameters (ignored here).
    for ok in [(100, 23), (100, -200_000), (107, 0), (107, 9), (400, 2), (401, 1 << 20), (101, 0)] {
        assert!(given(&[ok]).is_ok(), "{ok:?}");
    }
    let refusal = ParamError::Refused { message: "Setting parameter failed".into() };
    for bad in [(101, 9), (107, 10), (105, 8), (50, 1), (0, 1), (1000, 1)] {
        assert_eq!(given(&[bad]).unwrap_err(), refusal, "{bad:?}");
    }
    // They reach zstd: a checksum, a window.
    let data = text(100_000);
    let run_given = |list: &[(i32, i32)]| {
        run_with("zstdCompress", &given(list).unwrap(), Input::Owned(data.clone()), usize::MAX)
            .unwrap()
    };
    let plain = run("zstdCompress", &data).unwrap();
    assert_eq!(run_given(&[(201, 1)]).len(), plain.len() + 4);
    let small_window = run_given(&[(101, 10), (200, 0)]);
    let read = |window_log: i32, frame: &[u8]| {
        let bytes = pairs(&[(100, window_log)]);
        let p = with("zstdDecompress", vec![("parameters", RawValue::Bytes(&bytes))]).unwrap();
        run_with("zstdDecompress", &p, Input::Owned(frame.to_vec()), usize::MAX)
    };
    assert_eq!(read(10, &small_window).unwrap(), data);
    // A frame needing more window than the decoder is given: zstd's error.
    assert_eq!(code_of(read(10, &plain)), "ZSTD_error_frameParameter_windowTooLarge");
    let refusal = ParamError::Refused { message: "Setting parameter failed".into() };
    for bad in [(100, 9), (100, 32), (101, 1)] {
        let bytes = pairs(&[bad]);
        let p = with("zstdDecompress", vec![("parameters", RawValue::Bytes(&bytes))]);
        assert_eq!(p.unwrap_err(), refusal, "{bad:?}");
    }
}

/// A size pledged is held to, as zstd holds it, whole or split.
#[test]
fn a_pledged_size_is_honoured() {
    for n in [1_000usize, 2 * super::ZSTD_MIN_SPLIT + 5] {
        let data = text(n);
        let pledge = |size: usize| params("zstdCompress", &[("pledgedSrcSize", size as f64)]);
        let right = run_with("zstdCompress", &pledge(n), Input::Owned(data.clone()), usize::MAX);
        assert_eq!(run("zstdDecompress", &right.unwrap()).unwrap(), data, "{n}");
        for wrong in [0, n - 1, n + 1] {
            let got = run_with("zstdCompress", &pledge(wrong), Input::Owned(data.clone()), 1 << 30);
            assert_eq!(code_of(got), "ZSTD_error_srcSize_wrong", "{n} pledged as {wrong}");
        }
    }
}

#[test]
fn what_follows_a_frame_is_read_as_node_zlib_s_lines_read_it() {
    let a = run("zstdCompress", b"hello ").unwrap();
    let b = run("zstdCompress", b"world").unwrap();
    let skippable = [0x50u8, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];
    let decode = |trailing: f64, reject: bool, input: Vec<u8>| {
        let p = with(
            "zstdDecompress",
            vec![
                ("trailing", RawValue::Number(trailing)),
                ("rejectGarbage", RawValue::Bool(reject)),
            ],
        )
        .unwrap();
        run_with("zstdDecompress", &p, Input::Owned(input), usize::MAX)
    };
    let two = [a.clone(), b.clone()].concat();
    let junk = [a.clone(), b"xyz".to_vec()].concat();
    let skipped = [a.clone(), skippable.to_vec(), b.clone()].concat();
    // Node 24+: frames told by their magic; anything else ends the input.
    assert_eq!(decode(2.0, false, two.clone()).unwrap(), b"hello world");
    assert_eq!(decode(2.0, false, junk.clone()).unwrap(), b"hello ");
    assert_eq!(decode(2.0, false, skipped.clone()).unwrap(), b"hello world");
    assert_eq!(decode(2.0, false, [a.clone(), b[..2].to_vec()].concat()).unwrap(), b"hello ");
    let zeros = [a.clone(), vec![0; 4], b.clone()].concat();
    assert_eq!(decode(2.0, false, zeros).unwrap(), b"hello ");
    assert_eq!(code_of(decode(2.0, true, junk.clone())), "ERR_TRAILING_JUNK_AFTER_STREAM_END");
    assert_eq!(decode(2.0, true, two.clone()).unwrap(), b"hello world");
    // Node 22: the first frame of a write.
    assert_eq!(decode(1.0, false, two.clone()).unwrap(), b"hello ");
    assert_eq!(decode(1.0, false, skipped).unwrap(), b"hello ");
    assert_eq!(code_of(decode(1.0, true, two)), "ERR_TRAILING_JUNK_AFTER_STREAM_END");
    // A magic number cut between two pieces of a stream's input waits for its rest.
    for cut in 1..4 {
        let first = [a.clone(), b[..cut].to_vec()].concat();
        assert_eq!(stream_of(2.0, &[&first, &b[cut..]]), b"hello world", "{cut}");
        assert_eq!(stream_of(2.0, &[&first, b"xyz"]), b"hello ", "{cut}");
    }
    // The pool's own: frames, and anything else is corrupt.
    assert_eq!(code_of(decode(0.0, false, junk)), "ZSTD_error_prefix_unknown");
}

/// A stream decoder's output of `pieces`, each a chunk of its own.
fn stream_of(trailing: f64, pieces: &[&[u8]]) -> Vec<u8> {
    use crate::kernels::{RunContext, Sink};
    use std::sync::atomic::AtomicBool;
    let p = with("zstdDecompress", vec![("trailing", RawValue::Number(trailing))]).unwrap();
    let mut state = kernel("zstdDecompress").start(&p, None).unwrap();
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let mut out = Sink::new(usize::MAX);
    for piece in pieces {
        state.update(piece, &mut out, &ctx).unwrap();
    }
    state.finish(&mut out, &ctx).unwrap();
    out.into_output().as_bytes().to_vec()
}

#[test]
fn a_dictionary_is_used_both_ways_and_needed_to_decode() {
    let dictionary: &[u8] = b"tidepool queue age thread {\"id\": 42, \"user\": ";
    let with_dictionary =
        |name: &str| with(name, vec![("dictionary", RawValue::Bytes(dictionary))]).unwrap();
    let data = text(20_000);
    let p = with_dictionary("zstdCompress");
    let packed = run_with("zstdCompress", &p, Input::Owned(data.clone()), usize::MAX).unwrap();
    assert!(packed != run("zstdCompress", &data).unwrap(), "the dictionary changed nothing");
    let p = with_dictionary("zstdDecompress");
    let back = run_with("zstdDecompress", &p, Input::Owned(packed.clone()), usize::MAX);
    assert!(back.unwrap() == data);
    // Without it, the frame cannot be read: a typed error, not wrong bytes
    // (a raw dictionary's frame names none: zstd finds it corrupt).
    assert_eq!(code_of(run("zstdDecompress", &packed)), "ZSTD_error_corruption_detected");
}

#[test]
fn a_decoder_told_not_to_finish_takes_a_cut_input() {
    let data = text(100_000);
    let packed = run("zstdCompress", &data).unwrap();
    let cut = &packed[..packed.len() / 2];
    assert_eq!(code_of(run("zstdDecompress", cut)), "Z_BUF_ERROR");
    let p = params("zstdDecompress", &[("finishFlush", 1.0)]);
    let got = run_with("zstdDecompress", &p, Input::Owned(cut.to_vec()), usize::MAX).unwrap();
    assert!(data.starts_with(&got), "a prefix of the input");
    // The whole input is whole, as without it.
    assert_eq!(run_with("zstdDecompress", &p, Input::Owned(packed), usize::MAX).unwrap(), data);
}

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
    let roomy = run_with("zstdDecompress", &Params::NONE, Input::Owned(frame), 256 << 20).unwrap();
    assert_eq!(roomy, vec![7u8; 100]);
}

#[test]
fn a_streams_reported_size_is_what_its_context_holds() {
    use crate::kernels::model::{Kernel, Transform};
    use crate::kernels::{RunContext, Sink};
    use std::sync::atomic::AtomicBool;
    let never = AtomicBool::new(false);
    let ctx = RunContext::new(&never);
    for level in [1, 3, 6] {
        let p = params("zstdCompress", &[("level", f64::from(level))]);
        let p = p.get::<super::compress::ZstdParams>().unwrap();
        let mut state = Kernel::start(&super::compress::ZstdCompress, p, None).unwrap();
        let mut out = Sink::new(usize::MAX);
        state.update(&text(4 << 20), &mut out, &ctx).unwrap();
        let held = state.held_bytes();
        let reported = Kernel::state_bytes(&super::compress::ZstdCompress, p);
        assert!(
            reported >= held * 9 / 10 && reported <= held * 2,
            "level {level}: reported {reported}, held {held}"
        );
    }
}
