//! Argon2 (RFC 9106), in its three variants: `crypto.argon2(algorithm,
//! parameters)` of Node 24.7+, on RustCrypto's `argon2` crate. The input is
//! the message (the password); the parameters are node:crypto's names:
//! `nonce` (the salt), `parallelism`, `tagLength`, `memory` (KiB),
//! `passes`, `secret` and `associatedData`; and `version` (19, or 16 for
//! strings of Argon2 1.0). The memory (1 KiB blocks) is
//! the task's own, wiped and freed when it ends.

use argon2::{Algorithm, Argon2, AssociatedData, ParamsBuilder, Version};
use zeroize::Zeroizing;

use super::super::params::{required, ParamError, RawParams};
use super::super::{KernelError, RunContext, Sink};
use super::kernel::KdfKernel;

/// Argon2's checked parameters.
#[derive(Clone)]
pub struct Argon2Params {
    algorithm: Algorithm,
    version: Version,
    nonce: Zeroizing<Vec<u8>>,
    secret: Zeroizing<Vec<u8>>,
    costs: argon2::Params,
    tag_length: usize,
}

impl Argon2Params {
    /// The bytes of memory a task of these parameters holds while it runs.
    pub fn memory_bytes(&self) -> usize {
        self.costs.block_count().saturating_mul(1024)
    }
}

fn bytes_param(raw: &RawParams<'_>, name: &'static str) -> Result<Zeroizing<Vec<u8>>, ParamError> {
    Ok(Zeroizing::new(raw.bytes(name)?.unwrap_or_default().to_vec()))
}

fn params(raw: &RawParams<'_>, algorithm: Algorithm) -> Result<Argon2Params, ParamError> {
    raw.only(&[
        "nonce",
        "parallelism",
        "tagLength",
        "memory",
        "passes",
        "secret",
        "associatedData",
        "version",
    ])?;
    let nonce = Zeroizing::new(required(raw.bytes("nonce")?, "nonce", "8 bytes or more")?.to_vec());
    if nonce.len() < 8 || nonce.len() > u32::MAX as usize {
        return Err(ParamError::Range {
            name: "nonce",
            expected: "8 bytes or more".into(),
            got: format!("{} bytes", nonce.len()),
        });
    }
    let parallelism = raw.integer("parallelism", 1..=(1 << 24) - 1)?;
    let parallelism = required(parallelism, "parallelism", "an integer")? as u32;
    let max_tag = i32::MAX as i128;
    let tag_length = required(raw.integer("tagLength", 4..=max_tag)?, "tagLength", "an integer")?;
    let min_memory = 8 * parallelism as i128;
    let memory = raw.integer("memory", min_memory..=u32::MAX as i128)?;
    let memory = required(memory, "memory", "an integer (KiB)")? as u32;
    let passes = raw.integer("passes", 1..=u32::MAX as i128)?;
    let passes = required(passes, "passes", "an integer")? as u32;
    let secret = bytes_param(raw, "secret")?;
    let data = raw.bytes("associatedData")?.unwrap_or_default();
    let data = AssociatedData::new(data).map_err(|_| ParamError::Range {
        name: "associatedData",
        expected: format!("at most {} bytes", AssociatedData::MAX_LEN),
        got: format!("{} bytes", data.len()),
    })?;
    let costs = ParamsBuilder::new()
        .m_cost(memory)
        .t_cost(passes)
        .p_cost(parallelism)
        .data(data)
        .output_len(tag_length as usize)
        .build()
        .map_err(|e| ParamError::Value {
            name: "memory",
            expected: "costs Argon2 takes".into(),
            got: e.to_string(),
        })?;
    // 0x13 (19), RFC 9106's; 0x10 (16) reads strings of Argon2 1.0.
    let version = match raw.integer("version", 16..=19)? {
        None | Some(19) => Version::V0x13,
        Some(16) => Version::V0x10,
        Some(other) => {
            return Err(ParamError::Value {
                name: "version",
                expected: "19 (0x13) or 16 (0x10)".into(),
                got: other.to_string(),
            })
        }
    };
    Ok(Argon2Params { algorithm, version, nonce, secret, costs, tag_length: tag_length as usize })
}

fn derive(
    p: &Argon2Params,
    password: &[u8],
    ctx: &RunContext<'_>,
    out: &mut Sink,
) -> Result<(), KernelError> {
    let argon2 = Argon2::new_with_secret(&p.secret, p.algorithm, p.version, p.costs.clone())
        .map_err(|e| KernelError::InvalidInput(e.to_string()))?;
    let tag = out.unfilled_exact(p.tag_length)?;
    ctx.check()?;
    argon2.hash_password_into(password, &p.nonce, tag).map_err(|e| match e {
        argon2::Error::OutOfMemory => KernelError::InvalidInput(format!(
            "Argon2 could not allocate its {} bytes of memory",
            p.memory_bytes()
        )),
        other => KernelError::InvalidInput(other.to_string()),
    })?;
    out.commit(p.tag_length);
    Ok(())
}

/// Argon2id (RFC 9106's recommended variant).
pub static ARGON2ID: KdfKernel<Argon2Params> =
    KdfKernel::new("argon2id", |raw| params(raw, Algorithm::Argon2id), derive)
        .with_memory(Argon2Params::memory_bytes);
/// Argon2i (data-independent memory access).
pub static ARGON2I: KdfKernel<Argon2Params> =
    KdfKernel::new("argon2i", |raw| params(raw, Algorithm::Argon2i), derive)
        .with_memory(Argon2Params::memory_bytes);
/// Argon2d (data-dependent memory access).
pub static ARGON2D: KdfKernel<Argon2Params> =
    KdfKernel::new("argon2d", |raw| params(raw, Algorithm::Argon2d), derive)
        .with_memory(Argon2Params::memory_bytes);
