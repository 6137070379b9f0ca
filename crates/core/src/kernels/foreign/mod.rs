//! Kernels from a library behind the C ABI (`tidepool_kernel_sdk::abi`):
//! checking a library's descriptor ([`check_library`]), and the adapter
//! ([`Foreign`]) that runs its kernels like built-ins: the same
//! [`AnyKernel`](super::AnyKernel) calls, the same [`Sink`](super::Sink)
//! (so `maxOutputBytes` holds), the same [`RunContext`](super::RunContext) (so cancellation and deadlines reach the kernel
//! through `check`).
//!
//! A library is native code with the process's privileges: nothing here
//! protects against a malicious one. What is checked is what an honest
//! library built against another version, or with a bug, gets wrong: the
//! ABI version and struct sizes, names, schemas, missing functions, statuses
//! that do not match what happened (a "cancelled" task that was not), a
//! `commit` past its room, error codes that are not codes.
//!
//! * `descriptor.rs`: checks what an entry point returned ([`check_library`]).
//! * `adapter.rs`: [`Foreign`], a loaded kernel run like a built-in.
//! * `host.rs`: the host functions lent to each call into the library, and
//!   what its status means.
//! * `error.rs`: [`LoadError`], why a library was refused.
//! * `spec.rs`: the checked shape of a kernel's schema, and the rules for
//!   its names, below the three files above.
//!
//! Registering the kernels is the registry's (`registry.rs`).

mod adapter;
mod descriptor;
mod error;
mod host;
mod spec;

#[cfg(test)]
mod tests;

pub use adapter::{Foreign, ForeignState};
pub use descriptor::check_library;
pub use error::LoadError;
