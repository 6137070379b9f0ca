//! The hashes under a derivation's HMAC, by the names node:crypto gives
//! them. A name not here is not this kernel's: lib/crypto/ leaves such a
//! call to node:crypto itself, which knows every hash OpenSSL has.

use super::super::params::{required, ParamError, RawParams};

/// A hash a derivation's HMAC runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KdfHash {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
    Sha512_224,
    Sha512_256,
}

/// The names, lower-case as `crypto.getHashes()` lists them.
pub const NAMES: &[(&str, KdfHash)] = &[
    ("md5", KdfHash::Md5),
    ("sha1", KdfHash::Sha1),
    ("sha224", KdfHash::Sha224),
    ("sha256", KdfHash::Sha256),
    ("sha384", KdfHash::Sha384),
    ("sha512", KdfHash::Sha512),
    ("sha512-224", KdfHash::Sha512_224),
    ("sha512-256", KdfHash::Sha512_256),
];

impl KdfHash {
    /// The `digest` parameter, required.
    pub fn param(raw: &RawParams<'_>) -> Result<KdfHash, ParamError> {
        required(
            raw.choice("digest", NAMES)?,
            "digest",
            "one of 'md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha512-224', 'sha512-256'",
        )
    }

    /// The bytes of one of its digests.
    pub fn output_len(self) -> usize {
        match self {
            KdfHash::Md5 => 16,
            KdfHash::Sha1 => 20,
            KdfHash::Sha224 | KdfHash::Sha512_224 => 28,
            KdfHash::Sha256 | KdfHash::Sha512_256 => 32,
            KdfHash::Sha384 => 48,
            KdfHash::Sha512 => 64,
        }
    }
}

/// `$body` with `$D` the RustCrypto hasher of `$hash`: one generic call per
/// hash, written once.
macro_rules! with_hash {
    ($hash:expr, $D:ident => $body:expr) => {
        match $hash {
            KdfHash::Md5 => {
                type $D = md5::Md5;
                $body
            }
            KdfHash::Sha1 => {
                type $D = sha1::Sha1;
                $body
            }
            KdfHash::Sha224 => {
                type $D = sha2::Sha224;
                $body
            }
            KdfHash::Sha256 => {
                type $D = sha2::Sha256;
                $body
            }
            KdfHash::Sha384 => {
                type $D = sha2::Sha384;
                $body
            }
            KdfHash::Sha512 => {
                type $D = sha2::Sha512;
                $body
            }
            KdfHash::Sha512_224 => {
                type $D = sha2::Sha512_224;
                $body
            }
            KdfHash::Sha512_256 => {
                type $D = sha2::Sha512_256;
                $body
            }
        }
    };
}
pub(super) use with_hash;
