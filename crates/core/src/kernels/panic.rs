//! `panic`: always panics. Exists to test that a kernel panic becomes a
//! rejected task (`ERR_TIDEPOOL_PANIC`) and that the pool keeps its threads.

use super::model::{Kernel, Transform};
use super::params::{no_params, ParamError, RawParams};
use super::{KernelError, RunContext, Sink};

pub struct Panic;

/// The input length seen, for the message.
pub struct PanicState(usize);

impl Transform for PanicState {
    fn update(
        &mut self,
        chunk: &[u8],
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        self.0 += chunk.len();
        Ok(())
    }

    fn finish(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        panic!("the panic kernel panicked on purpose ({} bytes of input)", self.0);
    }
}

impl Kernel for Panic {
    type Params = ();
    type State = PanicState;

    fn name(&self) -> &'static str {
        "panic"
    }

    fn facts(&self) -> crate::kernels::Facts {
        crate::kernels::Facts::TEST
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<(), ParamError> {
        no_params(raw)
    }

    fn start(&self, _params: &(), _len_hint: Option<usize>) -> Result<PanicState, KernelError> {
        Ok(PanicState(0))
    }
}
