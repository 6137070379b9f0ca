//! `md5`: MD5 (for compatibility with existing systems, not for security).
use super::digest::DigestKernel;

pub static MD5: DigestKernel<md5::Md5> = DigestKernel::new("md5");

#[cfg(test)]
mod tests {
    use crate::kernels::tests::hex;
    #[test]
    fn rfc1321_vectors() {
        assert_eq!(hex("md5", b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex("md5", b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
