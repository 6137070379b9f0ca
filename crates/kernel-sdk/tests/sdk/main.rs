//! The SDK on its own: kernels defined here with `export_kernels!`, driven
//! through the descriptor's function pointers exactly as tidepool drives a
//! loaded library, against a fake host written here (it records what `fail`
//! says, collects the output of `write` and `unfilled`/`commit`, and answers
//! `check` with a chosen status).
//!
//! * `kernels.rs`: the kernels; `host.rs`: the fake host; `drive.rs`:
//!   driving a kernel as tidepool does; `tests.rs`: the tests.

mod drive;
mod host;
mod kernels;
mod tests;
