//! `sha1`: SHA-1 (for compatibility with existing systems, not for security).
use super::digest::DigestKernel;

pub static SHA1: DigestKernel<sha1::Sha1> = DigestKernel::new("sha1");

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn rfc3174_vector() {
        assert_eq!(hex("sha1", b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    }
}
