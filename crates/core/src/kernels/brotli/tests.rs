//! brotli's tests: round trips, parameters, node:zlib's errors and edges.

use super::*;
use crate::input::Input;
use crate::kernels::codec::testing::{check_pair, params, run, run_with, text};

#[test]
fn round_trips_limits_bombs_truncation_and_cancellation() {
    check_pair("brotliCompress", "brotliDecompress", 1000);
}

#[test]
fn quality_window_and_mode_reach_brotli() {
    let data = text(200_000);
    let q1 = run_with(
        "brotliCompress",
        &params("brotliCompress", &[("quality", 1.0)]),
        Input::Owned(data.clone()),
        usize::MAX,
    )
    .unwrap();
    let q11 = run("brotliCompress", &data).unwrap();
    assert!(q11.len() < q1.len(), "{} vs {}", q11.len(), q1.len());
    for p in [[("lgwin", 10.0)], [("mode", 1.0)], [("sizeHint", 1000.0)]] {
        let packed = run_with(
            "brotliCompress",
            &params("brotliCompress", &p),
            Input::Owned(data.clone()),
            usize::MAX,
        )
        .unwrap();
        assert_eq!(run("brotliDecompress", &packed).unwrap(), data, "{p:?}");
    }
}

/// A window past 24 bits only with `largeWindow`, both ways: a standard
/// decoder refuses the large-window format, a large-window one reads it
/// and the standard format too.
#[test]
fn a_large_window_is_asked_for_on_both_sides() {
    use crate::kernels::params::RawValue;
    let large = |name: &str, extra: &[(&'static str, f64)]| {
        let mut raw = vec![("largeWindow", RawValue::Bool(true))];
        raw.extend(extra.iter().map(|&(n, v)| (n, RawValue::Number(v))));
        crate::kernels::codec::testing::kernel(name).params(&RawParams::new(raw)).unwrap()
    };
    let data = text(300_000);
    let encoder = large("brotliCompress", &[("lgwin", 28.0), ("quality", 5.0)]);
    let packed =
        run_with("brotliCompress", &encoder, Input::Owned(data.clone()), usize::MAX).unwrap();
    let decoder = large("brotliDecompress", &[]);
    let read = |packed: &[u8]| {
        run_with("brotliDecompress", &decoder, Input::Owned(packed.to_vec()), usize::MAX)
    };
    assert_eq!(read(&packed).unwrap(), data);
    assert!(run("brotliDecompress", &packed).is_err(), "a standard decoder refuses it");
    assert_eq!(read(&run("brotliCompress", &data).unwrap()).unwrap(), data);
    let kernel = crate::kernels::codec::testing::kernel("brotliCompress");
    let err = kernel
        .params(&RawParams::new(vec![("lgwin", RawValue::Number(25.0))]))
        .expect_err("25 bits without largeWindow");
    assert!(err.to_string().contains("lgwin"), "{err}");
}

#[test]
fn corrupt_input_has_node_s_code_and_data_after_the_stream_is_ignored() {
    let err = run("brotliDecompress", b"garbage!!").unwrap_err();
    assert_eq!(
        err,
        KernelError::Format {
            code: "ERR__ERROR_FORMAT_PADDING_1",
            message: "Decompression failed".into()
        }
    );
    assert_eq!(errno_of("ERR__ERROR_FORMAT_PADDING_1"), Some(-14));
    let tail = [run("brotliCompress", b"hello").unwrap(), b"xyz".to_vec()].concat();
    assert_eq!(run("brotliDecompress", &tail).unwrap(), b"hello");
}

#[test]
fn a_decoder_told_not_to_finish_takes_a_cut_input() {
    let data = text(100_000);
    let packed = run("brotliCompress", &data).unwrap();
    let cut = &packed[..packed.len() / 2];
    assert!(matches!(
        run("brotliDecompress", cut),
        Err(KernelError::Format { code: "Z_BUF_ERROR", .. })
    ));
    let p = params("brotliDecompress", &[("finishFlush", 1.0)]);
    let got = run_with("brotliDecompress", &p, Input::Owned(cut.to_vec()), usize::MAX).unwrap();
    assert!(data.starts_with(&got), "a prefix of the input");
    // The whole input is whole, as without it.
    let p = params("brotliDecompress", &[("finishFlush", 1.0)]);
    assert_eq!(run_with("brotliDecompress", &p, Input::Owned(packed), usize::MAX).unwrap(), data);
}

#[test]
fn the_block_and_distance_parameters_are_taken_and_checked() {
    // Text over a small alphabet with no long repeats.
    let mut x = 12345u32;
    let data: Vec<u8> = (0..60_000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            b"etaoin shrdlu"[(x >> 16) as usize % 13]
        })
        .collect();
    for extra in [
        ("lgblock", 16.0),
        ("disableLiteralContextModeling", 1.0),
        ("npostfix", 2.0),
        ("ndirect", 8.0),
    ] {
        let p = params("brotliCompress", &[("quality", 10.0), extra]);
        let packed =
            run_with("brotliCompress", &p, Input::Owned(data.clone()), usize::MAX).unwrap();
        assert!(run("brotliDecompress", &packed).unwrap() == data, "{}", extra.0);
    }
    let kernel = crate::kernels::codec::testing::kernel("brotliCompress");
    for (name, value) in
        [("lgblock", 15.0), ("disableLiteralContextModeling", 2.0), ("ndirect", 3.0)]
    {
        let raw = RawParams::new(vec![
            ("npostfix", crate::kernels::RawValue::Number(1.0)),
            (name, crate::kernels::RawValue::Number(value)),
        ]);
        assert!(kernel.params(&raw).is_err(), "{name} {value}");
    }
}

#[test]
fn input_after_the_stream_is_refused_when_asked() {
    let packed = run("brotliCompress", b"hello").unwrap();
    let tail = [packed.clone(), b"xyz".to_vec()].concat();
    let rejecting = crate::kernels::codec::testing::kernel("brotliDecompress")
        .params(&RawParams::new(vec![("rejectGarbage", crate::kernels::RawValue::Bool(true))]))
        .unwrap();
    let got = run_with("brotliDecompress", &rejecting, Input::Owned(tail), usize::MAX);
    assert!(
        matches!(got, Err(KernelError::Format { code: "ERR_TRAILING_JUNK_AFTER_STREAM_END", .. })),
        "{got:?}"
    );
    let whole = run_with("brotliDecompress", &rejecting, Input::Owned(packed), usize::MAX);
    assert_eq!(whole.unwrap(), b"hello");
}
