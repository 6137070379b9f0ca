//! PBKDF2 (RFC 8018, section 5.2) with an HMAC as its PRF:
//! `crypto.pbkdf2(password, salt, iterations, keylen, digest)`. The block
//! loop is written here rather than taken from the `pbkdf2` crate so that a
//! long derivation (a login's hundreds of thousands of iterations) stops
//! when its task is cancelled or times out, between iterations.

use hmac::{Hmac, KeyInit, Mac};
use sha2::digest::block_api::EagerHash;
use zeroize::{Zeroize, Zeroizing};

use super::super::params::{required, ParamError, RawParams};
use super::super::{KernelError, RunContext, Sink};
use super::hash::{with_hash, KdfHash};
use super::kernel::{key_length, salt, KdfKernel};

/// Iterations between two looks at the task's cancel flag and deadline.
const CHECK_EVERY: u32 = 1024;

/// PBKDF2's checked parameters: node:crypto's limits (OpenSSL's signed
/// ints): 1 to 2^31-1 iterations, 0 to 2^31-1 bytes of key.
#[derive(Clone)]
pub struct Pbkdf2Params {
    hash: KdfHash,
    salt: Zeroizing<Vec<u8>>,
    iterations: u32,
    keylen: usize,
}

fn params(raw: &RawParams<'_>) -> Result<Pbkdf2Params, ParamError> {
    raw.only(&["digest", "salt", "iterations", "keylen"])?;
    let hash = KdfHash::param(raw)?;
    let iterations = raw.integer("iterations", 1..=i32::MAX as i128)?;
    let iterations = required(iterations, "iterations", "an integer")? as u32;
    let keylen = key_length(raw, i32::MAX as usize)?;
    Ok(Pbkdf2Params { hash, salt: salt(raw)?, iterations, keylen })
}

fn derive(
    p: &Pbkdf2Params,
    password: &[u8],
    ctx: &RunContext<'_>,
    out: &mut Sink,
) -> Result<(), KernelError> {
    let key = out.unfilled_exact(p.keylen)?;
    with_hash!(p.hash, D => blocks::<D>(password, &p.salt, p.iterations, key, ctx))?;
    out.commit(p.keylen);
    Ok(())
}

/// Fills `key` with PBKDF2-HMAC-`D`'s blocks T_1, T_2, ... (the last one
/// cut to what is left).
fn blocks<D: EagerHash>(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    key: &mut [u8],
    ctx: &RunContext<'_>,
) -> Result<(), KernelError>
where
    Hmac<D>: KeyInit + Mac + Clone,
{
    let prf = <Hmac<D> as KeyInit>::new_from_slice(password).expect("HMAC takes any key length");
    let len = <Hmac<D> as hmac::digest::OutputSizeUser>::output_size();
    for (i, block) in key.chunks_mut(len).enumerate() {
        // U_1 = PRF(P, S || INT(i)), U_j = PRF(P, U_{j-1}), T_i = U_1 ^ ... ^ U_c.
        let mut mac = prf.clone();
        mac.update(salt);
        mac.update(&(i as u32 + 1).to_be_bytes());
        let mut u = mac.finalize().into_bytes();
        let mut t = u.clone();
        for round in 1..iterations {
            if round % CHECK_EVERY == 0 {
                ctx.check().inspect_err(|_| wipe(&mut [&mut u, &mut t]))?;
            }
            let mut mac = prf.clone();
            mac.update(&u);
            u = mac.finalize().into_bytes();
            t.iter_mut().zip(u.iter()).for_each(|(t, u)| *t ^= u);
        }
        block.copy_from_slice(&t[..block.len()]);
        wipe(&mut [&mut u, &mut t]);
    }
    Ok(())
}

/// Wipes the blocks a derivation worked in.
fn wipe(blocks: &mut [&mut [u8]]) {
    blocks.iter_mut().for_each(|b| b.zeroize());
}

/// `crypto.pbkdf2()`'s derivation: the input is the password; parameters
/// `digest`, `salt`, `iterations` and `keylen`.
pub static PBKDF2: KdfKernel<Pbkdf2Params> = KdfKernel::new("pbkdf2", params, derive);
