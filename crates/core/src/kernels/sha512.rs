//! `sha512`: FIPS 180-4 SHA-512.
use super::digest::DigestKernel;

pub static SHA512: DigestKernel<sha2::Sha512> = DigestKernel::new("sha512");

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn nist_vectors() {
        assert_eq!(
            hex("sha512", b"abc"),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        );
    }
}
