//! scrypt (RFC 7914): `crypto.scrypt(password, salt, keylen, options)`,
//! on the `scrypt` crate. The JavaScript side has already checked the costs
//! against node:crypto's rules and `maxmem` (lib/crypto/); this check is
//! the crate's, with r × p counted without overflow. The memory is the
//! task's own: 128 × r × (N + p) bytes, which the crate allocates and frees
//! itself; the derivation runs inside [`wiping`], so the addon's allocator
//! zeroes it as it is freed, as OpenSSL wipes its copy. The crate
//! cannot fail an allocation softly (Rust aborts the process), so the
//! kernel first asks the allocator for that much and gives it back: a size
//! it cannot have is the task's error.

use zeroize::Zeroizing;

use super::super::params::{required, ParamError, RawParams};
use super::super::{KernelError, RunContext, Sink};
use super::kernel::{key_length, salt, KdfKernel};
use crate::wipe::wiping;

/// scrypt's checked parameters.
#[derive(Clone)]
pub struct ScryptParams {
    salt: Zeroizing<Vec<u8>>,
    costs: scrypt::Params,
    keylen: usize,
}

impl ScryptParams {
    /// The bytes a task of these parameters holds while it runs: V (128 r N)
    /// and B (128 r p).
    pub fn memory_bytes(&self) -> usize {
        let r128 = 128 * self.costs.r() as usize;
        let n = 1usize << self.costs.log_n();
        r128.saturating_mul(n.saturating_add(self.costs.p() as usize))
    }
}

fn params(raw: &RawParams<'_>) -> Result<ScryptParams, ParamError> {
    raw.only(&["salt", "N", "r", "p", "keylen"])?;
    let n = required(raw.integer("N", 2..=1 << 62)?, "N", "a power of 2")? as u64;
    if !n.is_power_of_two() {
        return Err(ParamError::Value {
            name: "N",
            expected: "a power of 2".into(),
            got: n.to_string(),
        });
    }
    let r = required(raw.integer("r", 1..=u32::MAX as i128)?, "r", "an integer")? as u32;
    let p = required(raw.integer("p", 1..=u32::MAX as i128)?, "p", "an integer")? as u32;
    // The crate multiplies r and p in u32: past 2^32 the product wraps.
    if r as u64 * p as u64 >= 1 << 30 {
        return Err(ParamError::Value {
            name: "p",
            expected: "r × p below 2^30".into(),
            got: format!("r = {r}, p = {p}"),
        });
    }
    let costs =
        scrypt::Params::new(n.trailing_zeros() as u8, r, p).map_err(|_| ParamError::Value {
            name: "N",
            expected: "N, r and p within scrypt's limits (r × p < 2^30, 128 × r × N addressable)"
                .into(),
            got: format!("N = {n}, r = {r}, p = {p}"),
        })?;
    let keylen = key_length(raw, i32::MAX as usize)?;
    Ok(ScryptParams { salt: salt(raw)?, costs, keylen })
}

fn derive(
    p: &ScryptParams,
    password: &[u8],
    _ctx: &RunContext<'_>,
    out: &mut Sink,
) -> Result<(), KernelError> {
    // The crate refuses an empty output; node:crypto gives an empty key.
    if p.keylen == 0 {
        return Ok(());
    }
    let mut room = Vec::<u8>::new();
    if room.try_reserve_exact(p.memory_bytes().saturating_add(1 << 12)).is_err() {
        return Err(KernelError::InvalidInput(format!(
            "scrypt could not allocate its {} bytes of memory",
            p.memory_bytes()
        )));
    }
    drop(room);
    let key = out.unfilled_exact(p.keylen)?;
    wiping(|| scrypt::scrypt(password, &p.salt, &p.costs, key))
        .map_err(|_| KernelError::InvalidInput("scrypt cannot derive a key this long".into()))?;
    out.commit(p.keylen);
    Ok(())
}

/// `crypto.scrypt()`'s derivation: the input is the password; parameters
/// `salt`, `N`, `r`, `p` and `keylen`.
pub static SCRYPT: KdfKernel<ScryptParams> =
    KdfKernel::new("scrypt", params, derive).with_memory(ScryptParams::memory_bytes);
