//! An example tidepool kernel library, built with `tidepool-kernel-sdk`:
//! kernels that are useful on their own and together exercise the kernel
//! model (parameters, large outputs written in place, streaming input,
//! cancellation, errors with their own codes).
//!
//! * `example/sha256`: SHA-256 with the crate tidepool's built-in uses (the
//!   benchmark of the ABI boundary);
//! * `example/rgba`: resizes and converts raw RGBA images;
//! * `example/ndjson`: validates newline-delimited JSON, naming the first bad
//!   record;
//! * `example/pbkdf2`: PBKDF2-HMAC-SHA256, long and cancellable;
//! * `example/panic`, `example/busy`, `example/tee`: misbehaving on purpose,
//!   for tidepool's tests (a panic; a loop that never checks for
//!   cancellation; output before the end, which no hash makes).
//!
//! Load it with `Pool.loadKernels('/path/to/libtidepool_example_kernels.so')`
//! or, as a Node addon, `Pool.loadKernels(require('./kernels.node').kernels())`.

pub mod handle;
mod ndjson;
mod pbkdf2;
mod rgba;
mod sha256;
mod testing;

tidepool_kernel_sdk::export_kernels!(
    sha256::Sha256,
    rgba::Rgba,
    ndjson::Ndjson,
    pbkdf2::Pbkdf2,
    testing::Panic,
    testing::Busy,
    testing::Tee
);
