//! The hash kernels: each is a [`HashKernel`] naming its hasher's three
//! operations. Results are the digests in their canonical byte order, so the
//! hex form equals the reference's (and `node:crypto`'s where it has one).

use blake3::Hasher as Blake3;
use crc32fast::Hasher as Crc32;
use xxhash_rust::xxh3::Xxh3;
use xxhash_rust::xxh64::Xxh64;

use super::digest::{no_params, HashKernel};
use super::params::{ParamError, RawParams};

/// FIPS 180-4 SHA-256 (uses SHA-NI when the CPU has it).
pub static SHA256: HashKernel<sha2::Sha256> = HashKernel::rust_crypto("sha256");
/// FIPS 180-4 SHA-384.
pub static SHA384: HashKernel<sha2::Sha384> = HashKernel::rust_crypto("sha384");
/// FIPS 180-4 SHA-512.
pub static SHA512: HashKernel<sha2::Sha512> = HashKernel::rust_crypto("sha512");
/// SHA-1 (for compatibility with existing systems, not for security).
pub static SHA1: HashKernel<sha1::Sha1> = HashKernel::rust_crypto("sha1");
/// MD5 (for compatibility with existing systems, not for security).
pub static MD5: HashKernel<md5::Md5> = HashKernel::rust_crypto("md5");

/// BLAKE3 with the default 32-byte output (SIMD chosen at run time).
pub static BLAKE3: HashKernel<Blake3> = HashKernel::new(
    "blake3",
    no_params,
    |_| Blake3::new(),
    |h, bytes| {
        h.update(bytes);
    },
    |h, out| out.write(h.finalize().as_bytes()),
);

/// The `seed` parameter of the xxHash kernels: an integer in 0..=2^64-1
/// (a number or a bigint), 0 when not given.
fn seed(raw: &RawParams<'_>) -> Result<u64, ParamError> {
    raw.only(&["seed"])?;
    Ok(raw.integer("seed", 0..=u64::MAX as i128)?.unwrap_or(0) as u64)
}

/// XXH3 64-bit, canonical (big-endian) form; `seed` 0 unless given.
pub static XXH3: HashKernel<Xxh3, u64> =
    HashKernel::new("xxh3", seed, |&s| Xxh3::with_seed(s), |h, bytes| h.update(bytes), |h, out| out.write(&h.digest().to_be_bytes()));

/// XXH64, canonical (big-endian) form; `seed` 0 unless given.
pub static XXH64: HashKernel<Xxh64, u64> =
    HashKernel::new("xxh64", seed, |&s| Xxh64::new(s), |h, bytes| h.update(bytes), |h, out| out.write(&h.digest().to_be_bytes()));

/// CRC-32 (ISO-HDLC, as zlib and `zlib.crc32`), 4 bytes big-endian, so the
/// hex form equals `zlib.crc32(data).toString(16).padStart(8, '0')`.
pub static CRC32: HashKernel<Crc32> =
    HashKernel::new("crc32", no_params, |_| Crc32::new(), |h, bytes| h.update(bytes), |h, out| out.write(&h.finalize().to_be_bytes()));

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
        assert_eq!(digest("xxh64", seeded(RawValue::Number(7.0))), xxhash_rust::xxh64::xxh64(data, 7).to_be_bytes());
        assert_eq!(
            digest("xxh3", seeded(RawValue::BigInt(u64::MAX as i128))),
            xxhash_rust::xxh3::xxh3_64_with_seed(data, u64::MAX).to_be_bytes()
        );
        assert_eq!(digest("xxh3", RawParams::none()), digest("xxh3", seeded(RawValue::Number(0.0))));
        let xxh64 = get(find("xxh64").unwrap()).unwrap();
        assert!(xxh64.params(&seeded(RawValue::Number(-1.0))).is_err());
        let sha = get(find("sha256").unwrap()).unwrap();
        assert!(sha.params(&seeded(RawValue::Number(1.0))).unwrap_err().to_string().contains("takes no parameters"));
    }

    #[test]
    fn reference_vectors() {
        for &(kernel, input, digest) in VECTORS {
            assert_eq!(hex(kernel, input), digest, "{kernel}({:?})", String::from_utf8_lossy(input));
        }
    }
}
