//! `xxh3`: XXH3 64-bit, seed 0. The result is the canonical (big-endian) form.
use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Xxh3;

impl Kernel for Xxh3 {
    fn name(&self) -> &'static str {
        "xxh3"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        ctx.feed(input, |piece| hasher.update(piece))?;
        Ok(Output::from_slice(&hasher.digest().to_be_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn reference_vectors() {
        // XXH3_64bits() of the reference C implementation.
        assert_eq!(hex("xxh3", b""), "2d06800538d394c2");
        assert_eq!(hex("xxh3", b"abc"), "78af5f94892f3950");
    }
}
