//! Kernels loaded through the C ABI, without a dynamic library: kernels
//! written with the SDK in this test binary, whose entry point hands its
//! descriptor to `kernels::register` exactly as a loaded library's would.
//! (The Node tests load real libraries: examples/kernels.)
//!
//! * `kernels.rs`: the SDK kernels this binary exports, and how tests call them.
//! * `sdk.rs`: those kernels registered, run, checked, on a pool.
//! * `descriptor.rs`: hand-made descriptors, each breaking one rule.
//! * `raw.rs`: kernels at the raw ABI; `hosts.rs`: the rules they test.

#[path = "../common/mod.rs"]
mod common;

// First: the others use its `named!` kernels.
#[macro_use]
mod kernels;

mod descriptor;
mod hosts;
mod raw;
mod sdk;
