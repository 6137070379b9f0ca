//! `sha384`: FIPS 180-4 SHA-384.
use super::digest::DigestKernel;

pub static SHA384: DigestKernel<sha2::Sha384> = DigestKernel::new("sha384");

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn nist_vectors() {
        assert_eq!(
            hex("sha384", b"abc"),
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"
        );
    }
}
