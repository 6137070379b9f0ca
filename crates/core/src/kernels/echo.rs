//! `echo`: its output is its input (the parts of an array joined). Exists
//! to test and measure the path of large results, whose size it makes
//! exact: a task of N bytes returns N bytes, in one allocation.

use super::model::{Kernel, Transform};
use super::params::{no_params, ParamError, RawParams};
use super::{KernelError, RunContext, Sink};

pub struct Echo;

/// Reserves the output once, on the first chunk.
pub struct EchoState {
    reserve: Option<usize>,
}

impl Transform for EchoState {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        if let Some(n) = self.reserve.take() {
            out.reserve(n);
        }
        out.write(chunk)
    }

    fn finish(&mut self, _out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        Ok(())
    }
}

impl Kernel for Echo {
    type Params = ();
    type State = EchoState;

    fn name(&self) -> &'static str {
        "echo"
    }

    fn facts(&self) -> crate::kernels::Facts {
        crate::kernels::Facts::TEST
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<(), ParamError> {
        no_params(raw)
    }

    fn start(&self, _params: &(), len_hint: Option<usize>) -> Result<EchoState, KernelError> {
        Ok(EchoState { reserve: len_hint })
    }
}
