//! `panic`: always panics. Exists to test that a kernel panic becomes a
//! rejected task (`ERR_TIDEPOOL_PANIC`) and that the pool keeps its threads.
use super::{Kernel, KernelError, Output, RunContext};
use crate::input::Input;

pub struct Panic;

impl Kernel for Panic {
    fn name(&self) -> &'static str {
        "panic"
    }

    fn run(&self, input: &Input, _ctx: &RunContext<'_>) -> Result<Output, KernelError> {
        panic!("the panic kernel panicked on purpose ({} bytes of input)", input.len());
    }
}
