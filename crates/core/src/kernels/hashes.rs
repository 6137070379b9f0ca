//! The hash kernels: each is a [`HashKernel`] naming its hasher's three
//! operations. Results are the digests in their canonical byte order, so the
//! hex form equals the reference's (and `node:crypto`'s where it has one).

use blake3::Hasher as Blake3;
use crc32fast::Hasher as Crc32;
use ring::digest::{self, Context};
use xxhash_rust::xxh3::Xxh3;
use xxhash_rust::xxh64::Xxh64;

use hmac::{Hmac, KeyInit, Mac};
use zeroize::Zeroizing;

use super::digest::HashKernel;
use super::params::{no_params, required, ParamError, RawParams};
use super::{KernelError, Parallel, PartResults, RunContext, Sink};

/// FIPS 180-4 SHA-256, on ring: BoringSSL's assembly, which picks SHA-NI,
/// AVX2 or SSSE3 at run time (about twice the RustCrypto crate's speed on
/// a CPU without SHA-NI, where that crate falls back to portable code).
pub static SHA256: HashKernel<Context> = ring_hash("sha256", |_| Context::new(&digest::SHA256));
/// FIPS 180-4 SHA-384, on ring.
pub static SHA384: HashKernel<Context> = ring_hash("sha384", |_| Context::new(&digest::SHA384));
/// FIPS 180-4 SHA-512, on ring.
pub static SHA512: HashKernel<Context> = ring_hash("sha512", |_| Context::new(&digest::SHA512));
/// SHA-1 (for compatibility with existing systems, not for security), on ring.
pub static SHA1: HashKernel<Context> =
    ring_hash("sha1", |_| Context::new(&digest::SHA1_FOR_LEGACY_USE_ONLY));

/// A hash kernel over a ring digest context that `new` starts.
const fn ring_hash(name: &'static str, new: fn(&()) -> Context) -> HashKernel<Context> {
    HashKernel::new(
        name,
        no_params,
        new,
        |context, bytes| context.update(bytes),
        |context, out| out.write(context.finish().as_ref()),
    )
}

/// MD5 (for compatibility with existing systems, not for security).
pub static MD5: HashKernel<md5::Md5> = HashKernel::rust_crypto("md5");

/// What a BLAKE3 task computes: the plain hash, the keyed hash (`key`, 32
/// bytes) or the key derivation (`context`; the input is the key material),
/// the spec's three modes.
pub enum Blake3Mode {
    Hash,
    Keyed(Zeroizing<[u8; blake3::KEY_LEN]>),
    DeriveKey(String),
}

fn blake3_mode(raw: &RawParams<'_>) -> Result<Blake3Mode, ParamError> {
    raw.only(&["key", "context"])?;
    match (raw.bytes("key")?, raw.text("context")?) {
        (Some(_), Some(_)) => Err(ParamError::Value {
            name: "context",
            expected: "absent when \"key\" is given (a keyed hash or a key derivation, not both)"
                .into(),
            got: "a context".into(),
        }),
        (Some(key), None) => {
            let mut k = Zeroizing::new([0u8; blake3::KEY_LEN]);
            if key.len() != k.len() {
                return Err(ParamError::Value {
                    name: "key",
                    expected: "32 bytes long".into(),
                    got: format!("{} bytes", key.len()),
                });
            }
            k.copy_from_slice(key);
            Ok(Blake3Mode::Keyed(k))
        }
        (None, Some(context)) => Ok(Blake3Mode::DeriveKey(context.to_owned())),
        (None, None) => Ok(Blake3Mode::Hash),
    }
}

/// BLAKE3 with the default 32-byte output (SIMD chosen at run time), in any
/// of its three modes.
pub static BLAKE3: HashKernel<Blake3, Blake3Mode> = HashKernel::new(
    "blake3",
    blake3_mode,
    |mode| match mode {
        Blake3Mode::Hash => Blake3::new(),
        Blake3Mode::Keyed(key) => Blake3::new_keyed(key),
        Blake3Mode::DeriveKey(context) => Blake3::new_derive_key(context),
    },
    |h, bytes| {
        h.update(bytes);
    },
    |h, out| out.write(h.finalize().as_bytes()),
)
.with_split(blake3_split);

/// Bytes of input per part of a BLAKE3 hash in parts: a whole subtree of
/// the BLAKE3 tree (a power of two of its 1 KiB chunks), so the parts'
/// chaining values merge into the digest of a one-thread run.
pub const BLAKE3_SUBTREE: usize = 1 << 20;
/// Inputs below this are hashed whole.
pub const BLAKE3_MIN_SPLIT: usize = 4 * BLAKE3_SUBTREE;

/// BLAKE3 of a large input in subtrees on several threads, merged layer by
/// layer into the root: the same digest as one thread's, in every mode.
fn blake3_split(
    mode: &Blake3Mode,
    input: &[u8],
    ctx: &RunContext<'_>,
    out: &mut Sink,
    parallel: &dyn Parallel,
) -> Option<Result<(), KernelError>> {
    if input.len() < BLAKE3_MIN_SPLIT {
        return None;
    }
    Some(blake3_subtrees(mode, input, BLAKE3_SUBTREE, ctx, parallel).and_then(|d| out.write(&d)))
}

/// The digest of `input` (longer than one `subtree`) from subtrees of
/// `subtree` bytes hashed as parts.
pub fn blake3_subtrees(
    mode: &Blake3Mode,
    input: &[u8],
    subtree: usize,
    ctx: &RunContext<'_>,
    parallel: &dyn Parallel,
) -> Result<[u8; 32], KernelError> {
    use blake3::hazmat::{self, HasherExt};
    debug_assert!(subtree.is_power_of_two() && subtree >= blake3::CHUNK_LEN);
    debug_assert!(input.len() > subtree);
    let context_key = match mode {
        Blake3Mode::DeriveKey(context) => Some(hazmat::hash_derive_key_context(context)),
        _ => None,
    };
    let leaves: Vec<&[u8]> = input.chunks(subtree).collect();
    let cvs = PartResults::new(leaves.len(), usize::MAX);
    let part = |i: usize| {
        let cv = ctx.check().map(|()| {
            let mut hasher = match (mode, &context_key) {
                (Blake3Mode::Keyed(key), _) => Blake3::new_keyed(key),
                (_, Some(context_key)) => Blake3::new_from_context_key(context_key),
                _ => Blake3::new(),
            };
            hasher.set_input_offset((i * subtree) as u64);
            hasher.update(leaves[i]);
            hasher.finalize_non_root()
        });
        cvs.set(i, cv);
    };
    parallel.run_parts(leaves.len(), &part);
    let mut layer = cvs.into_results()?;
    let merge_mode = match (mode, &context_key) {
        (Blake3Mode::Keyed(key), _) => hazmat::Mode::KeyedHash(key),
        (_, Some(context_key)) => hazmat::Mode::DeriveKeyMaterial(context_key),
        _ => hazmat::Mode::Hash,
    };
    // Pairs merge into their parent, an odd one out moves up: the shape of
    // the BLAKE3 tree over equal, power-of-two subtrees.
    while layer.len() > 2 {
        let next = layer
            .chunks(2)
            .map(|pair| match pair {
                [left, right] => hazmat::merge_subtrees_non_root(left, right, merge_mode),
                [one] => *one,
                _ => unreachable!(),
            })
            .collect();
        layer = next;
    }
    Ok(*hazmat::merge_subtrees_root(&layer[0], &layer[1], merge_mode).as_bytes())
}

/// The hash under an HMAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HmacHash {
    Sha256,
    Sha384,
    Sha512,
    Sha1,
    Md5,
}

/// An HMAC's checked parameters. The key is this kernel's own copy, wiped
/// when the last task holding it ends.
pub struct HmacParams {
    hash: HmacHash,
    key: Zeroizing<Vec<u8>>,
}

fn hmac_params(raw: &RawParams<'_>) -> Result<HmacParams, ParamError> {
    raw.only(&["hash", "key"])?;
    let hashes = [
        ("sha256", HmacHash::Sha256),
        ("sha384", HmacHash::Sha384),
        ("sha512", HmacHash::Sha512),
        ("sha1", HmacHash::Sha1),
        ("md5", HmacHash::Md5),
    ];
    let hash = required(
        raw.choice("hash", &hashes)?,
        "hash",
        "one of 'sha256', 'sha384', 'sha512', 'sha1', 'md5'",
    )?;
    let key = required(raw.bytes("key")?, "key", "a string or a binary")?;
    Ok(HmacParams { hash, key: Zeroizing::new(key.to_vec()) })
}

/// An HMAC in progress (the hmac crate wipes its keyed state when dropped,
/// a copy's too).
#[derive(Clone)]
pub enum AnyHmac {
    Sha256(Hmac<sha2::Sha256>),
    Sha384(Hmac<sha2::Sha384>),
    Sha512(Hmac<sha2::Sha512>),
    Sha1(Hmac<sha1::Sha1>),
    Md5(Hmac<md5::Md5>),
}

impl AnyHmac {
    fn new(p: &HmacParams) -> AnyHmac {
        // HMAC takes a key of any length (RFC 2104 hashes a long one), so
        // new_from_slice cannot fail.
        let key = &p.key[..];
        match p.hash {
            HmacHash::Sha256 => {
                AnyHmac::Sha256(Hmac::new_from_slice(key).expect("HMAC takes any key length"))
            }
            HmacHash::Sha384 => {
                AnyHmac::Sha384(Hmac::new_from_slice(key).expect("HMAC takes any key length"))
            }
            HmacHash::Sha512 => {
                AnyHmac::Sha512(Hmac::new_from_slice(key).expect("HMAC takes any key length"))
            }
            HmacHash::Sha1 => {
                AnyHmac::Sha1(Hmac::new_from_slice(key).expect("HMAC takes any key length"))
            }
            HmacHash::Md5 => {
                AnyHmac::Md5(Hmac::new_from_slice(key).expect("HMAC takes any key length"))
            }
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            AnyHmac::Sha256(h) => h.update(bytes),
            AnyHmac::Sha384(h) => h.update(bytes),
            AnyHmac::Sha512(h) => h.update(bytes),
            AnyHmac::Sha1(h) => h.update(bytes),
            AnyHmac::Md5(h) => h.update(bytes),
        }
    }

    fn finish(self, out: &mut super::Sink) -> Result<(), super::KernelError> {
        match self {
            AnyHmac::Sha256(h) => out.write(&h.finalize().into_bytes()),
            AnyHmac::Sha384(h) => out.write(&h.finalize().into_bytes()),
            AnyHmac::Sha512(h) => out.write(&h.finalize().into_bytes()),
            AnyHmac::Sha1(h) => out.write(&h.finalize().into_bytes()),
            AnyHmac::Md5(h) => out.write(&h.finalize().into_bytes()),
        }
    }
}

/// HMAC (RFC 2104) over SHA-256/384/512, SHA-1 or MD5: `hash` and `key`
/// required; the same bytes as `crypto.createHmac(hash, key)`.
pub static HMAC: HashKernel<AnyHmac, HmacParams> =
    HashKernel::new("hmac", hmac_params, AnyHmac::new, AnyHmac::update, AnyHmac::finish);

/// The `seed` parameter of the xxHash kernels: an integer in 0..=2^64-1
/// (a number or a bigint), 0 when not given.
fn seed(raw: &RawParams<'_>) -> Result<u64, ParamError> {
    raw.only(&["seed"])?;
    Ok(raw.integer("seed", 0..=u64::MAX as i128)?.unwrap_or(0) as u64)
}

/// XXH3 64-bit, canonical (big-endian) form; `seed` 0 unless given.
pub static XXH3: HashKernel<Xxh3, u64> = HashKernel::new(
    "xxh3",
    seed,
    |&s| Xxh3::with_seed(s),
    |h, bytes| h.update(bytes),
    |h, out| out.write(&h.digest().to_be_bytes()),
);

/// XXH64, canonical (big-endian) form; `seed` 0 unless given.
pub static XXH64: HashKernel<Xxh64, u64> = HashKernel::new(
    "xxh64",
    seed,
    |&s| Xxh64::new(s),
    |h, bytes| h.update(bytes),
    |h, out| out.write(&h.digest().to_be_bytes()),
);

/// CRC-32 (ISO-HDLC, as zlib and `zlib.crc32`), 4 bytes big-endian, so the
/// hex form equals `zlib.crc32(data).toString(16).padStart(8, '0')`.
pub static CRC32: HashKernel<Crc32> = HashKernel::new(
    "crc32",
    no_params,
    |_| Crc32::new(),
    |h, bytes| h.update(bytes),
    |h, out| out.write(&h.finalize().to_be_bytes()),
);

/// CRC-32C (Castagnoli, as iSCSI / ext4), 4 bytes big-endian; the running
/// CRC is the whole state.
pub static CRC32C: HashKernel<u32> = HashKernel::new(
    "crc32c",
    no_params,
    |_| 0,
    |crc, bytes| *crc = crc32c::crc32c_append(*crc, bytes),
    |crc, out| out.write(&crc.to_be_bytes()),
);

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;

    /// (kernel, input, digest in hex), from each algorithm's reference.
    const VECTORS: &[(&str, &[u8], &str)] = &[
        // NIST FIPS 180-4 examples.
        ("sha256", b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("sha256", b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "sha384",
            b"abc",
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
        ),
        (
            "sha512",
            b"abc",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        ),
        ("sha1", b"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        // RFC 1321.
        ("md5", b"", "d41d8cd98f00b204e9800998ecf8427e"),
        ("md5", b"abc", "900150983cd24fb0d6963f7d28e17f72"),
        // BLAKE3's test_vectors.json (input_len 0, and the "abc" example).
        ("blake3", b"", "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
        ("blake3", b"abc", "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"),
        // XXH3_64bits() and XXH64(seed 0) of the reference C implementation.
        ("xxh3", b"", "2d06800538d394c2"),
        ("xxh3", b"abc", "78af5f94892f3950"),
        ("xxh64", b"", "ef46db3751d8e999"),
        ("xxh64", b"abc", "44bc2cf5ad770999"),
        // The CRC catalogue's check values ("123456789").
        ("crc32", b"123456789", "cbf43926"),
        ("crc32", b"", "00000000"),
        ("crc32c", b"123456789", "e3069283"),
    ];

    #[test]
    fn seeds_reach_the_xxhash_kernels_typed() {
        use crate::input::Input;
        use crate::kernels::params::{RawParams, RawValue};
        use crate::kernels::{find, get, RunContext, Sink};
        let flag = std::sync::atomic::AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let data = b"hello, tidepool";
        let digest = |name: &str, raw: RawParams<'_>| {
            let kernel = get(find(name).unwrap()).unwrap();
            let params = kernel.params(&raw).unwrap();
            let mut out = Sink::new(usize::MAX);
            kernel.run(&params, &Input::Owned(data.to_vec()), &ctx, &mut out).unwrap();
            out.into_output().as_bytes().to_vec()
        };
        let seeded = |v| RawParams::new(vec![("seed", v)]);
        assert_eq!(
            digest("xxh64", seeded(RawValue::Number(7.0))),
            xxhash_rust::xxh64::xxh64(data, 7).to_be_bytes()
        );
        assert_eq!(
            digest("xxh3", seeded(RawValue::BigInt(u64::MAX as i128))),
            xxhash_rust::xxh3::xxh3_64_with_seed(data, u64::MAX).to_be_bytes()
        );
        assert_eq!(
            digest("xxh3", RawParams::none()),
            digest("xxh3", seeded(RawValue::Number(0.0)))
        );
        let xxh64 = get(find("xxh64").unwrap()).unwrap();
        assert!(xxh64.params(&seeded(RawValue::Number(-1.0))).is_err());
        let sha = get(find("sha256").unwrap()).unwrap();
        assert!(sha
            .params(&seeded(RawValue::Number(1.0)))
            .unwrap_err()
            .to_string()
            .contains("takes no parameters"));
    }

    /// Runs `name` with `raw` parameters over `data`.
    fn keyed(
        name: &str,
        raw: crate::kernels::RawParams<'_>,
        data: &[u8],
    ) -> Result<Vec<u8>, crate::kernels::ParamError> {
        use crate::input::Input;
        use crate::kernels::{find, get, RunContext, Sink};
        let flag = std::sync::atomic::AtomicBool::new(false);
        let kernel = get(find(name).unwrap()).unwrap();
        let params = kernel.params(&raw)?;
        let mut out = Sink::new(usize::MAX);
        kernel
            .run(&params, &Input::Owned(data.to_vec()), &RunContext::new(&flag), &mut out)
            .unwrap();
        Ok(out.into_output().as_bytes().to_vec())
    }

    fn hex_of(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn hmac_matches_rfc_4231_and_2202() {
        use crate::kernels::{RawParams, RawValue};
        // RFC 4231 test case 2 (SHA-2) and RFC 2202 test case 2 (SHA-1, MD5).
        let cases = [
            ("sha256", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ("sha384", "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649"),
            (
                "sha512",
                "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
            ),
            ("sha1", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            ("md5", "750c783e6ab0b503eaa86e310a5db738"),
        ];
        for (hash, want) in cases {
            let raw = RawParams::new(vec![
                ("hash", RawValue::Text(hash)),
                ("key", RawValue::Bytes(b"Jefe")),
            ]);
            assert_eq!(
                hex_of(&keyed("hmac", raw, b"what do ya want for nothing?").unwrap()),
                want,
                "{hash}"
            );
        }
        // A key given as text is its UTF-8 bytes.
        let text = RawParams::new(vec![
            ("hash", RawValue::Text("sha256")),
            ("key", RawValue::Text("Jefe")),
        ]);
        assert_eq!(
            hex_of(&keyed("hmac", text, b"what do ya want for nothing?").unwrap()),
            cases[0].1
        );
        let missing = keyed("hmac", RawParams::new(vec![("hash", RawValue::Text("sha256"))]), b"")
            .unwrap_err();
        assert!(matches!(missing, crate::kernels::ParamError::Missing { name: "key", .. }));
        let unknown_hash =
            RawParams::new(vec![("hash", RawValue::Text("sha3")), ("key", RawValue::Text("k"))]);
        assert!(matches!(
            keyed("hmac", unknown_hash, b"").unwrap_err(),
            crate::kernels::ParamError::Value { name: "hash", .. }
        ));
    }

    #[test]
    fn blake3_keyed_and_derive_key_modes_match_the_reference_functions() {
        use crate::kernels::{ParamError, RawParams, RawValue};
        let data = b"hello, tidepool";
        let key = *b"whats the Elvish word for friend";
        let raw = RawParams::new(vec![("key", RawValue::Bytes(&key))]);
        assert_eq!(keyed("blake3", raw, data).unwrap(), blake3::keyed_hash(&key, data).as_bytes());
        let context = "tidepool 2026-11-22 test context";
        let raw = RawParams::new(vec![("context", RawValue::Text(context))]);
        assert_eq!(keyed("blake3", raw, data).unwrap(), blake3::derive_key(context, data));
        let short = RawParams::new(vec![("key", RawValue::Bytes(&key[..31]))]);
        assert!(matches!(
            keyed("blake3", short, data).unwrap_err(),
            ParamError::Value { name: "key", .. }
        ));
        let both = RawParams::new(vec![
            ("key", RawValue::Bytes(&key)),
            ("context", RawValue::Text(context)),
        ]);
        assert!(keyed("blake3", both, data).is_err());
    }

    #[test]
    fn reference_vectors() {
        for &(kernel, input, digest) in VECTORS {
            assert_eq!(
                hex(kernel, input),
                digest,
                "{kernel}({:?})",
                String::from_utf8_lossy(input)
            );
        }
    }
}
