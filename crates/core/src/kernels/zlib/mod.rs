//! The deflate family, named after `node:zlib`'s functions: `gzip` /
//! `gunzip`, `deflate` / `inflate` (the zlib format), `deflateRaw` /
//! `inflateRaw` and `unzip` (gzip or zlib, told by the header), on zlib-rs
//! (zlib's algorithms in safe Rust).
//!
//! The parameters are zlib's, with `node:zlib`'s names, ranges and
//! defaults. The decoders behave as Node's do at the edges: a gzip input may
//! hold several members (their outputs are joined), zero bytes after a
//! member are padding, other bytes must start another member; data after
//! the end of a zlib or raw stream is ignored; an input that ends before its
//! stream does is `Z_BUF_ERROR` ("unexpected end of file"), a corrupt one
//! `Z_DATA_ERROR`.
//!
//! A preset `dictionary` is zlib's, as Node sets it: a deflate or raw
//! encoder starts with it; a raw decoder too; a zlib-format decoder (inflate,
//! unzip) loads it when the stream asks for one, and a stream that asks
//! for one it was not given is `Z_NEED_DICT` ("Missing dictionary"; "Bad
//! dictionary" when the one given is not the one named).
//!
//! Output goes straight into the task's `Sink`, whose limit
//! (`maxOutputBytes`) stops a decompression bomb as soon as it passes it:
//! memory stays near the limit.
//!
//! `compress.rs` and `decompress.rs` are the two sides; `deflater.rs` the
//! encoder's zlib API; `blocks.rs` an output cut into blocks that threads
//! compress apart, for a large one-shot task (`parallel.rs`) and a stream
//! on a pool of several threads (`block_stream.rs`); `libdeflate.rs` the
//! one-shot gunzip of one member; `whole_body.rs` a whole body compressed
//! in one call of libdeflate; this file what they share: the format,
//! the error codes, and the controls a stream sends as flush kinds.

use super::KernelError;

pub use compress::{DEFLATE, DEFLATE_RAW, GZIP, PARAMS};
pub use decompress::{GUNZIP, INFLATE, INFLATE_RAW, UNZIP};

/// The container around the deflate stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// RFC 1952: header, deflate, CRC-32 and length.
    Gzip,
    /// RFC 1950: two-byte header, deflate, Adler-32.
    Zlib,
    /// RFC 1951 alone.
    Raw,
    /// Gzip or zlib, as the header says (decoding only: `unzip`).
    Auto,
}

impl Format {
    /// zlib's encoding of the format in `windowBits`.
    fn window_bits(self, bits: u8) -> i32 {
        match self {
            Format::Gzip => 16 + i32::from(bits),
            Format::Zlib => i32::from(bits),
            Format::Raw => -i32::from(bits),
            Format::Auto => 32 + i32::from(bits),
        }
    }
}

/// zlib's error codes as Node names them.
const Z_DATA_ERROR: &str = "Z_DATA_ERROR";
const Z_BUF_ERROR: &str = "Z_BUF_ERROR";
const Z_NEED_DICT: &str = "Z_NEED_DICT";
const Z_MEM_ERROR: &str = "Z_MEM_ERROR";
const Z_STREAM_ERROR: &str = "Z_STREAM_ERROR";

/// zlib's return code for each of the codes above (node:zlib's `errno`).
pub(super) fn errno_of(code: &str) -> Option<i32> {
    match code {
        Z_NEED_DICT => Some(2),
        Z_STREAM_ERROR => Some(-2),
        Z_DATA_ERROR => Some(-3),
        Z_MEM_ERROR => Some(-4),
        Z_BUF_ERROR => Some(-5),
        _ => None,
    }
}

/// The flush kind that stands for an empty write: node:zlib calls deflate
/// for it (Z_NO_FLUSH, no input), so a flush after it is not a repeat of
/// the one before and writes its empty block (ws counts on the four bytes
/// a sync flush ends with).
pub const EMPTY_WRITE: u32 = 0x300;

/// zlib's Z_FINISH: node:zlib's default `finishFlush`.
const Z_FINISH: i128 = 4;

fn format_error(code: &'static str, message: &str) -> KernelError {
    KernelError::Format { code, message: message.to_owned() }
}

pub(crate) mod block_stream;
mod blocks;
mod compress;
mod decompress;
mod deflater;
mod libdeflate;
pub(crate) mod parallel;
#[cfg(test)]
mod tests;
pub(crate) mod whole_body;
