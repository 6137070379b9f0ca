//! Property tests (proptest) of the input path: arbitrary bytes cut into
//! arbitrary parts, including empty ones, read through `Input` and fed to
//! every kernel, must behave exactly like the contiguous bytes.

use std::sync::atomic::AtomicBool;

use proptest::prelude::*;
use tidepool_core::kernels::{
    self, AnyKernel, Params, RawParams, RawValue, RunContext, Sink, BUILTIN,
};
use tidepool_core::{Input, RawSlice};

/// Splits `data` at `cuts` (positions, any order, duplicates allowed).
fn split(data: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
    at.sort();
    let mut parts = Vec::new();
    let mut start = 0;
    for c in at {
        parts.push(data[start..c].to_vec());
        start = c;
    }
    parts.push(data[start..].to_vec());
    parts
}

fn borrowed(parts: &[Vec<u8>]) -> Input {
    // SAFETY: `parts` outlives every use of the returned Input in these tests
    // and is not mutated meanwhile.
    Input::Many(parts.iter().map(|p| unsafe { RawSlice::new(p.as_ptr(), p.len()) }).collect())
}

/// Runs `kernel` with `params` over `input`.
fn run(kernel: &dyn AnyKernel, params: &Params, input: &Input) -> Vec<u8> {
    let flag = AtomicBool::new(false);
    let mut out = Sink::new(usize::MAX);
    kernel.run(params, input, &RunContext::new(&flag), &mut out).unwrap();
    out.into_output().as_bytes().to_vec()
}

fn by_name(name: &str) -> &'static dyn AnyKernel {
    kernels::get(kernels::find(name).unwrap()).unwrap()
}

/// The decoder of a compressor, and the other way round.
fn partner(name: &str) -> Option<&'static str> {
    kernels::CODEC_PAIRS.iter().find_map(|&(enc, dec)| {
        if name == enc {
            Some(dec)
        } else if name == dec {
            Some(enc)
        } else {
            None
        }
    })
}

/// The parameters a kernel that needs some runs with here (cheap costs).
fn params_of(name: &str) -> Vec<(&'static str, RawValue<'static>)> {
    let n = RawValue::Number;
    let text = RawValue::Text;
    match name {
        "hmac" => vec![("hash", text("sha256")), ("key", text("k"))],
        "pbkdf2" => vec![
            ("digest", text("sha256")),
            ("salt", text("s")),
            ("iterations", n(2.0)),
            ("keylen", n(40.0)),
        ],
        "scrypt" => vec![("N", n(16.0)), ("r", n(1.0)), ("p", n(1.0)), ("keylen", n(16.0))],
        "hkdf" => vec![("digest", text("sha256")), ("keylen", n(40.0))],
        "argon2id" | "argon2i" | "argon2d" => vec![
            ("nonce", text("8 bytes!")),
            ("parallelism", n(1.0)),
            ("tagLength", n(16.0)),
            ("memory", n(8.0)),
            ("passes", n(1.0)),
        ],
        "bcrypt" => vec![("cost", n(4.0)), ("salt", text("sixteen bytes!!!"))],
        _ => vec![],
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn parts_read_as_their_concatenation(data in proptest::collection::vec(any::<u8>(), 0..2048),
                                         cuts in proptest::collection::vec(any::<usize>(), 0..12),
                                         prefix in 0usize..64) {
        let parts = split(&data, &cuts);
        let input = borrowed(&parts);
        prop_assert_eq!(input.len(), data.len());
        let mut seen = Vec::new();
        input.for_each_part::<()>(|p| { seen.extend_from_slice(p); Ok(()) }).unwrap();
        prop_assert_eq!(&seen, &data);
        let mut buf = vec![0u8; prefix];
        let n = input.read_prefix(&mut buf);
        prop_assert_eq!(n, prefix.min(data.len()));
        prop_assert_eq!(&buf[..n], &data[..n]);
    }

    #[test]
    fn every_kernel_ignores_how_the_input_is_cut(data in proptest::collection::vec(any::<u8>(), 0..4096),
                                                 cuts in proptest::collection::vec(any::<usize>(), 0..8)) {
        let parts = split(&data, &cuts);
        for kernel in BUILTIN.iter().filter(|k| !matches!(k.name(), "spin" | "sleep" | "panic")) {
            let name = kernel.name();
            let params = kernel.params(&RawParams::new(params_of(name))).unwrap();
            if kernel.expands() {
                // A decoder is cut across its compressed input.
                let packed = run(by_name(partner(name).unwrap()), &Params::NONE, &Input::Owned(data.clone()));
                let packed_parts = split(&packed, &cuts);
                prop_assert_eq!(run(*kernel, &params, &borrowed(&packed_parts)), data.clone(), "{}", name);
                continue;
            }
            let whole = run(*kernel, &params, &Input::Owned(data.clone()));
            let cut = run(*kernel, &params, &borrowed(&parts));
            match partner(name) {
                // A compressor's bytes may depend on the cuts; what they decode to may not.
                Some(decoder) => {
                    let decode = |b: Vec<u8>| run(by_name(decoder), &Params::NONE, &Input::Owned(b));
                    prop_assert_eq!(decode(whole), data.clone(), "{}", name);
                    prop_assert_eq!(decode(cut), data.clone(), "{}", name);
                }
                None => prop_assert_eq!(whole, cut, "{}", name),
            }
        }
    }

    #[test]
    fn short_duration_inputs_are_refused_not_misread(data in proptest::collection::vec(any::<u8>(), 0..4),
                                                     cuts in proptest::collection::vec(any::<usize>(), 0..3)) {
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let parts = split(&data, &cuts);
        let spin = kernels::get(kernels::find("spin").unwrap()).unwrap();
        prop_assert!(spin.compute(&borrowed(&parts), &ctx).is_err());
    }
}
