//! What the last step of a stream did, packed into one number for the
//! binding to read.

/// What the last step of a stream did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    pub outcome: Outcome,
    /// Input bytes the kernel has taken in all (`bytesWritten`).
    pub consumed: u64,
}

/// How a step left its chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The chunk ran to its end (and its flush or finish).
    Done = 0,
    /// The chunk stopped early (its output reached the budget): run it again.
    Paused = 1,
    /// The chunk ran to its end, and the kernel's format had ended: no
    /// later input is read.
    Ended = 2,
}

impl Report {
    /// One number: `consumed * 4 + outcome` (exact in a JavaScript number
    /// up to 2^51 bytes).
    pub fn pack(self) -> u64 {
        self.consumed << 2 | self.outcome as u64
    }

    pub fn unpack(n: u64) -> Report {
        let outcome = match n & 3 {
            1 => Outcome::Paused,
            2 => Outcome::Ended,
            _ => Outcome::Done,
        };
        Report { outcome, consumed: n >> 2 }
    }
}
