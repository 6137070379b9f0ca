//! `crc32`: CRC-32 (ISO-HDLC, as zlib and `zlib.crc32`), 4 bytes big-endian,
//! so the hex form equals `zlib.crc32(data).toString(16).padStart(8, '0')`.
use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Crc32;

impl Kernel for Crc32 {
    fn name(&self) -> &'static str {
        "crc32"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let mut hasher = crc32fast::Hasher::new();
        ctx.feed(input, |piece| hasher.update(piece))?;
        Ok(Output::from_slice(&hasher.finalize().to_be_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn check_value() {
        assert_eq!(hex("crc32", b"123456789"), "cbf43926");
        assert_eq!(hex("crc32", b""), "00000000");
    }
}
