//! `lz4Compress` / `lz4Decompress`: the LZ4 frame format (the lz4 project's
//! `lz4_Frame_format.md`) as the `lz4` command-line tool writes and reads it,
//! over lz4_flex's block functions in safe Rust.
//!
//! The frames are written and parsed here, not by lz4_flex's frame module:
//! its decoder pulls from an `io::Read` and cannot wait for the next chunk,
//! and its encoder would copy every block once more. Parameters:
//! `blockSize` (65536, 262144, 1048576 or 4194304; default 4194304, the
//! CLI's `-B7`), `contentChecksum` (default true, as the CLI writes) and
//! `blockChecksum` (default false). Blocks are independent and the content
//! size is not written; a one-shot task shorter than its block size gets the
//! smallest block size that holds it, as the CLI does for a short file.
//!
//! The decoder is fed chunks of any size. It holds at most one block (4 MiB)
//! of input across chunks and, for linked blocks, the last 64 KiB of the
//! output, and sizes nothing from the frame's content size. It reads
//! concatenated frames and skips skippable ones, as the CLI does, and checks
//! every checksum and content size a frame carries. An input that stops
//! inside a frame is `Z_BUF_ERROR` ("unexpected end of file", as node:zlib
//! says for every format); a corrupt one, data after a frame included, is
//! `ERR_TIDEPOOL_CORRUPT_INPUT` with a short reason. Frames that need a
//! dictionary, and the legacy format, are refused as corrupt.
//!
//! * `format.rs`: the frame format's constants and shared readings.
//! * `encoder.rs`: `lz4Compress`, blocks written as the input fills them.
//! * `decoder.rs`: `lz4Decompress`, a push parser of frames and blocks.

mod decoder;
mod encoder;
mod format;

#[cfg(test)]
mod tests;

pub use decoder::LZ4_DECOMPRESS;
pub use encoder::LZ4_COMPRESS;
