//! `spin`: burns CPU for a given time (tests and benchmarks). The duration is a
//! little-endian uint32 of microseconds in the first 4 bytes of the input.
use super::{run_for, Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Spin;

impl Kernel for Spin {
    fn name(&self) -> &'static str {
        "spin"
    }

    fn run(&self, input: &Input, ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        run_for(input, ctx, |_| {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        })
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
