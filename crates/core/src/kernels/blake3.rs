//! `blake3`: BLAKE3 with the default 32-byte output (SIMD chosen at run time).
use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Blake3;

impl Kernel for Blake3 {
    fn name(&self) -> &'static str {
        "blake3"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let mut hasher = blake3::Hasher::new();
        ctx.feed(input, |piece| {
            hasher.update(piece);
        })?;
        Ok(Output::from_slice(hasher.finalize().as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn official_vectors() {
        // From BLAKE3's test_vectors.json (input_len 0, and the "abc" example).
        assert_eq!(hex("blake3", b""), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
        assert_eq!(hex("blake3", b"abc"), "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85");
    }
}
