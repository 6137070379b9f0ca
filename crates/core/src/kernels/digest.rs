//! One adapter for every hash kernel: a kernel that feeds the input to an
//! incremental hasher and returns its digest. A hash kernel differs from
//! another only in three functions (make a hasher, feed it, finish it), so
//! each one is a `static` of [`HashKernel`] naming them; the RustCrypto
//! hashers (`sha2`, `sha1`, `md-5`) share [`HashKernel::rust_crypto`].

use sha2::Digest;

use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

/// A kernel that runs the incremental hasher `S` over the input.
pub struct HashKernel<S> {
    name: &'static str,
    new: fn() -> S,
    update: fn(&mut S, &[u8]),
    finish: fn(S) -> Output,
}

impl<S> HashKernel<S> {
    /// A hash kernel from its hasher's three operations.
    pub const fn new(name: &'static str, new: fn() -> S, update: fn(&mut S, &[u8]), finish: fn(S) -> Output) -> Self {
        HashKernel { name, new, update, finish }
    }
}

impl<D: Digest> HashKernel<D> {
    /// A kernel over the RustCrypto hasher `D`.
    pub const fn rust_crypto(name: &'static str) -> Self {
        HashKernel::new(name, D::new, digest_update::<D>, digest_finish::<D>)
    }
}

fn digest_update<D: Digest>(hasher: &mut D, bytes: &[u8]) {
    hasher.update(bytes);
}

fn digest_finish<D: Digest>(hasher: D) -> Output {
    Output::from_slice(&hasher.finalize())
}

impl<S: 'static> Kernel for HashKernel<S> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let mut hasher = (self.new)();
        ctx.feed(input, |piece| (self.update)(&mut hasher, piece))?;
        Ok((self.finish)(hasher))
    }
}
