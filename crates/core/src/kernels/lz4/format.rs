//! The frame format's constants (magic numbers, descriptor bits, block
//! sizes) and the small readings of them both directions share.

use std::ops::RangeInclusive;

use xxhash_rust::xxh32::xxh32;

use crate::kernels::codec::CORRUPT;
use crate::kernels::KernelError;

/// A frame's magic number.
pub(super) const MAGIC: u32 = 0x184D_2204;
/// Skippable frames' magic numbers: their content is skipped.
pub(super) const SKIPPABLE: RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;
/// The legacy format's magic number (lz4 before frames), refused.
pub(super) const LEGACY_MAGIC: u32 = 0x184C_2102;

/// The version in the top two bits of FLG, the descriptor's first byte.
pub(super) const VERSION: u8 = 0b01;
/// FLG: every block decodes on its own (else a block may refer to the
/// previous 64 KiB of output).
pub(super) const INDEPENDENT: u8 = 1 << 5;
/// FLG: each block is followed by the xxh32 of its bytes.
pub(super) const BLOCK_CHECKSUM: u8 = 1 << 4;
/// FLG: the descriptor holds the content size (8 bytes).
pub(super) const CONTENT_SIZE: u8 = 1 << 3;
/// FLG: the end mark is followed by the xxh32 of the content.
pub(super) const CONTENT_CHECKSUM: u8 = 1 << 2;
pub(super) const FLG_RESERVED: u8 = 1 << 1;
/// FLG: the descriptor holds a dictionary id (4 bytes); refused.
pub(super) const DICT_ID: u8 = 1;
/// The reserved bits of BD, the descriptor's second byte (bits 4-6 are the
/// block maximum size's id).
pub(super) const BD_RESERVED: u8 = 0x8F;

/// The block maximum sizes, by id from 4 to 7.
pub(super) const BLOCK_SIZES: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];
/// A block's size word with this bit set: the block is stored as it is.
pub(super) const STORED: u32 = 1 << 31;
/// How far back linked blocks may refer: the frame's last 64 KiB of output.
pub(super) const WINDOW: usize = 64 * 1024;

pub(super) fn corrupt(reason: &str) -> KernelError {
    KernelError::Format { code: CORRUPT, message: format!("LZ4 frame: {reason}") }
}

pub(super) fn le32(bytes: &[u8]) -> u32 {
    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The descriptor's checksum byte: the second byte of its xxh32.
pub(super) fn header_checksum(descriptor: &[u8]) -> u8 {
    (xxh32(descriptor, 0) >> 8) as u8
}
