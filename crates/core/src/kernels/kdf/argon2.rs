//! Argon2 (RFC 9106), in its three variants: `crypto.argon2(algorithm,
//! parameters)` of Node 24.7+, on `argon2-rust` (a port of the reference
//! C with SIMD chosen at run time). The input is the message (the
//! password); the parameters are node:crypto's names: `nonce` (the salt),
//! `parallelism`, `tagLength`, `memory` (KiB), `passes`, `secret` and
//! `associatedData`; and `version` (19, or 16 for strings of Argon2 1.0).
//! The memory (1 KiB blocks) is the task's own, wiped and freed when it
//! ends; its lanes run one after another on the task's thread.

use argon2_rust::params::{Memory, TagLen};
use argon2_rust::{Algorithm, Argon2, Params, Version};
use zeroize::Zeroizing;

use super::super::params::{required, ParamError, RawParams};
use super::super::{KernelError, RunContext, Sink};
use super::kernel::KdfKernel;

/// Argon2's checked parameters.
#[derive(Clone)]
pub struct Argon2Params {
    argon2: Argon2,
    nonce: Zeroizing<Vec<u8>>,
    secret: Zeroizing<Vec<u8>>,
    associated_data: Zeroizing<Vec<u8>>,
}

impl Argon2Params {
    /// The bytes of memory a task of these parameters holds while it runs.
    pub fn memory_bytes(&self) -> usize {
        (self.argon2.params().memory_blocks() as usize).saturating_mul(1024)
    }
}

/// A binary parameter of at most 2^32 - 1 bytes, the task's own copy.
fn bytes_param(name: &'static str, given: Option<&[u8]>) -> Result<Zeroizing<Vec<u8>>, ParamError> {
    let bytes = given.unwrap_or_default();
    if bytes.len() > u32::MAX as usize {
        return Err(ParamError::Range {
            name,
            expected: "at most 2^32 - 1 bytes".into(),
            got: format!("{} bytes", bytes.len()),
        });
    }
    Ok(Zeroizing::new(bytes.to_vec()))
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
    let nonce =
        bytes_param("nonce", Some(required(raw.bytes("nonce")?, "nonce", "8 bytes or more")?))?;
    if nonce.len() < 8 {
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
    let secret = bytes_param("secret", raw.bytes("secret")?)?;
    let associated_data = bytes_param("associatedData", raw.bytes("associatedData")?)?;
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
    let costs = Params::builder()
        .memory(Memory::kib(memory as u64))
        .passes(passes)
        .lanes(parallelism)
        .threads(1)
        .tag_len(TagLen::bytes(tag_length as u64))
        .build()
        .map_err(|e| ParamError::Value {
            name: "memory",
            expected: "costs Argon2 takes".into(),
            got: e.to_string(),
        })?;
    Ok(Argon2Params {
        argon2: Argon2::new(algorithm, version, costs),
        nonce,
        secret,
        associated_data,
    })
}

fn derive(
    p: &Argon2Params,
    password: &[u8],
    ctx: &RunContext<'_>,
    out: &mut Sink,
) -> Result<(), KernelError> {
    let len = p.argon2.params().tag_len_bytes();
    let tag = out.unfilled_exact(len)?;
    ctx.check()?;
    p.argon2.hash_into_with_ad(password, &p.nonce, &p.secret, &p.associated_data, tag).map_err(
        |e| match e {
            argon2_rust::Error::MemoryAllocationError => KernelError::InvalidInput(format!(
                "Argon2 could not allocate its {} bytes of memory",
                p.memory_bytes()
            )),
            other => KernelError::InvalidInput(other.to_string()),
        },
    )?;
    out.commit(len);
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
