//! What a stream tells the JS engine of the memory its codec's state
//! holds: reported when the stream is made, brought to what the state
//! holds after each step, given back once when the stream is over (as
//! node:zlib's handles report their codec's allocations and free them at
//! close).

use std::sync::atomic::Ordering;
use std::sync::TryLockError;

use super::{State, Stream};

/// `Stream::reported` of a stream whose bytes were given back: none is
/// reported again.
pub(super) const GIVEN_BACK: usize = usize::MAX;

impl Stream {
    /// The bytes of state reported to the JS engine for this stream now (0
    /// once [`Stream::take_reported`] gave them back).
    pub fn reported(&self) -> usize {
        match self.reported.load(Ordering::Relaxed) {
            GIVEN_BACK => 0,
            bytes => bytes,
        }
    }

    /// The bytes the stream's state holds now, as far as the core knows:
    /// [`Stream::state_bytes`] while a kernel's state lives between chunks,
    /// what a made state holds before (a stream that has not started, or
    /// whose only chunk ran as a one-shot task and let its state go; a
    /// codec that sizes itself to the input it sees, as brotli does, holds
    /// little until then). None while a step holds the state.
    fn holds(&self) -> Option<usize> {
        let kernel = self.kernel_ref().ok()?;
        let slot = match self.state.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(match &*slot {
            State::Open(position) if position.transform.is_some() => {
                kernel.state_bytes(&self.params)
            }
            State::Open(_) => kernel.made_bytes(&self.params),
            State::Closed(_) => 0,
        })
    }

    /// Brings the bytes reported for this stream to what its state holds
    /// now ([`Stream::holds`]): returns the change to tell the JS engine
    /// (0 while a step holds the state, or once the bytes were given
    /// back). The binding calls it after each step, on the JS thread.
    pub fn sync_reported(&self) -> isize {
        let Some(holds) = self.holds() else { return 0 };
        let mut now = self.reported.load(Ordering::Relaxed);
        loop {
            if now == GIVEN_BACK || now == holds {
                return 0;
            }
            match self.reported.compare_exchange(now, holds, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return holds as isize - now as isize,
                Err(changed) => now = changed,
            }
        }
    }

    /// Gives back the bytes reported for this stream: its own, once; 0
    /// after, and no later [`Stream::sync_reported`] reports any again.
    /// The binding calls it when the stream is over (finished, failed or
    /// destroyed: as node:zlib's handles free their state at close, not
    /// when collected) or, at the latest, when its handle is collected.
    pub fn take_reported(&self) -> usize {
        match self.reported.swap(GIVEN_BACK, Ordering::Relaxed) {
            GIVEN_BACK => 0,
            bytes => bytes,
        }
    }
}
