//! `sleep`: blocks its thread for a given time without using CPU (tests and
//! benchmarks). The duration is a little-endian uint32 of microseconds in the
//! first 4 bytes of the input. It sleeps in slices of at most 1 ms so that
//! cancellation is noticed quickly.
use std::time::Duration;

use super::{run_for, Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Sleep;

const SLICE: Duration = Duration::from_millis(1);

impl Kernel for Sleep {
    fn name(&self) -> &'static str {
        "sleep"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        run_for(input, ctx, |left| std::thread::sleep(left.min(SLICE)))
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::tests::run;
    #[test]
    fn sleeps_for_the_given_time() {
        let t = std::time::Instant::now();
        run("sleep", &[&[0x88, 0x13, 0, 0]]).unwrap(); // 5000 µs
        assert!(t.elapsed() >= std::time::Duration::from_millis(5));
    }
}
