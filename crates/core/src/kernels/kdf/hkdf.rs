//! HKDF (RFC 5869): `crypto.hkdf(digest, ikm, salt, info, keylen)`, on the
//! `hkdf` crate. The input is the input key material.

use hkdf::Hkdf;
use zeroize::Zeroizing;

use super::super::params::{ParamError, RawParams};
use super::super::{KernelError, RunContext, Sink};
use super::hash::{with_hash, KdfHash};
use super::kernel::{key_length, salt, KdfKernel};

/// HKDF's checked parameters.
#[derive(Clone)]
pub struct HkdfParams {
    hash: KdfHash,
    salt: Zeroizing<Vec<u8>>,
    info: Zeroizing<Vec<u8>>,
    keylen: usize,
}

fn params(raw: &RawParams<'_>) -> Result<HkdfParams, ParamError> {
    raw.only(&["digest", "salt", "info", "keylen"])?;
    let hash = KdfHash::param(raw)?;
    let info = Zeroizing::new(raw.bytes("info")?.unwrap_or_default().to_vec());
    if info.len() > 1024 {
        return Err(ParamError::Range {
            name: "info",
            expected: "at most 1024 bytes".into(),
            got: info.len().to_string(),
        });
    }
    // RFC 5869: at most 255 blocks of the hash's output.
    let keylen = key_length(raw, 255 * hash.output_len())?;
    Ok(HkdfParams { hash, salt: salt(raw)?, info, keylen })
}

fn derive(
    p: &HkdfParams,
    ikm: &[u8],
    _ctx: &RunContext<'_>,
    out: &mut Sink,
) -> Result<(), KernelError> {
    let key = out.unfilled_exact(p.keylen)?;
    with_hash!(p.hash, D => Hkdf::<D>::new(Some(&p.salt), ikm).expand(&p.info, key))
        .map_err(|_| KernelError::InvalidInput("HKDF cannot derive a key this long".into()))?;
    out.commit(p.keylen);
    Ok(())
}

/// `crypto.hkdf()`'s derivation: the input is the input key material;
/// parameters `digest`, `salt`, `info` and `keylen`.
pub static HKDF: KdfKernel<HkdfParams> = KdfKernel::new("hkdf", params, derive);
