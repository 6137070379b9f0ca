//! `xxh64`: XXH64, seed 0. The result is the canonical (big-endian) form.
use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Xxh64;

impl Kernel for Xxh64 {
    fn name(&self) -> &'static str {
        "xxh64"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let mut hasher = xxhash_rust::xxh64::Xxh64::new(0);
        ctx.feed(input, |piece| hasher.update(piece))?;
        Ok(Output::from_slice(&hasher.digest().to_be_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn reference_vectors() {
        // XXH64(seed 0) of the reference C implementation.
        assert_eq!(hex("xxh64", b""), "ef46db3751d8e999");
        assert_eq!(hex("xxh64", b"abc"), "44bc2cf5ad770999");
    }
}
