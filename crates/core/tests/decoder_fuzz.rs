//! Corrupt-input fuzzing of every decoder (proptest): valid streams of
//! random or text-like data, then flipped, cut, inserted and overwritten
//! bytes. A decoder must return its output or a typed error (a format
//! error, or too large), never panic, never hang, and never hold more than
//! its output limit.
//!
//!   cargo test -p tidepool-core --release --test decoder_fuzz         (CI: 32 cases)
//!   PROPTEST_CASES=20000 npm run fuzz:decoders                        (a longer run)

use std::sync::atomic::AtomicBool;

use proptest::prelude::*;
use tidepool_core::kernels::{self, KernelError, Params, RawParams, RawValue, RunContext, Sink};
use tidepool_core::Input;

const LIMIT: usize = 1 << 20;

fn run(name: &str, input: &[u8], limit: usize) -> (Result<(), KernelError>, usize) {
    let kernel = kernels::get(kernels::find(name).unwrap()).unwrap();
    let flag = AtomicBool::new(false);
    let mut out = Sink::new(limit);
    let result =
        kernel.run(&Params::NONE, &Input::Owned(input.to_vec()), &RunContext::new(&flag), &mut out);
    (result, out.len())
}

/// What a damaged stream may do: decode, or fail with a typed error.
fn acceptable(result: &Result<(), KernelError>) -> bool {
    matches!(result, Ok(()) | Err(KernelError::Format { .. }) | Err(KernelError::TooLarge { .. }))
}

#[derive(Debug, Clone)]
enum Damage {
    Flip(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
    Overwrite(usize, Vec<u8>),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, mask)| Damage::Flip(at, mask)),
        any::<usize>().prop_map(Damage::Cut),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, b)| Damage::Insert(at, b)),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, b)| Damage::Overwrite(at, b)),
    ]
}

fn apply(mut bytes: Vec<u8>, damages: &[Damage]) -> Vec<u8> {
    for d in damages {
        let n = bytes.len().max(1);
        match d {
            Damage::Flip(at, mask) if !bytes.is_empty() => bytes[at % n] ^= mask,
            Damage::Cut(at) => bytes.truncate(at % n),
            Damage::Insert(at, b) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, b.iter().copied());
            }
            Damage::Overwrite(at, b) if !bytes.is_empty() => {
                for (i, byte) in b.iter().enumerate() {
                    let k = (at + i) % bytes.len();
                    bytes[k] = *byte;
                }
            }
            _ => {}
        }
    }
    bytes
}

fn plain() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..20_000),
        // Text-like: few symbols, long matches (exercises back-references).
        proptest::collection::vec(
            prop_oneof![Just(b'a'), Just(b'b'), Just(b' '), Just(b'\n')],
            0..100_000
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn damaged_streams_decode_or_fail_typed(data in plain(), damages in proptest::collection::vec(damage(), 1..4)) {
        for &(encoder, decoder) in kernels::CODEC_PAIRS {
            let (packed, _) = {
                let kernel = kernels::get(kernels::find(encoder).unwrap()).unwrap();
                let flag = AtomicBool::new(false);
                let mut out = Sink::new(usize::MAX);
                // brotli's default quality (11) is slow; the stream's shape, not its size, matters here.
                let params = match encoder {
                    "brotliCompress" => kernel.params(&RawParams::new(vec![("quality", RawValue::Number(4.0))])).unwrap(),
                    _ => Params::NONE,
                };
                kernel.run(&params, &Input::Owned(data.clone()), &RunContext::new(&flag), &mut out).unwrap();
                (out.into_output().as_bytes().to_vec(), ())
            };
            let broken = apply(packed, &damages);
            let (result, held) = run(decoder, &broken, LIMIT);
            prop_assert!(acceptable(&result), "{}: {:?}", decoder, result);
            prop_assert!(held <= LIMIT, "{} held {} bytes", decoder, held);
        }
    }

    #[test]
    fn random_bytes_decode_or_fail_typed(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        for &(_, decoder) in kernels::CODEC_PAIRS {
            let (result, held) = run(decoder, &bytes, LIMIT);
            prop_assert!(acceptable(&result), "{}: {:?}", decoder, result);
            prop_assert!(held <= LIMIT);
        }
    }
}
