//! One adapter for every hash kernel: a [`Kernel`] whose state is an
//! incremental hasher and whose `finish` writes the digest. A hash kernel
//! differs from another only in four functions (check the parameters, make
//! a hasher from them, feed it, finish it), so each is a `static` of
//! [`HashKernel`] naming them; the RustCrypto hashers (`sha2`, `sha1`,
//! `md-5`) share [`HashKernel::rust_crypto`].

use sha2::Digest;

use super::model::{Kernel, Transform};
use super::params::{no_params, ParamError, RawParams};
use super::{KernelError, Parallel, RunContext, Sink};

/// A kernel that runs the incremental hasher `S`, made from parameters `P`.
pub struct HashKernel<S, P = ()> {
    name: &'static str,
    params: fn(&RawParams<'_>) -> Result<P, ParamError>,
    new: fn(&P) -> S,
    update: fn(&mut S, &[u8]),
    finish: fn(S, &mut Sink) -> Result<(), KernelError>,
    /// How a large one-shot input is hashed in parts, if this hash can.
    split: Option<SplitFn<P>>,
}

/// [`Kernel::run_split`] for a hash kernel.
pub type SplitFn<P> =
    fn(&P, &[u8], &RunContext<'_>, &mut Sink, &dyn Parallel) -> Option<Result<(), KernelError>>;

impl<S, P> HashKernel<S, P> {
    /// The same kernel, hashing large one-shot inputs in parts with `split`.
    pub const fn with_split(self, split: SplitFn<P>) -> Self {
        HashKernel { split: Some(split), ..self }
    }

    /// A hash kernel from its hasher's operations.
    pub const fn new(
        name: &'static str,
        params: fn(&RawParams<'_>) -> Result<P, ParamError>,
        new: fn(&P) -> S,
        update: fn(&mut S, &[u8]),
        finish: fn(S, &mut Sink) -> Result<(), KernelError>,
    ) -> Self {
        HashKernel { name, params, new, update, finish, split: None }
    }
}

impl<D: Digest> HashKernel<D> {
    /// A kernel over the RustCrypto hasher `D`.
    pub const fn rust_crypto(name: &'static str) -> Self {
        HashKernel::new(name, no_params, |_| D::new(), digest_update::<D>, digest_finish::<D>)
    }
}

fn digest_update<D: Digest>(hasher: &mut D, bytes: &[u8]) {
    hasher.update(bytes);
}

fn digest_finish<D: Digest>(hasher: D, out: &mut Sink) -> Result<(), KernelError> {
    out.write(&hasher.finalize())
}

/// A hasher between chunks; `None` once finished.
pub struct HashState<S> {
    hasher: Option<S>,
    update: fn(&mut S, &[u8]),
    finish: fn(S, &mut Sink) -> Result<(), KernelError>,
}

impl<S: Send + Clone + 'static> Transform for HashState<S> {
    fn update(
        &mut self,
        chunk: &[u8],
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        match &mut self.hasher {
            Some(h) => {
                (self.update)(h, chunk);
                Ok(())
            }
            None => Err(finished()),
        }
    }

    fn finish(&mut self, out: &mut Sink, _ctx: &RunContext<'_>) -> Result<(), KernelError> {
        (self.finish)(self.hasher.take().ok_or_else(finished)?, out)
    }

    fn fork(&self) -> Option<Box<dyn Transform>> {
        let hasher = Some(self.hasher.as_ref()?.clone());
        Some(Box::new(HashState { hasher, update: self.update, finish: self.finish }))
    }
}

fn finished() -> KernelError {
    KernelError::InvalidInput("this hash has already finished".into())
}

impl<S: Send + Clone + 'static, P: Send + Sync + 'static> Kernel for HashKernel<S, P> {
    type Params = P;
    type State = HashState<S>;

    fn name(&self) -> &'static str {
        self.name
    }

    fn facts(&self) -> crate::kernels::Facts {
        crate::kernels::Facts::HASH
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<P, ParamError> {
        (self.params)(raw)
    }

    fn start(&self, params: &P, _len_hint: Option<usize>) -> Result<HashState<S>, KernelError> {
        Ok(HashState { hasher: Some((self.new)(params)), update: self.update, finish: self.finish })
    }

    fn run_split(
        &self,
        params: &P,
        input: &[u8],
        ctx: &RunContext<'_>,
        out: &mut Sink,
        parallel: &dyn Parallel,
    ) -> Option<Result<(), KernelError>> {
        (self.split?)(params, input, ctx, out, parallel)
    }
}
