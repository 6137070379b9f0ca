//! The frames of the lz4 CLI read back, ours read by it (checked by hand),
//! corrupt and cut frames refused with a reason, and random mutations.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;

use super::format::{
    header_checksum, le32, BLOCK_CHECKSUM, CONTENT_CHECKSUM, CONTENT_SIZE, DICT_ID, FLG_RESERVED,
    INDEPENDENT, MAGIC, STORED, VERSION,
};
use crate::input::Input;
use crate::kernels::codec::testing::{check_pair, kernel, noise, run, run_with, text};
use crate::kernels::codec::{truncated, CORRUPT};
use crate::kernels::params::RawValue;
use crate::kernels::{KernelError, ParamError, Params, RawParams, RunContext, Sink};

/// `printf 'hello, tidepool\n' | lz4 -q` (lz4 CLI 1.9.4).
const CLI_HELLO: &str = "04224d186440a71000008068656c6c6f2c2074696465706f6f6c0a000000002a9e39b0";

/// `lz4 -q -BD -BX -B4 --content-size` (lz4 CLI 1.9.4) of `pattern(300)`:
/// linked blocks, block checksums, the content size and the content
/// checksum, five 64 KiB blocks (the later ones referring back to the
/// earlier: 275 bytes each where independent blocks take over 1000).
const CLI_LINKED: &[&str] = &[
    "04224d185c4000b00400000000004a0e020000ffec00010409101924314051647990a9c4e10526496e95bee91b4a7baee31f5893d0145598",
    "dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7ced65da56cf4fcc50d159de6af38315a43acd67039c3cd97d23c6701cc57527d68c44",
    "f9b57333f0b47a420cd3a1714317e8c09a76543416f5dbc3ad998777695d534b45413f3f41454b535d69778799adc3dbf5163454769ac0e8",
    "174371a1d30c427ab4f03373b5f9448cd62775c51c70c6237dd93c9c0367cd3aa41583f36ade59d150cc4fcf56da65ed7c0d9b30c25bf18e",
    "2dc96c11b35c07af5e0fbd7229dd985514d093581fe3ae7b4a1be9be956e492605e1c4a9907964514031241910090401fb00fffff40f0503",
    "fffff40ff106e80f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe050e10526496ee9f0c546130100000f0ff9fc0f0afa",
    "e80ffb00ffe40f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe450e10526496ec1382f70f70100000f0afeff",
    "f8ffd895bee91b4a7baee31f5893d0145598dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7ced65da56cf4fcc50d159de6af38315a4",
    "3acd67039c3cd97d23c6701cc57527d68c44f9b57333f0b47a420cd3a1714317e8c09a76543416f5dbc3ad998777695d534b45413f3f4145",
    "4b535d69778799adc3dbf5163454769ac0e8174371a1d30c427ab4f03373b5f9448cd62775c51c70c6237dd93c9c0367cd3aa41583f36ade",
    "59d150cc4fcf56da65ed7c0d9b30c25bf18e2dc96c11b35c07af5e0fbd7229dd985514d093581fe3ae7b4a1be9be956e492605e1c4a99079",
    "64514031241910090401f102fc0f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe450e10526496e6abad9d013",
    "0100000f0ffdfc0f05ffffe40ff601e80f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe450e10526496e8fa9",
    "c1c6c30000000f0ffdfc0f0afee80ffb00ffe40f0004ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffff9450e10526496e810d82100000000098545646",
];

/// `copies` times the same 1 KiB (in Python: `bytes(i * i % 251 for i in range(1024)) * copies`).
fn pattern(copies: usize) -> Vec<u8> {
    (0..1024usize).map(|i| (i * i % 251) as u8).collect::<Vec<u8>>().repeat(copies)
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn cli_linked() -> Vec<u8> {
    unhex(&CLI_LINKED.concat())
}

fn compress(raw: Vec<(&'static str, RawValue<'static>)>, data: &[u8]) -> Vec<u8> {
    let p = kernel("lz4Compress").params(&RawParams::new(raw)).unwrap();
    run_with("lz4Compress", &p, Input::Owned(data.to_vec()), usize::MAX).unwrap()
}

/// Runs a state of `name` over `input` fed in pieces of `piece` bytes,
/// each call with a fresh sink (as a stream's tasks have), joining the outputs.
fn in_pieces(name: &str, input: &[u8], piece: usize) -> Result<Vec<u8>, KernelError> {
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let mut state = kernel(name).start(&Params::NONE, None)?;
    let mut all = Vec::new();
    for part in input.chunks(piece) {
        let mut out = Sink::new(usize::MAX);
        state.update(part, &mut out, &ctx)?;
        all.extend_from_slice(out.into_output().as_bytes());
    }
    let mut out = Sink::new(usize::MAX);
    state.finish(&mut out, &ctx)?;
    all.extend_from_slice(out.into_output().as_bytes());
    Ok(all)
}

/// A frame header with `flg`, `bd` and the optional fields `extra`, its checksum made right.
fn header(flg: u8, bd: u8, extra: &[u8]) -> Vec<u8> {
    let descriptor = [&[flg, bd][..], extra].concat();
    [&MAGIC.to_le_bytes()[..], &descriptor, &[header_checksum(&descriptor)]].concat()
}

fn refused(input: &[u8], reason: &str) {
    let err = run("lz4Decompress", input).unwrap_err();
    assert!(
        matches!(&err, KernelError::Format { code: CORRUPT, message } if message.contains(reason)),
        "{reason}: {err:?}"
    );
    assert_eq!(in_pieces("lz4Decompress", input, 3).unwrap_err(), err, "the same in pieces");
}

#[test]
fn round_trips_limits_bombs_truncation_and_cancellation() {
    check_pair("lz4Compress", "lz4Decompress", 100);
}

#[test]
fn reads_the_cli_s_frames_in_any_pieces() {
    assert_eq!(run("lz4Decompress", &unhex(CLI_HELLO)).unwrap(), b"hello, tidepool\n");
    let linked = cli_linked();
    assert_eq!(
        linked[4..6],
        [VERSION << 6 | BLOCK_CHECKSUM | CONTENT_SIZE | CONTENT_CHECKSUM, 4 << 4],
        "linked 64 KiB blocks"
    );
    assert_eq!(run("lz4Decompress", &linked).unwrap(), pattern(300));
    for piece in [1, 3, 4, 7, 1000, 70_000] {
        assert_eq!(
            in_pieces("lz4Decompress", &linked, piece).unwrap(),
            pattern(300),
            "pieces of {piece}"
        );
    }
}

#[test]
fn our_frames_carry_the_cli_s_header() {
    // Checked by hand: `lz4 -d` (CLI 1.9.4) reads these frames back to
    // their input: text(5 MiB) with the defaults, `hello`, an empty input,
    // and 64 KiB blocks with block checksums and no content checksum.
    let data = text(5 << 20);
    let packed = run("lz4Compress", &data).unwrap();
    assert_eq!(packed[..4], MAGIC.to_le_bytes());
    let (flg, bd) = (packed[4], packed[5]);
    assert_eq!(flg >> 6, VERSION);
    assert_eq!(
        flg & !(VERSION << 6),
        INDEPENDENT | CONTENT_CHECKSUM,
        "independent blocks, a content checksum and nothing else"
    );
    assert_eq!(bd, 7 << 4, "4 MiB blocks");
    assert_eq!(packed[6], header_checksum(&packed[4..6]));
    assert_eq!(run("lz4Decompress", &packed).unwrap(), data);
    // A one-shot input shorter than a block gets the smallest block size
    // that holds it; a stream, whose length is unknown, the one asked for.
    assert_eq!(run("lz4Compress", b"hello").unwrap()[5], 4 << 4);
    assert_eq!(run("lz4Compress", &data[..100_000]).unwrap()[5], 5 << 4);
    let streamed = in_pieces("lz4Compress", b"hello", 2).unwrap();
    assert_eq!(streamed[5], 7 << 4);
    assert_eq!(run("lz4Decompress", &streamed).unwrap(), b"hello");
    let empty = run("lz4Compress", b"").unwrap();
    assert_eq!(empty.len(), 7 + 4 + 4, "a header, the end mark and the checksum");
    assert_eq!(run("lz4Decompress", &empty).unwrap(), b"");

    let raw = vec![
        ("blockSize", RawValue::Number(65536.0)),
        ("blockChecksum", RawValue::Bool(true)),
        ("contentChecksum", RawValue::Bool(false)),
    ];
    let packed = compress(raw, &data[..300_000]);
    assert_eq!(packed[4..6], [VERSION << 6 | INDEPENDENT | BLOCK_CHECKSUM, 4 << 4]);
    assert_eq!(packed[packed.len() - 4..], [0; 4], "the end mark last: no content checksum");
    assert_eq!(run("lz4Decompress", &packed).unwrap(), &data[..300_000]);
    assert_eq!(in_pieces("lz4Decompress", &packed, 999).unwrap(), &data[..300_000]);
    // Noise is stored as it is, block by block.
    let stored = compress(vec![("blockSize", RawValue::Number(65536.0))], &noise(100_000));
    assert_eq!(le32(&stored[7..11]), STORED | 65536);
    assert_eq!(run("lz4Decompress", &stored).unwrap(), noise(100_000));
}

#[test]
fn parameters_are_checked() {
    let lz4 = kernel("lz4Compress");
    for size in [1000.0, 0.0, -65536.0, 8388608.0] {
        let err =
            lz4.params(&RawParams::new(vec![("blockSize", RawValue::Number(size))])).unwrap_err();
        assert!(matches!(err, ParamError::Range { name: "blockSize", .. }), "{size}: {err}");
    }
    let err =
        lz4.params(&RawParams::new(vec![("contentChecksum", RawValue::Number(1.0))])).unwrap_err();
    assert!(matches!(err, ParamError::Type { name: "contentChecksum", .. }), "{err}");
    let err = lz4.params(&RawParams::new(vec![("level", RawValue::Number(1.0))])).unwrap_err();
    assert!(matches!(err, ParamError::Unknown { .. }), "{err}");
    assert!(kernel("lz4Decompress")
        .params(&RawParams::new(vec![("blockSize", RawValue::Number(65536.0))]))
        .is_err());
}

#[test]
fn corrupt_frames_are_refused_with_a_reason() {
    let data = text(200_000);
    let raw =
        vec![("blockSize", RawValue::Number(65536.0)), ("blockChecksum", RawValue::Bool(true))];
    let good = compress(raw, &data);
    let flipped = |at: usize| {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        bad
    };
    refused(&flipped(6), "header checksum mismatch");
    refused(&flipped(20), "block checksum mismatch");
    refused(&flipped(good.len() - 1), "content checksum mismatch");
    refused(b"not an lz4 frame", "bad magic number");
    refused(
        &[run("lz4Compress", b"hello").unwrap(), b"garbage".to_vec()].concat(),
        "after the end of the frame",
    );
    refused(&0x184C_2102u32.to_le_bytes(), "legacy");
    let flg = VERSION << 6 | INDEPENDENT;
    refused(&header(flg | DICT_ID, 4 << 4, &[1, 2, 3, 4]), "dictionary");
    refused(&header(flg | 1 << 7, 4 << 4, &[]), "version");
    refused(&header(flg | FLG_RESERVED, 4 << 4, &[]), "reserved");
    refused(&header(flg, 4 << 4 | 1, &[]), "reserved");
    refused(&header(flg, 3 << 4, &[]), "block maximum size");
    // A block size word past the block maximum, compressed or stored.
    refused(
        &[header(flg, 4 << 4, &[]), (65536u32 + 1).to_le_bytes().to_vec()].concat(),
        "larger than the block maximum",
    );
    refused(
        &[header(flg, 4 << 4, &[]), (STORED | 65537).to_le_bytes().to_vec()].concat(),
        "larger than the block maximum",
    );
    // A match reaching back before the output, with no block checksum to catch it first.
    let block = [0x10, b'a', 0x10, 0x00];
    refused(
        &[header(flg, 4 << 4, &[]), 4u32.to_le_bytes().to_vec(), block.to_vec(), vec![0; 4]]
            .concat(),
        "corrupt block",
    );
    // The content size of the CLI's frame, changed (and its header checksum made right).
    let cli = cli_linked();
    let mut size = cli[6..14].to_vec();
    size[0] ^= 1;
    refused(&[header(cli[4], cli[5], &size), cli[15..].to_vec()].concat(), "content size mismatch");
    // Any cut is an unexpected end, never a misread.
    for cut in [1, 4, 5, 6, 10, 15, 100, cli.len() - 1] {
        assert_eq!(run("lz4Decompress", &cli[..cut]), Err(truncated()), "cut at {cut}");
    }
}

#[test]
fn concatenated_and_skippable_frames() {
    let skippable = |n: u8| {
        [&0x184D_2A5Au32.to_le_bytes()[..], &u32::from(n).to_le_bytes(), &vec![n; n.into()]]
            .concat()
    };
    let input = [
        skippable(3),
        run("lz4Compress", b"hello ").unwrap(),
        skippable(0),
        compress(vec![("contentChecksum", RawValue::Bool(false))], b"world, "),
        cli_linked(),
        skippable(200),
    ]
    .concat();
    let expected = [&b"hello world, "[..], &pattern(300)].concat();
    assert_eq!(run("lz4Decompress", &input).unwrap(), expected);
    for piece in [1, 2, 5, 300] {
        assert_eq!(
            in_pieces("lz4Decompress", &input, piece).unwrap(),
            expected,
            "pieces of {piece}"
        );
    }
    assert_eq!(run("lz4Decompress", &skippable(5)).unwrap(), b"", "a skippable frame alone");
    assert_eq!(
        run("lz4Decompress", &skippable(5)[..7]),
        Err(truncated()),
        "cut inside a skippable frame"
    );
}

#[test]
fn linked_blocks_at_the_output_limit() {
    let linked = cli_linked();
    let n = pattern(300).len();
    assert_eq!(
        run_with("lz4Decompress", &Params::NONE, Input::Owned(linked.clone()), n).unwrap(),
        pattern(300)
    );
    assert_eq!(
        run_with("lz4Decompress", &Params::NONE, Input::Owned(linked), n - 1),
        Err(KernelError::TooLarge { limit: n - 1 })
    );
}

#[test]
fn random_mutations_never_panic() {
    let raw =
        vec![("blockSize", RawValue::Number(65536.0)), ("contentChecksum", RawValue::Bool(false))];
    let frames =
        [cli_linked(), compress(raw, &text(150_000)), run("lz4Compress", &text(5000)).unwrap()];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |below: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % below as u64) as usize
    };
    let (mut ok, mut refused) = (0, 0);
    for i in 0..2000 {
        let mut m = frames[i % frames.len()].clone();
        for _ in 0..1 + next(3) {
            match next(3) {
                0 => {
                    let at = next(m.len());
                    m[at] ^= 1 << next(8);
                }
                1 => m.truncate(next(m.len() + 1)),
                _ => {
                    let at = next(m.len() + 1);
                    let bytes: Vec<u8> = (0..1 + next(8)).map(|_| next(256) as u8).collect();
                    m.splice(at..at, bytes);
                }
            }
            if m.is_empty() {
                m.push(0);
            }
        }
        let piece = 1 + next(4000);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            (run("lz4Decompress", &m), in_pieces("lz4Decompress", &m, piece))
        }));
        let Ok((whole, pieces)) = outcome else { panic!("mutation {i} panicked") };
        assert_eq!(whole, pieces, "mutation {i}: pieces of {piece} decode like the whole");
        if whole.is_ok() {
            ok += 1;
        } else {
            refused += 1;
        }
    }
    assert!(ok > 0 && refused > 1000, "{ok} decoded, {refused} refused");
}
