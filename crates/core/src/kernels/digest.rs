//! Shared adapter for RustCrypto hashers (`sha2`, `sha1`, `md-5`).

use std::marker::PhantomData;

use sha2::Digest;

use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

/// A kernel that runs the RustCrypto hasher `D` over the input.
pub struct DigestKernel<D> {
    name: &'static str,
    hasher: PhantomData<fn() -> D>,
}

impl<D> DigestKernel<D> {
    pub const fn new(name: &'static str) -> Self {
        DigestKernel { name, hasher: PhantomData }
    }
}

impl<D: Digest + 'static> Kernel for DigestKernel<D> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let mut hasher = D::new();
        ctx.feed(input, |piece| hasher.update(piece))?;
        Ok(Output::from_slice(&hasher.finalize()))
    }
}
