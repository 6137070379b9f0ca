//! `crc32c`: CRC-32C (Castagnoli, as iSCSI / ext4), 4 bytes big-endian.
use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Crc32c;

impl Kernel for Crc32c {
    fn name(&self) -> &'static str {
        "crc32c"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let mut crc = 0u32;
        ctx.feed(input, |piece| crc = crc32c::crc32c_append(crc, piece))?;
        Ok(Output::from_slice(&crc.to_be_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn check_value() {
        assert_eq!(hex("crc32c", b"123456789"), "e3069283");
    }
}
