//! The timed kernels for tests and benchmarks: `spin` burns CPU and `sleep`
//! blocks its thread without using CPU, each for the duration in the first
//! 4 bytes of the input (a little-endian uint32 of microseconds). `sleep`
//! sleeps in slices of at most 1 ms so that cancellation is noticed quickly.

use std::time::{Duration, Instant};

use super::model::{Kernel, Transform};
use super::params::{no_params, ParamError, RawParams};
use super::{KernelError, RunContext, Sink};

/// A kernel that waits for the input's duration, calling `pause(time left)`
/// between looks at the clock.
pub struct Timed {
    name: &'static str,
    pause: fn(Duration),
}

/// Burns CPU.
pub static SPIN: Timed = Timed {
    name: "spin",
    pause: |_| {
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    },
};

/// Sleeps.
pub static SLEEP: Timed =
    Timed { name: "sleep", pause: |left| std::thread::sleep(left.min(Duration::from_millis(1))) };

/// The duration's bytes seen so far, and the input's length.
pub struct TimedState {
    prefix: [u8; 4],
    seen: usize,
    pause: fn(Duration),
}

impl Transform for TimedState {
    fn update(
        &mut self,
        chunk: &[u8],
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        let have = self.seen.min(4);
        let take = (4 - have).min(chunk.len());
        self.prefix[have..have + take].copy_from_slice(&chunk[..take]);
        self.seen += chunk.len();
        Ok(())
    }

    /// Reads the clock, then checks: whatever time is seen as done has also
    /// been checked against the task's deadline, even if this thread was
    /// descheduled for longer than the whole duration.
    fn finish(&mut self, _out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        if self.seen < 4 {
            return Err(KernelError::InvalidInput(format!(
                "this kernel reads its duration as a little-endian uint32 of microseconds from the first 4 bytes; the input has {}",
                self.seen
            )));
        }
        let deadline =
            Instant::now() + Duration::from_micros(u32::from_le_bytes(self.prefix) as u64);
        loop {
            let now = Instant::now();
            ctx.check()?;
            if now >= deadline {
                return Ok(());
            }
            (self.pause)(deadline - now);
        }
    }
}

impl Kernel for Timed {
    type Params = ();
    type State = TimedState;

    fn name(&self) -> &'static str {
        self.name
    }

    fn facts(&self) -> crate::kernels::Facts {
        // Its input is a little-endian u32 of microseconds.
        crate::kernels::Facts { min_input: 4, ..crate::kernels::Facts::TEST }
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<(), ParamError> {
        no_params(raw)
    }

    fn start(&self, _params: &(), _len_hint: Option<usize>) -> Result<TimedState, KernelError> {
        Ok(TimedState { prefix: [0; 4], seen: 0, pause: self.pause })
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::run;
    use std::time::{Duration, Instant};

    #[test]
    fn spins_for_the_given_time() {
        let t = Instant::now();
        run("spin", &[&[0xe8, 0x03, 0, 0]]).unwrap(); // 1000 µs
        assert!(t.elapsed() >= Duration::from_micros(1000));
        assert!(run("spin", &[b"ab"]).is_err());
    }

    #[test]
    fn sleeps_for_the_given_time() {
        let t = Instant::now();
        run("sleep", &[&[0x88], &[0x13, 0], &[0, 99]]).unwrap(); // 5000 µs, the duration split across parts
        assert!(t.elapsed() >= Duration::from_millis(5));
    }
}
