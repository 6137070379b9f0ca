//! `spin`: burns CPU for a given time (tests and benchmarks). The duration is a
//! little-endian uint32 of microseconds in the first 4 bytes of the input.
use std::time::{Duration, Instant};

use super::{duration_micros, Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Spin;

impl Kernel for Spin {
    fn name(&self) -> &'static str {
        "spin"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        let deadline = Instant::now() + Duration::from_micros(duration_micros(input)?);
        loop {
            // Read the clock, then check: whatever time is seen as done has
            // also been checked against the task's deadline, even if this
            // thread was descheduled for longer than the whole spin.
            let now = Instant::now();
            ctx.check()?;
            if now >= deadline {
                return Ok(Output::EMPTY);
            }
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::run;
    #[test]
    fn spins_for_the_given_time() {
        let t = std::time::Instant::now();
        run("spin", &[&[0xe8, 0x03, 0, 0]]).unwrap(); // 1000 µs
        assert!(t.elapsed() >= std::time::Duration::from_micros(1000));
        assert!(run("spin", &[b"ab"]).is_err());
    }
}
