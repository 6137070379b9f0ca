//! Key derivations and password hashes: node:crypto's `pbkdf2`, `scrypt`,
//! `hkdf` and `argon2*`, and `bcrypt`. Each
//! kernel's input is the secret (the password, the input key material);
//! its parameters are the rest (salt, costs, the output's length). A
//! derivation cannot start before it has the whole secret, so the state
//! only gathers it (`Secret`), and `finish` derives.
//!
//! * `kernel.rs`: [`KdfKernel`], the one adapter every derivation is a
//!   `static` of, and the secret it gathers.
//! * `hash.rs`: the hashes a derivation's HMAC may run on, by node:crypto's name.
//! * `pbkdf2.rs`, `scrypt.rs`, `hkdf.rs`: the derivations.
//! * `argon2.rs`, `bcrypt.rs`: password hashing (Argon2's three variants,
//!   bcrypt's modular crypt string).

mod argon2;
mod bcrypt;
mod hash;
mod hkdf;
mod kernel;
mod pbkdf2;
mod scrypt;

#[cfg(test)]
mod tests;

pub use self::argon2::{ARGON2D, ARGON2I, ARGON2ID};
pub use self::bcrypt::BCRYPT;
pub use self::hkdf::HKDF;
pub use self::pbkdf2::PBKDF2;
pub use self::scrypt::SCRYPT;
