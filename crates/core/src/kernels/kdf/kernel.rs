//! One adapter for every key derivation: a [`Kernel`] whose state gathers
//! the secret, wiped when the task ends, and whose `finish` derives from it
//! with the task's parameters.

use zeroize::Zeroizing;

use super::super::model::{Kernel, Transform};
use super::super::params::{ParamError, RawParams};
use super::super::{Facts, KernelError, RunContext, Sink};

/// The derivation `derive` with parameters `P` (checked by `params`).
pub struct KdfKernel<P> {
    name: &'static str,
    params: fn(&RawParams<'_>) -> Result<P, ParamError>,
    derive: DeriveFn<P>,
    /// The working memory a task of these parameters holds (a memory-hard hash's).
    memory: Option<fn(&P) -> usize>,
}

/// Writes the key derived from `secret` with `params` to the sink.
pub type DeriveFn<P> = fn(&P, &[u8], &RunContext<'_>, &mut Sink) -> Result<(), KernelError>;

impl<P> KdfKernel<P> {
    pub const fn new(
        name: &'static str,
        params: fn(&RawParams<'_>) -> Result<P, ParamError>,
        derive: DeriveFn<P>,
    ) -> Self {
        KdfKernel { name, params, derive, memory: None }
    }

    /// The same kernel, its tasks holding `memory(params)` bytes while they run.
    pub const fn with_memory(self, memory: fn(&P) -> usize) -> Self {
        KdfKernel { memory: Some(memory), ..self }
    }
}

/// A derivation's state: the secret so far (its own copy, wiped when
/// dropped), and what it derives with.
pub struct Secret<P> {
    secret: Zeroizing<Vec<u8>>,
    params: P,
    derive: DeriveFn<P>,
}

impl<P: Send> Transform for Secret<P> {
    fn update(
        &mut self,
        chunk: &[u8],
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        // Grown by hand so that no copy is left behind unwiped by a
        // reallocation.
        if self.secret.capacity() - self.secret.len() < chunk.len() {
            let mut grown = Zeroizing::new(Vec::with_capacity(
                (self.secret.len() + chunk.len()).max(2 * self.secret.capacity()),
            ));
            grown.extend_from_slice(&self.secret);
            self.secret = grown;
        }
        self.secret.extend_from_slice(chunk);
        Ok(())
    }

    fn finish(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        ctx.check()?;
        (self.derive)(&self.params, &self.secret, ctx, out)
    }
}

impl<P: Clone + Send + Sync + 'static> Kernel for KdfKernel<P> {
    type Params = P;
    type State = Secret<P>;

    fn name(&self) -> &'static str {
        self.name
    }

    fn facts(&self) -> Facts {
        Facts::KDF
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<P, ParamError> {
        (self.params)(raw)
    }

    fn working_bytes(&self, params: &P) -> usize {
        self.memory.map_or(0, |memory| memory(params))
    }

    fn start(&self, params: &P, len_hint: Option<usize>) -> Result<Secret<P>, KernelError> {
        Ok(Secret {
            secret: Zeroizing::new(Vec::with_capacity(len_hint.unwrap_or(0))),
            params: params.clone(),
            derive: self.derive,
        })
    }
}

/// The `keylen` parameter: the bytes to derive, required.
pub fn key_length(raw: &RawParams<'_>, max: usize) -> Result<usize, ParamError> {
    let n = raw.integer("keylen", 0..=max as i128)?;
    Ok(super::super::params::required(n, "keylen", "an integer")? as usize)
}

/// The `salt` parameter as this task's own copy, wiped when dropped; empty when not given.
pub fn salt(raw: &RawParams<'_>) -> Result<Zeroizing<Vec<u8>>, ParamError> {
    Ok(Zeroizing::new(raw.bytes("salt")?.unwrap_or_default().to_vec()))
}
