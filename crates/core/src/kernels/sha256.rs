//! `sha256`: FIPS 180-4 SHA-256 (uses SHA-NI when the CPU has it).
use super::digest::DigestKernel;

pub static SHA256: DigestKernel<sha2::Sha256> = DigestKernel::new("sha256");

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn nist_vectors() {
        assert_eq!(hex("sha256", b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex("sha256", b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
