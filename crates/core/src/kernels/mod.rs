//! Kernels: the computations a task can run.
//!
//! The model, which every kernel builds on:
//! * `model.rs`: a kernel is a byte transform with state ([`Kernel`], and
//!   [`AnyKernel`], the same behind one object type).
//! * `params.rs`: its parameters, checked once when a task is made.
//! * `context.rs`: the [`RunContext`] that feeds it the input in chunks and
//!   carries cancellation and the deadline.
//! * `sink.rs`: the [`Sink`] it writes output of any length into.
//! * `error.rs`: [`KernelError`], why a kernel did not produce a result.
//! * `registry.rs`: every kernel by number ([`KernelId`]) and by name, the
//!   [`BUILTIN`] ones first, then those [`register`]ed from libraries.
//!
//! What kernels of a kind share:
//! * `digest.rs`: the one adapter every hash kernel is a `static` of.
//! * `codec.rs`: the loop every streaming codec runs, and the errors
//!   node:zlib gives for every format.
//!
//! The kernels, each importing only from the modules above:
//! * `hashes.rs`: the hash table, keyed ones included.
//! * `zlib/` (the deflate family), `brotli/`, `zstd/`, `lz4/`: the codecs.
//! * `kdf/`: node:crypto's key derivations (`pbkdf2`, `scrypt`, `hkdf`).
//! * `timed.rs` (`spin`, `sleep`), `echo.rs`, `panic.rs`: for tests and benchmarks.
//! * `foreign/`: the adapter that runs a loaded library's kernels like
//!   built-ins, with `lent.rs`, the hosts lent to their calls.

mod brotli;
pub(crate) mod codec;
mod context;
mod digest;
mod echo;
mod error;
mod facts;
pub mod foreign;
pub(crate) mod hashes;
mod kdf;
mod lent;
mod lz4;
mod model;
mod panic;
pub mod params;
mod registry;
mod sink;
mod timed;
pub(crate) mod zlib;
pub(crate) mod zstd;

#[cfg(test)]
mod block_tests;
#[cfg(test)]
mod split_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use codec::PAIRS as CODEC_PAIRS;
pub use context::{write_parts, Parallel, PartResults, RunContext, CHUNK};
pub use error::KernelError;
pub use facts::{Dialect, Facts, Family, Kind, Packing};
pub use model::{AnyKernel, Fed, Kernel, Transform};
pub use params::{ParamError, Params, RawParams, RawValue};
pub use registry::{all, find, format_errno, get, register, KernelId, BUILTIN, MAX_LOADED};
pub use sink::{Output, Sink, INLINE};
pub use zlib::{EMPTY_WRITE as ZLIB_EMPTY_WRITE, PARAMS as ZLIB_PARAMS};
