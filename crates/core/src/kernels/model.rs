//! The kernel model: a kernel is a byte transform with state.
//!
//! * [`Kernel`] is what a kernel author implements, with its own types: it
//!   checks its parameters once (`params`, when a task or stream is
//!   created) and makes a fresh state from them (`start`).
//! * [`Transform`] is that state: it is fed the input in chunks (`update`)
//!   and ends with `finish`; both may write output of any length into a
//!   [`Sink`]. A digest writes nothing until `finish`.
//! * [`AnyKernel`] is the same kernel with the types erased, as the registry
//!   (and, later, a loaded library's adapter) holds it. Every [`Kernel`] is
//!   one through a blanket impl.
//!
//! The three ways a kernel runs are the same calls: a one-shot task is
//! `start`, `update` per input chunk, `finish` ([`AnyKernel::run`], with the
//! state on the stack: no allocation); a stream keeps a boxed state across
//! tasks ([`AnyKernel::start`]); a kernel behind a C ABI is an adapter whose
//! `Params` and `State` wrap the library's handles.

use super::params::{ParamError, Params, RawParams};
use super::{Facts, KernelError, Parallel, RunContext, Sink};
use crate::input::Input;

/// What [`Transform::update_until`] did with its chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fed {
    /// It took all of it.
    All,
    /// It stopped at the sink's pause point after taking this many bytes:
    /// call again with the rest (and a sink with room).
    Paused(usize),
    /// Its format's stream ended after this many bytes (a decoder that
    /// reached the end of what it decodes): the rest of the chunk, and any
    /// later input, is not its to read.
    Ended(usize),
}

/// The state of one task's or one stream's computation.
pub trait Transform: Send {
    /// Consumes the next chunk of input, writing any output it makes.
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError>;
    /// Ends the input, writing what is left (a digest, a trailer). Called once.
    fn finish(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError>;
    /// [`update`](Transform::update) that may stop early: once the sink has
    /// reached its pause point (a stream's reader is full), a transform that
    /// can stop between two pieces of its output does, and says how much of
    /// the chunk it took. The default takes it all (a digest writes nothing
    /// until the end, so it never needs to stop).
    fn update_until(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<Fed, KernelError> {
        self.update(chunk, out, ctx).map(|()| Fed::All)
    }
    /// [`flush`](Transform::flush) that may stop at the sink's pause point:
    /// false when there is more to write (call again, with the same `kind`).
    fn flush_until(
        &mut self,
        kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<bool, KernelError> {
        self.flush(kind, out, ctx).map(|()| true)
    }
    /// [`finish`](Transform::finish) that may stop at the sink's pause
    /// point: false when there is more to write (call again).
    fn finish_until(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<bool, KernelError> {
        self.finish(out, ctx).map(|()| true)
    }
    /// Writes what the state holds back, so that the output so far decodes
    /// to all the input so far (`flush()` of a `node:zlib` stream). `kind` is
    /// the codec family's own constant (`Z_SYNC_FLUSH`, `BROTLI_OPERATION_FLUSH`,
    /// `ZSTD_e_flush`...), checked by the binding. The default writes
    /// nothing: digests and decoders hold nothing back that a flush could
    /// release.
    fn flush(
        &mut self,
        kind: u32,
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        let _ = (kind, out, ctx);
        Ok(())
    }
    /// Starts the state over in place (`node:zlib`'s `reset()`), as a new
    /// stream's but keeping what was changed since it was made, as zlib's
    /// `deflateReset` keeps a level set by `params()`: `Ok(true)`. The
    /// default, `Ok(false)`: nothing of the kind to keep; the stream makes
    /// the state afresh from its parameters.
    fn reset(&mut self) -> Result<bool, KernelError> {
        Ok(false)
    }
    /// Called once, before any input, on a stream whose pool may run parts
    /// of its tasks on several threads: a transform that can take its input
    /// in blocks ([`update_parts`](Transform::update_parts)) cuts it so from
    /// here on, whichever way each piece then comes, and says true (only
    /// then is `update_parts` called). The default does not.
    fn allow_parts(&mut self) -> bool {
        false
    }
    /// Takes the start of `rest` (what is left of a stream chunk's input)
    /// in parts on `parallel`'s idle threads, when it is large enough to;
    /// returns the bytes taken (none: it could not). Their output waits in
    /// the state and is written by the next calls, before their own; the
    /// first `update_until` that writes the last of it with input to take
    /// says `Paused(0)`, so the step ends and the next one may take parts
    /// again.
    fn update_parts(
        &mut self,
        _rest: &[&[u8]],
        _out: &mut Sink,
        _ctx: &RunContext<'_>,
        _parallel: &dyn Parallel,
    ) -> Result<usize, KernelError> {
        Ok(0)
    }
    /// Output bytes the state has made already and holds for the next
    /// calls (blocks taken by [`update_parts`](Transform::update_parts)).
    /// A call writes them before any work of its own, and an
    /// `update_until` that writes the last of them does nothing more: with
    /// input, it says `Paused(0)`; without, `All`. The default holds none.
    fn pending(&self) -> usize {
        0
    }
    /// A copy of the state, going on independently from here
    /// (`node:crypto`'s `hash.copy()`); `None` for a state that cannot be
    /// copied (codecs, loaded kernels), the default.
    fn fork(&self) -> Option<Box<dyn Transform>> {
        None
    }
}

/// A named computation over bytes, with typed parameters and state.
pub trait Kernel: Send + Sync + 'static {
    /// The checked parameters (`()` when the kernel takes none).
    type Params: Send + Sync + 'static;
    /// One task's or stream's state.
    type State: Transform + 'static;

    /// The name users pass as `kernel`.
    fn name(&self) -> &'static str;
    /// Checks the parameters given for a task or stream.
    fn params(&self, raw: &RawParams<'_>) -> Result<Self::Params, ParamError>;
    /// True for a decoder, whose output may be far larger than its input:
    /// it gets the pool's smaller default output limit (a decompression
    /// bomb must not reach the largest Buffer Node can make).
    fn expands(&self) -> bool {
        false
    }
    /// What the JavaScript side needs to know of it (see facts.rs).
    fn facts(&self) -> Facts {
        Facts::OTHER
    }
    /// About how many bytes a started state of these parameters holds (its
    /// window and tables: what a stream keeps between its chunks), for the
    /// binding to report to V8 as a stream's external memory, so that the
    /// collector feels it. 0, the default, for a state of a few hundred
    /// bytes (the hashes).
    fn state_bytes(&self, _params: &Self::Params) -> usize {
        0
    }
    /// About how many bytes a state of these parameters holds when made,
    /// before any input: [`Kernel::state_bytes`], the default, for a codec
    /// that takes its window and tables at once (as zlib's `deflateInit`
    /// does); less for one that sizes them to the input it is first given
    /// (brotli: a one-shot task or a stream's only chunk holds far less
    /// than a long stream's window).
    fn made_bytes(&self, params: &Self::Params) -> usize {
        self.state_bytes(params)
    }
    /// The bytes a one-shot task of these parameters holds while it runs,
    /// beyond its input and output: a memory-hard hash's (Argon2's
    /// blocks, scrypt's V). What the pool's `maxWorkingBytes` counts; 0,
    /// the default, for the kernels whose state is small.
    fn working_bytes(&self, _params: &Self::Params) -> usize {
        0
    }
    /// A fresh state. `len_hint` is the input's total length when known
    /// (a one-shot task), to size output buffers once.
    fn start(
        &self,
        params: &Self::Params,
        len_hint: Option<usize>,
    ) -> Result<Self::State, KernelError>;
    /// Runs a one-shot task over `input` in parts on `parallel`, when the
    /// kernel can split it and the input is large enough to gain from it;
    /// None: the task runs whole, as without `parallel`.
    fn run_split(
        &self,
        _params: &Self::Params,
        _input: &[u8],
        _ctx: &RunContext<'_>,
        _out: &mut Sink,
        _parallel: &dyn Parallel,
    ) -> Option<Result<(), KernelError>> {
        None
    }
    /// Runs a one-shot task over one contiguous input in a way of its own
    /// (a library that is faster when it sees the whole input at once),
    /// when the kernel has one; None: the task runs as a stream of chunks.
    fn run_contiguous(
        &self,
        _params: &Self::Params,
        _input: &[u8],
        _ctx: &RunContext<'_>,
        _out: &mut Sink,
    ) -> Option<Result<(), KernelError>> {
        None
    }
}

/// A [`Kernel`] with its types erased.
pub trait AnyKernel: Send + Sync {
    /// The name users pass as `kernel`.
    fn name(&self) -> &'static str;
    /// Checks raw parameters into the form tasks carry.
    fn params(&self, raw: &RawParams<'_>) -> Result<Params, ParamError>;
    /// See [`Kernel::expands`].
    fn expands(&self) -> bool;
    /// See [`Kernel::facts`].
    fn facts(&self) -> Facts;
    /// See [`Kernel::state_bytes`]; parameters made for another kernel: 0.
    fn state_bytes(&self, params: &Params) -> usize;
    /// See [`Kernel::made_bytes`]; parameters made for another kernel: 0.
    fn made_bytes(&self, params: &Params) -> usize;
    /// [`Kernel::working_bytes`].
    fn working_bytes(&self, params: &Params) -> usize;
    /// Runs a one-shot task: the whole input, then finish.
    fn run(
        &self,
        params: &Params,
        input: &Input,
        ctx: &RunContext<'_>,
        out: &mut Sink,
    ) -> Result<(), KernelError>;
    /// A boxed state for a stream, fed across tasks.
    fn start(
        &self,
        params: &Params,
        len_hint: Option<usize>,
    ) -> Result<Box<dyn Transform>, KernelError>;
}

impl<K: Kernel> AnyKernel for K {
    fn name(&self) -> &'static str {
        Kernel::name(self)
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<Params, ParamError> {
        Kernel::params(self, raw).map(Params::of)
    }

    fn expands(&self) -> bool {
        Kernel::expands(self)
    }

    fn facts(&self) -> Facts {
        Kernel::facts(self)
    }

    fn state_bytes(&self, params: &Params) -> usize {
        with_params(self, params, |p| Ok(Kernel::state_bytes(self, p))).unwrap_or(0)
    }

    fn made_bytes(&self, params: &Params) -> usize {
        with_params(self, params, |p| Ok(Kernel::made_bytes(self, p))).unwrap_or(0)
    }

    fn working_bytes(&self, params: &Params) -> usize {
        with_params(self, params, |p| Ok(Kernel::working_bytes(self, p))).unwrap_or(0)
    }

    fn run(
        &self,
        params: &Params,
        input: &Input,
        ctx: &RunContext<'_>,
        out: &mut Sink,
    ) -> Result<(), KernelError> {
        // The parameters are resolved once (a task without any has its
        // kernel's defaults made here) for whichever way the task runs.
        with_params(self, params, |p| {
            if let Some(bytes) = input.contiguous() {
                let whole = ctx
                    .parallel()
                    .and_then(|parallel| {
                        Kernel::run_split(self, p, bytes, ctx, &mut *out, parallel)
                    })
                    .or_else(|| Kernel::run_contiguous(self, p, bytes, ctx, &mut *out));
                if let Some(result) = whole {
                    return result;
                }
            }
            let mut state = Kernel::start(self, p, Some(input.len()))?;
            ctx.feed(input, |piece| state.update(piece, out, ctx))?;
            state.finish(out, ctx)
        })
    }

    fn start(
        &self,
        params: &Params,
        len_hint: Option<usize>,
    ) -> Result<Box<dyn Transform>, KernelError> {
        with_params(self, params, |p| Kernel::start(self, p, len_hint))
            .map(|s| Box::new(s) as Box<dyn Transform>)
    }
}

/// Calls `f` with `params` as `K`'s own type. A task posted without
/// parameters gets the kernel's defaults (its parameters checked from an
/// empty list); parameters made by another kernel are refused.
fn with_params<K: Kernel, T>(
    kernel: &K,
    params: &Params,
    f: impl FnOnce(&K::Params) -> Result<T, KernelError>,
) -> Result<T, KernelError> {
    if let Some(p) = params.get::<K::Params>() {
        return f(p);
    }
    if !params.is_none() {
        return Err(KernelError::InvalidInput(format!(
            "parameters made for another kernel reached \"{}\"",
            Kernel::name(kernel)
        )));
    }
    let defaults = Kernel::params(kernel, &RawParams::none())
        .map_err(|e| KernelError::InvalidInput(e.to_string()))?;
    f(&defaults)
}

impl dyn AnyKernel {
    /// Runs a one-shot task with the default parameters and no output
    /// limit, returning its output (tests, benchmarks, direct use).
    pub fn compute(
        &self,
        input: &Input,
        ctx: &RunContext<'_>,
    ) -> Result<super::Output, KernelError> {
        let mut out = Sink::new(usize::MAX);
        self.run(&Params::NONE, input, ctx, &mut out)?;
        Ok(out.into_output())
    }
}
