//! The adapter that runs a loaded library's kernel like a built-in: its
//! parameters made and freed by the library, its state driven through the
//! same [`AnyKernel`] and [`Transform`] calls, each call lent a host.

use std::ffi::c_void;
use std::ptr;

use tidepool_kernel_sdk::abi::{self, TpKernel, TpValue};

use super::host::Call;
use super::spec::{js_number, Spec};
use crate::input::Input;
use crate::kernels::lent::Misuse;
use crate::kernels::params::{ParamError, Params, RawParams, RawValue};
use crate::kernels::{AnyKernel, KernelError, RunContext, Sink, Transform};

/// A kernel of a loaded library.
pub struct Foreign {
    pub(super) name: &'static str,
    pub(super) kernel: TpKernel,
    pub(super) specs: Vec<Spec>,
    /// The parameter names, for [`ParamError::Unknown`], and each one's
    /// `expected` text, for [`ParamError::Missing`]: `'static` from
    /// [`Foreign::seal`] on (leaked: a registered kernel lives as long as
    /// the process; a refused library leaves nothing behind).
    pub(super) known: &'static [&'static str],
    pub(super) expected: &'static [&'static str],
    /// What a task without parameters runs with, made once (from no
    /// values) when it was registered.
    pub(super) defaults: Result<Params, ParamError>,
    /// Uses of this kernel's hosts after their calls returned, for its next
    /// call to report: leaked by [`Foreign::seal`] (a kept host may name it
    /// for as long as the process lives).
    pub(super) misuse: &'static Misuse,
}

/// The misuse record of kernels not sealed yet (tidepool calls none).
pub(super) static UNSEALED: Misuse = Misuse::new();

// SAFETY: `kernel` holds pointers to immutable data and functions of a
// library that is never unloaded; the ABI requires its functions to be
// callable from any thread, concurrently for different tasks.
unsafe impl Send for Foreign {}
// SAFETY: as above; a `Foreign` is only mutated (sealed) before it is
// registered, and only read once other threads can reach it.
unsafe impl Sync for Foreign {}

/// A loaded kernel's parameters: the library's pointer, freed by the
/// library when the last task holding them ends.
struct ForeignParams {
    ptr: *mut c_void,
    drop: Option<abi::DropFn>,
    /// The kernel that made them (a task's parameters must be its kernel's).
    owner: *const Foreign,
}

// SAFETY: the ABI makes parameter objects shareable read-only between
// threads; the pointer is only passed back to the library that made it.
unsafe impl Send for ForeignParams {}
// SAFETY: as above.
unsafe impl Sync for ForeignParams {}

impl Drop for ForeignParams {
    fn drop(&mut self) {
        if let Some(drop) = self.drop {
            // SAFETY: `ptr` came from this kernel's `make_params` and is
            // dropped once, here, after every task using it has ended.
            unsafe { drop(self.ptr) }
        }
    }
}

impl Foreign {
    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Readies a kernel that is being registered: its texts become
    /// `'static` (leaked: it lives as long as the process), and the
    /// parameters a task without any runs with are made, once (a kernel
    /// with a required parameter has none). Call it where the kernel will
    /// stay: parameters remember their kernel's address.
    pub fn seal(&mut self) {
        self.misuse = Box::leak(Box::new(Misuse::new()));
        self.known = Box::leak(self.specs.iter().map(|s| s.name).collect());
        self.expected = Box::leak(
            self.specs.iter().map(|s| &*Box::leak(s.expected.clone().into_boxed_str())).collect(),
        );
        self.defaults = self.make(&RawParams::none());
    }

    /// Checks `raw` against the schema, then has the library make its
    /// parameters from the values.
    fn make(&self, raw: &RawParams<'_>) -> Result<Params, ParamError> {
        raw.only(self.known)?;
        let mut values = Vec::with_capacity(self.specs.len());
        for (i, s) in self.specs.iter().enumerate() {
            let mut v = TpValue {
                present: 1,
                boolean: 0,
                integer: 0,
                number: 0.0,
                data: ptr::null(),
                len: 0,
            };
            let given = match s.kind {
                abi::TP_PARAM_INTEGER => raw
                    .integer(s.name, i128::from(s.int_range.0)..=i128::from(s.int_range.1))?
                    .map(|n| v.integer = n as i64),
                abi::TP_PARAM_NUMBER => number(raw, s)?.map(|n| v.number = n),
                abi::TP_PARAM_BOOLEAN => raw.boolean(s.name)?.map(|b| v.boolean = u32::from(b)),
                abi::TP_PARAM_STRING => {
                    raw.text(s.name)?.map(|t| (v.data, v.len) = (t.as_ptr(), t.len()))
                }
                _ => raw.bytes(s.name)?.map(|b| (v.data, v.len) = (b.as_ptr(), b.len())),
            };
            if given.is_none() {
                if s.required {
                    return Err(ParamError::Missing {
                        name: s.name,
                        expected: self.expected.get(i).copied().unwrap_or(""),
                    });
                }
                v.present = 0;
            }
            values.push(v);
        }
        let Some(make) = self.kernel.make_params else {
            return Ok(Params::NONE);
        };
        let call = Call::new(self.misuse, None, None);
        let mut out = ptr::null_mut();
        // SAFETY: the library's function with its ABI: `values` holds one
        // live value per schema entry (borrowing `raw`, alive for the
        // call), `out` and `host` are live for the call.
        let status = call
            .lend(|host| unsafe { make(values.as_ptr(), values.len() as u32, &mut out, host) })
            .map_err(|e| ParamError::Refused { message: e.to_string() })?;
        // Ownership follows the status: what the library handed over with
        // TP_OK is freed by it even if the call broke a rule; after a
        // failure, `out` is not ours to free.
        let made = (status == abi::TP_OK).then(|| ForeignParams {
            ptr: out,
            drop: self.kernel.drop_params,
            owner: self,
        });
        call.outcome(status, self.name)
            .map_err(|e| ParamError::Refused { message: e.to_string() })?;
        Ok(Params::of(made.expect("an outcome is Ok only for TP_OK")))
    }

    /// The library's pointer for `params` (this kernel's, or its defaults).
    fn params_ptr<'p>(
        &'p self,
        params: &'p Params,
    ) -> Result<(*const c_void, &'p Params), KernelError> {
        let params = if params.is_none() {
            self.defaults.as_ref().map_err(|e| KernelError::InvalidInput(e.to_string()))?
        } else {
            params
        };
        if params.is_none() {
            return Ok((ptr::null(), params));
        }
        match params.get::<ForeignParams>() {
            Some(p) if ptr::eq(p.owner, self) => Ok((p.ptr, params)),
            _ => Err(KernelError::InvalidInput(format!(
                "parameters made for another kernel reached \"{}\"",
                self.name
            ))),
        }
    }

    /// A fresh state. `keep`: the state holds a share of its parameters (a
    /// stream's state outlives the call that made it; a one-shot task's
    /// does not, and its parameters outlive it).
    fn begin(
        &self,
        params: &Params,
        len_hint: Option<usize>,
        ctx: Option<&RunContext<'_>>,
        keep: bool,
    ) -> Result<ForeignState, KernelError> {
        let (ptr, params) = self.params_ptr(params)?;
        let k = &self.kernel;
        let (Some(start), Some(update), Some(finish), Some(drop)) =
            (k.start, k.update, k.finish, k.drop_state)
        else {
            unreachable!("checked by check_library");
        };
        let call = Call::new(self.misuse, None, ctx);
        let mut state = ptr::null_mut();
        let hint = len_hint.map_or(u64::MAX, |n| n as u64);
        // SAFETY: the library's function with its ABI: `ptr` is this
        // kernel's parameters (kept alive by the state below), the out
        // pointer and host are live for the call.
        let status = call.lend(|host| unsafe { start(ptr, hint, &mut state, host) })?;
        // As in `make`: a state handed over with TP_OK is dropped by the
        // library whatever the verdict; a failed start made none.
        let made = (status == abi::TP_OK).then(|| ForeignState {
            name: self.name,
            misuse: self.misuse,
            update,
            finish,
            drop,
            state,
            _params: keep.then(|| params.clone()),
        });
        call.outcome(status, self.name)?;
        Ok(made.expect("an outcome is Ok only for TP_OK"))
    }
}

/// A number parameter within its range.
fn number(raw: &RawParams<'_>, s: &Spec) -> Result<Option<f64>, ParamError> {
    match raw.get(s.name) {
        None => Ok(None),
        Some(RawValue::Number(n)) if n >= s.num_range.0 && n <= s.num_range.1 => Ok(Some(n)),
        Some(RawValue::Number(n)) => Err(ParamError::Range {
            name: s.name,
            expected: format!(
                ">= {} and <= {}",
                js_number(s.num_range.0),
                js_number(s.num_range.1)
            ),
            got: js_number(n),
        }),
        Some(other) => Err(ParamError::Type {
            name: s.name,
            expected: "of type number",
            got: other.type_name(),
        }),
    }
}

impl AnyKernel for Foreign {
    fn name(&self) -> &'static str {
        self.name
    }

    fn facts(&self) -> crate::kernels::Facts {
        // The ABI (version 1) says none of them.
        crate::kernels::Facts::OTHER
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<Params, ParamError> {
        self.make(raw)
    }

    fn expands(&self) -> bool {
        self.kernel.flags & abi::TP_KERNEL_EXPANDS != 0
    }

    fn state_bytes(&self, _params: &Params) -> usize {
        // The ABI (version 1) does not say how large a library's state is.
        0
    }

    fn made_bytes(&self, _params: &Params) -> usize {
        0
    }

    fn working_bytes(&self, _params: &Params) -> usize {
        0
    }

    fn run(
        &self,
        params: &Params,
        input: &Input,
        ctx: &RunContext<'_>,
        out: &mut Sink,
    ) -> Result<(), KernelError> {
        let mut state = self.begin(params, Some(input.len()), Some(ctx), false)?;
        ctx.feed(input, |piece| state.update(piece, out, ctx))?;
        state.finish(out, ctx)
    }

    fn start(
        &self,
        params: &Params,
        len_hint: Option<usize>,
    ) -> Result<Box<dyn Transform>, KernelError> {
        self.begin(params, len_hint, None, true).map(|s| Box::new(s) as Box<dyn Transform>)
    }
}

/// One task's state in the library, dropped by the library.
pub struct ForeignState {
    name: &'static str,
    misuse: &'static Misuse,
    update: abi::UpdateFn,
    finish: abi::FinishFn,
    drop: abi::DropFn,
    state: *mut c_void,
    /// The parameters the state was made from, kept alive as long as it
    /// when it may outlive them (a stream's).
    _params: Option<Params>,
}

// SAFETY: the ABI lets a state move between threads (used by one at a time).
unsafe impl Send for ForeignState {}

impl Drop for ForeignState {
    fn drop(&mut self) {
        // SAFETY: `state` came from this kernel's `start` and is dropped
        // once, here.
        unsafe { (self.drop)(self.state) }
    }
}

impl Transform for ForeignState {
    #[inline]
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Sink,
        ctx: &RunContext<'_>,
    ) -> Result<(), KernelError> {
        let call = Call::new(self.misuse, Some(out), Some(ctx));
        // SAFETY: the library's function with its ABI: our state, a live
        // input range and host for the call.
        let status = call
            .lend(|host| unsafe { (self.update)(self.state, chunk.as_ptr(), chunk.len(), host) })?;
        call.outcome(status, self.name)
    }

    #[inline]
    fn finish(&mut self, out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        let call = Call::new(self.misuse, Some(out), Some(ctx));
        // SAFETY: as in `update`.
        let status = call.lend(|host| unsafe { (self.finish)(self.state, host) })?;
        call.outcome(status, self.name)
    }
}
