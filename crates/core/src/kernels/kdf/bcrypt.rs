//! bcrypt (Provos and Mazières, 1999), on the `bcrypt` crate: the input is
//! the password, of which bcrypt reads at most 72 bytes (the reference's
//! rule: OpenBSD's, and the `bcrypt`, `bcryptjs` and `@node-rs/bcrypt`
//! packages' — the rest is ignored). The output is the modular crypt
//! string, `$2b$<cost>$<salt><hash>` (60 ASCII bytes), in the version asked
//! for: `2a`, `2b` and `2y` name the same computation.

use zeroize::Zeroizing;

use super::super::params::{required, ParamError, RawParams};
use super::super::{KernelError, RunContext, Sink};
use super::kernel::KdfKernel;

/// bcrypt's checked parameters.
#[derive(Clone)]
pub struct BcryptParams {
    cost: u32,
    salt: Zeroizing<[u8; 16]>,
    version: Prefix,
}

/// The version a string is written with (`bcrypt::Version` is not `Copy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefix {
    TwoA,
    TwoB,
    TwoY,
}

impl Prefix {
    fn version(self) -> bcrypt::Version {
        match self {
            Prefix::TwoA => bcrypt::Version::TwoA,
            Prefix::TwoB => bcrypt::Version::TwoB,
            Prefix::TwoY => bcrypt::Version::TwoY,
        }
    }
}

fn params(raw: &RawParams<'_>) -> Result<BcryptParams, ParamError> {
    raw.only(&["cost", "salt", "version"])?;
    let cost = required(raw.integer("cost", 4..=31)?, "cost", "an integer from 4 to 31")? as u32;
    let given = required(raw.bytes("salt")?, "salt", "16 bytes")?;
    let mut salt = Zeroizing::new([0u8; 16]);
    if given.len() != salt.len() {
        return Err(ParamError::Range {
            name: "salt",
            expected: "16 bytes".into(),
            got: format!("{} bytes", given.len()),
        });
    }
    salt.copy_from_slice(given);
    let versions = [("2a", Prefix::TwoA), ("2b", Prefix::TwoB), ("2y", Prefix::TwoY)];
    let version = raw.choice("version", &versions)?.unwrap_or(Prefix::TwoB);
    Ok(BcryptParams { cost, salt, version })
}

fn derive(
    p: &BcryptParams,
    password: &[u8],
    _ctx: &RunContext<'_>,
    out: &mut Sink,
) -> Result<(), KernelError> {
    let parts = bcrypt::hash_with_salt(password, p.cost, *p.salt)
        .map_err(|e| KernelError::InvalidInput(e.to_string()))?;
    out.write(parts.format_for_version(p.version.version()).as_bytes())
}

/// bcrypt: the modular crypt string of the input, with `cost`, `salt` (16
/// bytes) and `version` (`'2b'` unless given).
pub static BCRYPT: KdfKernel<BcryptParams> = KdfKernel::new("bcrypt", params, derive);
