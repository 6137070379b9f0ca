//! The deflate family's tests: round trips, Node's edge behaviour, limits.

use super::*;
use crate::input::Input;
use crate::kernels::params::RawValue;
use crate::kernels::Params;
use crate::kernels::{ParamError, RawParams, RunContext, Sink};
use std::sync::atomic::AtomicBool;

use crate::kernels::codec::testing::{check_pair, kernel, noise, params, run, run_with, text};

const PAIRS: [(&str, &str); 3] =
    [("gzip", "gunzip"), ("deflate", "inflate"), ("deflateRaw", "inflateRaw")];

#[test]
fn every_pair_round_trips_and_stops_at_limits_truncation_and_cancellation() {
    for (enc, dec) in PAIRS {
        check_pair(enc, dec, 500);
    }
}

#[test]
fn every_format_round_trips_every_level_and_shape() {
    let shapes =
        [Vec::new(), vec![7], text(64 * 1024), noise(100_000), text(3 * CHUNK_FOR_TESTS + 11)];
    for (enc, dec) in PAIRS {
        for level in [-1.0, 0.0, 1.0, 6.0, 9.0] {
            for data in &shapes {
                let packed = run_with(
                    enc,
                    &params(enc, &[("level", level)]),
                    Input::Owned(data.clone()),
                    usize::MAX,
                )
                .unwrap();
                assert_eq!(
                    &run(dec, &packed).unwrap(),
                    data,
                    "{enc} level {level}, {} bytes",
                    data.len()
                );
            }
        }
    }
}

const CHUNK_FOR_TESTS: usize = crate::kernels::CHUNK;

#[test]
fn every_parameter_reaches_zlib() {
    let data = text(200_000);
    let default = run("deflate", &data).unwrap();
    for (name, value) in [("level", 1.0), ("windowBits", 9.0), ("memLevel", 1.0), ("strategy", 2.0)]
    {
        let packed = run_with(
            "deflate",
            &params("deflate", &[(name, value)]),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        assert_ne!(packed, default, "{name} changed nothing");
        assert_eq!(run("inflate", &packed).unwrap(), data, "{name}");
    }
    // A stream made with a 32 KiB window needs it: inflate with 9 bits refuses.
    let small = run_with(
        "inflate",
        &params("inflate", &[("windowBits", 9.0)]),
        Input::Owned(default.clone()),
        usize::MAX,
    );
    assert!(matches!(small, Err(KernelError::Format { code: "Z_DATA_ERROR", .. })), "{small:?}");
    // windowBits 0: the header's.
    let header = run_with(
        "inflate",
        &params("inflate", &[("windowBits", 0.0)]),
        Input::Owned(default),
        usize::MAX,
    )
    .unwrap();
    assert_eq!(header, data);
}

#[test]
fn parameters_out_of_node_ranges_are_refused() {
    let refused = |k: &str, name: &'static str, v: f64| {
        let raw = RawParams::new(vec![(name, RawValue::Number(v))]);
        kernel(k).params(&raw).unwrap_err()
    };
    for (k, name, v) in [
        ("gzip", "level", 10.0),
        ("gzip", "level", -2.0),
        ("gzip", "windowBits", 8.0),
        ("deflate", "windowBits", 16.0),
        ("deflate", "memLevel", 0.0),
        ("deflate", "strategy", 5.0),
        ("inflateRaw", "windowBits", 0.0),
        ("inflate", "windowBits", 7.0),
    ] {
        assert!(matches!(refused(k, name, v), ParamError::Range { .. }), "{k} {name} {v}");
    }
    let unknown = kernel("gunzip")
        .params(&RawParams::new(vec![("level", RawValue::Number(1.0))]))
        .unwrap_err();
    assert!(matches!(unknown, ParamError::Unknown { .. }));
}

#[test]
fn gunzip_joins_members_and_treats_zeros_after_a_member_as_padding() {
    let (a, b) = (run("gzip", b"hello ").unwrap(), run("gzip", b"world").unwrap());
    let both = [a.clone(), b].concat();
    assert_eq!(run("gunzip", &both).unwrap(), b"hello world");
    // Split so that the second member starts exactly at a chunk boundary.
    let flag = AtomicBool::new(false);
    let first: &'static [u8] = Box::leak(a.clone().into_boxed_slice());
    let second: &'static [u8] = Box::leak(both[a.len()..].to_vec().into_boxed_slice());
    let input = Input::Many(
        vec![
            crate::input::RawSlice::from_static(first),
            crate::input::RawSlice::from_static(second),
        ]
        .into_boxed_slice(),
    );
    let mut out = Sink::new(usize::MAX);
    kernel("gunzip").run(&Params::NONE, &input, &RunContext::new(&flag), &mut out).unwrap();
    assert_eq!(out.into_output().as_bytes(), b"hello world");
    let padded = [a.clone(), vec![0; 10], b"anything after padding".to_vec()].concat();
    assert_eq!(run("gunzip", &padded).unwrap(), b"hello ");
    let garbage = [a.clone(), b"garbage".to_vec()].concat();
    assert!(matches!(
        run("gunzip", &garbage),
        Err(KernelError::Format { code: "Z_DATA_ERROR", .. })
    ));
    let cut_header = [a, vec![0x1f]].concat();
    assert!(matches!(
        run("gunzip", &cut_header),
        Err(KernelError::Format { code: "Z_BUF_ERROR", .. })
    ));
}

#[test]
fn data_after_a_zlib_or_raw_stream_is_ignored() {
    for (enc, dec) in [("deflate", "inflate"), ("deflateRaw", "inflateRaw")] {
        let tail = [run(enc, b"abc").unwrap(), b"xyz".to_vec()].concat();
        assert_eq!(run(dec, &tail).unwrap(), b"abc", "{dec}");
    }
}

#[test]
fn truncated_empty_and_corrupt_inputs_get_zlib_codes() {
    for (enc, dec) in PAIRS {
        let packed = run(enc, &text(10_000)).unwrap();
        let cut = run(dec, &packed[..packed.len() - 3]);
        assert!(
            matches!(cut, Err(KernelError::Format { code: "Z_BUF_ERROR", ref message }) if message == "unexpected end of file"),
            "{dec}: {cut:?}"
        );
        assert!(
            matches!(run(dec, &[]), Err(KernelError::Format { code: "Z_BUF_ERROR", .. })),
            "{dec} of nothing"
        );
    }
    for dec in ["gunzip", "inflate"] {
        let bad = run(dec, b"not compressed at all");
        assert!(
            matches!(bad, Err(KernelError::Format { code: "Z_DATA_ERROR", .. })),
            "{dec}: {bad:?}"
        );
    }
    // A flipped bit in the body: the checksum (or the code) catches it.
    let mut packed = run("gzip", &text(10_000)).unwrap();
    let mid = packed.len() / 2;
    packed[mid] ^= 0x40;
    assert!(matches!(
        run("gunzip", &packed),
        Err(KernelError::Format { code: "Z_DATA_ERROR", .. })
    ));
}

#[test]
fn the_gzip_header_names_unix_like_node() {
    // Byte 9 is the OS: Node writes 3 (Unix) on Linux and macOS.
    assert_eq!(run("gzip", b"x").unwrap()[9], 3);
}

/// Checked parameters of `name` with a `dictionary`.
fn with_dictionary(name: &str, dictionary: &[u8]) -> Params {
    kernel(name).params(&RawParams::new(vec![("dictionary", RawValue::Bytes(dictionary))])).unwrap()
}

#[test]
fn a_preset_dictionary_is_set_and_asked_for_as_node_does() {
    let dictionary = b"tidepool queue age thread {\"id\":";
    let data = text(10_000);
    for (enc, decoders) in [("deflate", &["inflate", "unzip"][..]), ("deflateRaw", &["inflateRaw"])]
    {
        let packed = run_with(
            enc,
            &with_dictionary(enc, dictionary),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        // The dictionary is used: the output differs from one made without it.
        assert_ne!(packed, run(enc, &data).unwrap(), "{enc}");
        for &dec in decoders {
            let back = run_with(
                dec,
                &with_dictionary(dec, dictionary),
                Input::Owned(packed.clone()),
                usize::MAX,
            );
            assert_eq!(back.unwrap(), data, "{enc} -> {dec}");
        }
    }
    // A zlib stream names its dictionary: none given, or another, is Z_NEED_DICT.
    let packed = run_with(
        "deflate",
        &with_dictionary("deflate", dictionary),
        Input::Owned(data.clone()),
        usize::MAX,
    )
    .unwrap();
    for (params, words) in [
        (Params::NONE, "Missing dictionary"),
        (with_dictionary("inflate", b"another dictionary"), "Bad dictionary"),
    ] {
        let got = run_with("inflate", &params, Input::Owned(packed.clone()), usize::MAX);
        match got {
            Err(KernelError::Format { code: "Z_NEED_DICT", message }) => assert_eq!(message, words),
            other => panic!("{words}: {other:?}"),
        }
    }
    // gzip has no dictionary: refused by name.
    let refused =
        kernel("gzip").params(&RawParams::new(vec![("dictionary", RawValue::Bytes(dictionary))]));
    assert!(matches!(refused, Err(ParamError::Unknown { .. })), "{refused:?}");
}

#[test]
fn unzip_tells_gzip_from_zlib_and_joins_gzip_members() {
    let data = text(50_000);
    let zlib = run("deflate", &data).unwrap();
    assert_eq!(run("unzip", &zlib).unwrap(), data);
    let mut members = run("gzip", &data[..20_000]).unwrap();
    members.extend(run("gzip", &data[20_000..]).unwrap());
    assert_eq!(run("unzip", &members).unwrap(), data);
    // A zlib stream ends the input: what follows is ignored, as by inflate.
    let mut trailing = zlib.clone();
    trailing.extend_from_slice(b"garbage");
    assert_eq!(run("unzip", &trailing).unwrap(), data);
    let bad = run("unzip", b"not compressed at all");
    assert!(matches!(bad, Err(KernelError::Format { code: "Z_DATA_ERROR", .. })), "{bad:?}");
    let cut = run("unzip", &zlib[..zlib.len() / 2]);
    assert!(matches!(cut, Err(KernelError::Format { code: "Z_BUF_ERROR", .. })), "{cut:?}");
    // After a gzip member, node:zlib's zlib detects each member anew: a
    // zlib stream may follow (and members after it).
    let mixed = [run("gzip", b"a").unwrap(), run("deflate", b"b").unwrap()].concat();
    assert_eq!(run("unzip", &mixed).unwrap(), b"ab");
    let again = [mixed.clone(), run("gzip", b"c").unwrap()].concat();
    assert_eq!(run("unzip", &again).unwrap(), b"abc");
    // gunzip reads gzip members only.
    assert!(matches!(run("gunzip", &mixed), Err(KernelError::Format { code: "Z_DATA_ERROR", .. })));
}

/// `dec` with `rejectGarbage` (node:zlib's `rejectGarbageAfterEnd`) at `rule`.
fn rejecting(dec: &str, rule: f64, input: &[u8]) -> Result<Vec<u8>, KernelError> {
    run_with(
        dec,
        &params(dec, &[("rejectGarbage", rule)]),
        Input::Owned(input.to_vec()),
        usize::MAX,
    )
}

#[test]
fn input_after_the_end_is_refused_when_asked_as_node_zlib_s_lines_refuse_it() {
    let junk = "ERR_TRAILING_JUNK_AFTER_STREAM_END";
    let code = |r: Result<Vec<u8>, KernelError>| match r {
        Err(KernelError::Format { code, .. }) => code,
        other => panic!("{other:?}"),
    };
    let (a, b) = (run("gzip", b"a").unwrap(), run("gzip", b"b").unwrap());
    let two = [a.clone(), b].concat();
    let padded = [a.clone(), vec![0; 3]].concat();
    // Node 22: the members are read; what follows the last one is refused.
    assert_eq!(rejecting("gunzip", 1.0, &two).unwrap(), b"ab");
    assert_eq!(code(rejecting("gunzip", 1.0, &padded)), junk);
    // Node 24+: one member, and nothing after it.
    assert_eq!(code(rejecting("gunzip", 2.0, &two)), junk);
    assert_eq!(code(rejecting("unzip", 2.0, &two)), junk);
    assert_eq!(rejecting("gunzip", 2.0, &a).unwrap(), b"a");
    for (enc, dec) in [("deflate", "inflate"), ("deflateRaw", "inflateRaw")] {
        let tail = [run(enc, b"abc").unwrap(), b"x".to_vec()].concat();
        assert_eq!(code(rejecting(dec, 1.0, &tail)), junk, "{dec}");
        assert_eq!(rejecting(dec, 2.0, &tail[..tail.len() - 1]).unwrap(), b"abc", "{dec}");
    }
}

/// zlib's window: a decoder told a smaller window than the stream's refuses
/// a distance past it, with zlib's words (the fast path's too).
#[test]
fn a_smaller_window_refuses_distances_past_it_in_zlib_s_words() {
    let data = text(100_000);
    for (enc, dec) in [("deflateRaw", "inflateRaw"), ("gzip", "gunzip"), ("gzip", "unzip")] {
        // zlib-rs's stream, whose matches reach past 512 bytes (libdeflate's
        // of this text stay within them).
        let packed = super::whole_body::without(|| run(enc, &data)).unwrap();
        for chunk in [None, Some(16_384.0)] {
            let mut given = vec![("windowBits", 9.0)];
            given.extend(chunk.map(|size| ("chunkSize", size)));
            let p = params(dec, &given);
            let got = run_with(dec, &p, Input::Owned(packed.clone()), usize::MAX);
            assert_eq!(
                got,
                Err(KernelError::Format {
                    code: "Z_DATA_ERROR",
                    message: "invalid distance too far back".into()
                }),
                "{dec} {chunk:?}"
            );
        }
        let small = run_with(
            enc,
            &params(enc, &[("windowBits", 9.0)]),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        let p = params(dec, &[("windowBits", 9.0), ("chunkSize", 64.0)]);
        assert_eq!(run_with(dec, &p, Input::Owned(small), usize::MAX).unwrap(), data, "{dec}");
    }
}

#[test]
fn a_decoder_told_to_flush_at_the_end_takes_a_cut_input() {
    let data = text(50_000);
    for (enc, dec) in [("gzip", "gunzip"), ("deflate", "inflate"), ("deflateRaw", "inflateRaw")] {
        let packed = run(enc, &data).unwrap();
        let cut = &packed[..packed.len() / 2];
        let strict = run(dec, cut);
        assert!(matches!(strict, Err(KernelError::Format { code: "Z_BUF_ERROR", .. })), "{dec}");
        // Z_SYNC_FLUSH: what the cut input holds, and no error.
        let lenient = run_with(
            dec,
            &params(dec, &[("finishFlush", 2.0)]),
            Input::Owned(cut.to_vec()),
            usize::MAX,
        )
        .unwrap();
        assert!(!lenient.is_empty() && data.starts_with(&lenient), "{dec}: {}", lenient.len());
    }
}

#[test]
fn an_encoder_told_to_sync_flush_at_the_end_leaves_its_stream_open() {
    let data = text(20_000);
    for (enc, dec) in [("gzip", "gunzip"), ("deflate", "inflate"), ("deflateRaw", "inflateRaw")] {
        let open_ended = run_with(
            enc,
            &params(enc, &[("finishFlush", 2.0)]),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        // All of it decodes, but the stream has no end: a strict decoder says so.
        let cut = run(dec, &open_ended);
        assert!(matches!(cut, Err(KernelError::Format { code: "Z_BUF_ERROR", .. })), "{enc}");
        let lenient = run_with(
            dec,
            &params(dec, &[("finishFlush", 2.0)]),
            Input::Owned(open_ended),
            usize::MAX,
        )
        .unwrap();
        assert_eq!(lenient, data, "{enc}");
    }
}

/// A whole body goes through libdeflate at the level mapped from zlib's:
/// its output decodes, and is no larger than zlib-rs's at that level.
#[test]
fn a_whole_body_is_no_larger_than_zlib_rs_makes_it_at_each_level() {
    let data = text(64 * 1024);
    for level in -1..=9 {
        for (enc, dec) in [("gzip", "gunzip"), ("deflate", "inflate"), ("deflateRaw", "inflateRaw")]
        {
            let p = params(enc, &[("level", f64::from(level))]);
            let ours = run_with(enc, &p, Input::Owned(data.clone()), usize::MAX).unwrap();
            let zlib_rs = super::whole_body::without(|| {
                run_with(enc, &p, Input::Owned(data.clone()), usize::MAX)
            })
            .unwrap();
            assert_eq!(run(dec, &ours).unwrap(), data, "{enc} {level}");
            assert!(
                ours.len() <= zlib_rs.len(),
                "{enc} {level}: {} > {}",
                ours.len(),
                zlib_rs.len()
            );
            let mapped = super::whole_body::level_for(level).is_some();
            assert_eq!(ours != zlib_rs, mapped, "{enc} {level}: libdeflate's or zlib-rs's");
        }
    }
    // A smaller window, a memLevel, a strategy or a dictionary: zlib-rs's.
    for given in [("windowBits", 12.0), ("memLevel", 9.0), ("strategy", 1.0)] {
        let p = params("deflate", &[given]);
        let ours = run_with("deflate", &p, Input::Owned(data.clone()), usize::MAX).unwrap();
        let zlib_rs = super::whole_body::without(|| {
            run_with("deflate", &p, Input::Owned(data.clone()), usize::MAX)
        })
        .unwrap();
        assert_eq!(ours, zlib_rs, "{given:?}");
    }
}
