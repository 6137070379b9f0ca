//! Kernels from a library behind the C ABI (`tidepool_kernel_sdk::abi`):
//! checking a library's descriptor ([`check_library`]), and the adapter
//! ([`Foreign`]) that runs its kernels like built-ins: the same
//! [`AnyKernel`] calls, the same [`Sink`] (so `maxOutputBytes` holds), the
//! same [`RunContext`] (so cancellation and deadlines reach the kernel
//! through `check`).
//!
//! A library is native code with the process's privileges: nothing here
//! protects against a malicious one. What is checked is what an honest
//! library built against another version, or with a bug, gets wrong: the
//! ABI version and struct sizes, names, schemas, missing functions, statuses
//! that do not match what happened (a "cancelled" task that was not), a
//! `commit` past its room, error codes that are not codes.

use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Mutex, MutexGuard};

use tidepool_kernel_sdk::abi::{self, TpHost, TpKernel, TpLibrary, TpParamSpec, TpValue};

use super::lent::{self, Misuse};
use super::params::{ParamError, Params, RawParams, RawValue};
use super::{AnyKernel, KernelError, RunContext, Sink, Transform};
use crate::input::Input;

/// Most kernels one library may describe.
const MAX_KERNELS: u32 = 256;
/// Most parameters one kernel may take.
const MAX_PARAMS: u32 = 64;
/// Longest kernel name.
const MAX_NAME: usize = 128;
/// Longest parameter name or error code.
const MAX_CODE: usize = 64;
/// Longest error message kept from a kernel (longer ones are cut): what
/// fits, with the longest code, in the 1 KiB a task's error text may take
/// on its way to JavaScript (delivery.rs).
const MAX_MESSAGE: usize = 896;

/// Why a library was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// Built for another ABI version, or its structs are too small for it.
    Abi(String),
    /// The descriptor breaks a rule (a bad name, a missing function...).
    Invalid(String),
    /// A kernel's name is already taken (by a built-in or another library).
    Exists(String),
    /// The registry has no room for more kernels.
    Full,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Abi(m) | LoadError::Invalid(m) => f.write_str(m),
            LoadError::Exists(name) => write!(f, "a kernel named '{name}' is already registered"),
            LoadError::Full => f.write_str("no room for more kernels in this process"),
        }
    }
}

impl std::error::Error for LoadError {}

/// One parameter of a loaded kernel's schema, copied out of the library.
#[derive(Debug)]
struct Spec {
    name: &'static str,
    kind: u32,
    required: bool,
    int_range: (i64, i64),
    num_range: (f64, f64),
    /// What a missing required value is told ("an integer >= 1 and <= 10");
    /// made `'static` by [`Foreign::seal`].
    expected: String,
}

/// A kernel of a loaded library.
pub struct Foreign {
    name: &'static str,
    kernel: TpKernel,
    specs: Vec<Spec>,
    /// The parameter names, for [`ParamError::Unknown`], and each one's
    /// `expected` text, for [`ParamError::Missing`]: `'static` from
    /// [`Foreign::seal`] on (leaked: a registered kernel lives as long as
    /// the process; a refused library leaves nothing behind).
    known: &'static [&'static str],
    expected: &'static [&'static str],
    /// What a task without parameters runs with, made once (from no
    /// values) when it was registered.
    defaults: Result<Params, ParamError>,
    /// Uses of this kernel's hosts after their calls returned, for its next
    /// call to report: leaked by [`Foreign::seal`] (a kept host may name it
    /// for as long as the process lives).
    misuse: &'static Misuse,
}

/// The misuse record of kernels not sealed yet (tidepool calls none).
static UNSEALED: Misuse = Misuse::new();

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

/// Reads a NUL-terminated string of at most `max` bytes (none is read past
/// the first NUL or past `max + 1` bytes).
///
/// # Safety
/// `p` must be NULL or point to memory readable up to its NUL or `max + 1` bytes.
unsafe fn c_text(p: *const c_char, max: usize) -> Option<&'static str> {
    if p.is_null() {
        return None;
    }
    let mut len = 0;
    // SAFETY: the caller guarantees each byte up to the NUL (or `max + 1`) is readable.
    while unsafe { *p.add(len) } != 0 {
        len += 1;
        if len > max {
            return None;
        }
    }
    // SAFETY: `len` bytes before the NUL were just read; the library is never unloaded.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    std::str::from_utf8(bytes).ok()
}

/// `scope/name`, each part `[a-z0-9][a-z0-9._-]*`.
fn valid_kernel_name(name: &str) -> bool {
    let part = |p: &str| {
        p.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
    };
    matches!(name.split_once('/'), Some((scope, rest)) if part(scope) && part(rest))
}

/// `[A-Za-z][A-Za-z0-9_]*`, at most [`MAX_CODE`] bytes.
fn valid_identifier(s: &str) -> bool {
    s.len() <= MAX_CODE
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A number as JavaScript writes it (`Infinity`, `1e+300`, `0.5`).
fn js_number(n: f64) -> String {
    if n.is_infinite() {
        return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if n != 0.0 && (n.abs() >= 1e21 || n.abs() < 1e-6) {
        let e = format!("{n:e}");
        return match e.split_once('e') {
            Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
            _ => e,
        };
    }
    n.to_string()
}

/// Checks the descriptor an entry point returned and makes an adapter per
/// kernel. Nothing is registered here (see `super::register`).
///
/// # Safety
/// `library` must be NULL or what a library's `tidepool_kernels_v1`
/// returned, with the library loaded for the rest of the process.
pub unsafe fn check_library(library: *const TpLibrary) -> Result<Vec<Foreign>, LoadError> {
    if library.is_null() {
        return Err(LoadError::Invalid("the entry point returned NULL".into()));
    }
    // The first two fields are read before anything else, so a library of
    // another version is told so rather than misread.
    // SAFETY: a non-NULL descriptor has at least its version and size.
    let (version, size) = unsafe { ((*library).abi_version, (*library).size) };
    if version != abi::ABI_VERSION {
        return Err(LoadError::Abi(format!(
            "the library was built for kernel ABI version {version}; this tidepool supports version {}",
            abi::ABI_VERSION
        )));
    }
    if (size as usize) < size_of::<TpLibrary>() {
        return Err(LoadError::Abi(format!("the library's descriptor has {size} bytes; ABI version 1 needs {}", size_of::<TpLibrary>())));
    }
    // SAFETY: the library says its descriptor has at least our fields.
    let lib = unsafe { &*library };
    let stride = lib.kernel_size as usize;
    if stride < size_of::<TpKernel>() || !stride.is_multiple_of(align_of::<TpKernel>()) {
        return Err(LoadError::Abi(format!(
            "the library's kernels have {stride} bytes each; ABI version 1 needs {}",
            size_of::<TpKernel>()
        )));
    }
    if lib.kernel_count == 0 || lib.kernel_count > MAX_KERNELS || lib.kernels.is_null() {
        return Err(LoadError::Invalid(format!("a library describes 1 to {MAX_KERNELS} kernels; this one {}", lib.kernel_count)));
    }
    let mut out: Vec<Foreign> = Vec::with_capacity(lib.kernel_count as usize);
    for i in 0..lib.kernel_count as usize {
        // SAFETY: the library describes `kernel_count` kernels `stride`
        // bytes apart, each with at least our fields, suitably aligned.
        let k = unsafe { ptr::read(lib.kernels.cast::<u8>().add(i * stride).cast::<TpKernel>()) };
        // SAFETY: a descriptor's name is a NUL-terminated string of the library.
        let name = unsafe { c_text(k.name, MAX_NAME) }.filter(|n| valid_kernel_name(n)).ok_or_else(|| {
            LoadError::Invalid(format!("kernel {i} has no valid name: names are 'scope/name', lowercase letters, digits, '-', '_' or '.'"))
        })?;
        if out.iter().any(|f| f.name == name) {
            return Err(LoadError::Invalid(format!("the library names two kernels '{name}'")));
        }
        // SAFETY: as above; the schema lives as long as the library.
        let specs = unsafe { check_specs(name, &k) }?;
        if k.start.is_none() || k.update.is_none() || k.finish.is_none() || k.drop_state.is_none() {
            return Err(LoadError::Invalid(format!("kernel '{name}' lacks start, update, finish or drop_state")));
        }
        if !specs.is_empty() && k.make_params.is_none() {
            return Err(LoadError::Invalid(format!("kernel '{name}' takes parameters but has no make_params")));
        }
        if k.flags & !abi::TP_KERNEL_EXPANDS != 0 {
            return Err(LoadError::Invalid(format!("kernel '{name}' has flags {:#x}; ABI version 1 knows TP_KERNEL_EXPANDS (1)", k.flags)));
        }
        out.push(Foreign { name, kernel: k, specs, known: &[], expected: &[], defaults: Ok(Params::NONE), misuse: &UNSEALED });
    }
    Ok(out)
}

/// Copies a kernel's parameter schema out, checking it.
///
/// # Safety
/// `k.params` must be NULL or point to `k.param_count` specs of the library.
unsafe fn check_specs(name: &str, k: &TpKernel) -> Result<Vec<Spec>, LoadError> {
    let bad = |why: String| LoadError::Invalid(format!("kernel '{name}': {why}"));
    if k.param_count > MAX_PARAMS || (k.param_count > 0 && k.params.is_null()) {
        return Err(bad(format!("a kernel takes at most {MAX_PARAMS} parameters, described by a non-NULL array")));
    }
    let raw: &[TpParamSpec] = if k.param_count == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees the array.
        unsafe { std::slice::from_raw_parts(k.params, k.param_count as usize) }
    };
    let mut specs: Vec<Spec> = Vec::with_capacity(raw.len());
    for (j, p) in raw.iter().enumerate() {
        // SAFETY: a spec's name is a NUL-terminated string of the library.
        let pname = unsafe { c_text(p.name, MAX_CODE) }
            .filter(|n| valid_identifier(n))
            .ok_or_else(|| bad(format!("parameter {j} has no valid name (a letter, then letters, digits or '_')")))?;
        if specs.iter().any(|s| s.name == pname) {
            return Err(bad(format!("two parameters are named '{pname}'")));
        }
        let expected = match p.kind {
            abi::TP_PARAM_INTEGER if p.int_min <= p.int_max => format!("an integer >= {} and <= {}", p.int_min, p.int_max),
            abi::TP_PARAM_NUMBER if p.num_min <= p.num_max => {
                format!("a number >= {} and <= {}", js_number(p.num_min), js_number(p.num_max))
            }
            abi::TP_PARAM_BOOLEAN => "a boolean".to_owned(),
            abi::TP_PARAM_STRING => "a string".to_owned(),
            abi::TP_PARAM_BYTES => "a string or an instance of Buffer, TypedArray or DataView".to_owned(),
            abi::TP_PARAM_INTEGER | abi::TP_PARAM_NUMBER => return Err(bad(format!("parameter '{pname}' has an empty range"))),
            other => return Err(bad(format!("parameter '{pname}' has an unknown type {other}"))),
        };
        if p.required > 1 {
            return Err(bad(format!("parameter '{pname}': required is {} (0 or 1)", p.required)));
        }
        specs.push(Spec {
            name: pname,
            kind: p.kind,
            required: p.required == 1,
            int_range: (p.int_min, p.int_max),
            num_range: (p.num_min, p.num_max),
            expected,
        });
    }
    Ok(specs)
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
        self.expected = Box::leak(self.specs.iter().map(|s| &*Box::leak(s.expected.clone().into_boxed_str())).collect());
        self.defaults = self.make(&RawParams::none());
    }

    /// Checks `raw` against the schema, then has the library make its
    /// parameters from the values.
    fn make(&self, raw: &RawParams<'_>) -> Result<Params, ParamError> {
        raw.only(self.known)?;
        let mut values = Vec::with_capacity(self.specs.len());
        for (i, s) in self.specs.iter().enumerate() {
            let mut v = TpValue { present: 1, boolean: 0, integer: 0, number: 0.0, data: ptr::null(), len: 0 };
            let given = match s.kind {
                abi::TP_PARAM_INTEGER => {
                    raw.integer(s.name, i128::from(s.int_range.0)..=i128::from(s.int_range.1))?.map(|n| v.integer = n as i64)
                }
                abi::TP_PARAM_NUMBER => number(raw, s)?.map(|n| v.number = n),
                abi::TP_PARAM_BOOLEAN => raw.boolean(s.name)?.map(|b| v.boolean = u32::from(b)),
                abi::TP_PARAM_STRING => raw.text(s.name)?.map(|t| (v.data, v.len) = (t.as_ptr(), t.len())),
                _ => raw.bytes(s.name)?.map(|b| (v.data, v.len) = (b.as_ptr(), b.len())),
            };
            if given.is_none() {
                if s.required {
                    return Err(ParamError::Missing { name: s.name, expected: self.expected.get(i).copied().unwrap_or("") });
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
        let made = (status == abi::TP_OK).then(|| ForeignParams { ptr: out, drop: self.kernel.drop_params, owner: self });
        call.outcome(status, self.name).map_err(|e| ParamError::Refused { message: e.to_string() })?;
        Ok(Params::of(made.expect("an outcome is Ok only for TP_OK")))
    }

    /// The library's pointer for `params` (this kernel's, or its defaults).
    fn params_ptr<'p>(&'p self, params: &'p Params) -> Result<(*const c_void, &'p Params), KernelError> {
        let params = if params.is_none() { self.defaults.as_ref().map_err(|e| KernelError::InvalidInput(e.to_string()))? } else { params };
        if params.is_none() {
            return Ok((ptr::null(), params));
        }
        match params.get::<ForeignParams>() {
            Some(p) if ptr::eq(p.owner, self) => Ok((p.ptr, params)),
            _ => Err(KernelError::InvalidInput(format!("parameters made for another kernel reached \"{}\"", self.name))),
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
        let (Some(start), Some(update), Some(finish), Some(drop)) = (k.start, k.update, k.finish, k.drop_state) else {
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
            expected: format!(">= {} and <= {}", js_number(s.num_range.0), js_number(s.num_range.1)),
            got: js_number(n),
        }),
        Some(other) => Err(ParamError::Type { name: s.name, expected: "of type number", got: other.type_name() }),
    }
}

impl AnyKernel for Foreign {
    fn name(&self) -> &'static str {
        self.name
    }

    fn params(&self, raw: &RawParams<'_>) -> Result<Params, ParamError> {
        self.make(raw)
    }

    fn expands(&self) -> bool {
        self.kernel.flags & abi::TP_KERNEL_EXPANDS != 0
    }

    fn run(&self, params: &Params, input: &Input, ctx: &RunContext<'_>, out: &mut Sink) -> Result<(), KernelError> {
        let mut state = self.begin(params, Some(input.len()), Some(ctx), false)?;
        ctx.feed(input, |piece| state.update(piece, out, ctx))?;
        state.finish(out, ctx)
    }

    fn start(&self, params: &Params, len_hint: Option<usize>) -> Result<Box<dyn Transform>, KernelError> {
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
    fn update(&mut self, chunk: &[u8], out: &mut Sink, ctx: &RunContext<'_>) -> Result<(), KernelError> {
        let call = Call::new(self.misuse, Some(out), Some(ctx));
        // SAFETY: the library's function with its ABI: our state, a live
        // input range and host for the call.
        let status = call.lend(|host| unsafe { (self.update)(self.state, chunk.as_ptr(), chunk.len(), host) })?;
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

/// What tidepool lends one call into a library: what its host functions
/// act on, found from their `ctx` (a token, see lent.rs) while the call is
/// in progress.
///
/// The library may call host functions from any of its threads while its
/// function runs (a kernel that splits its work may check for cancellation
/// from each thread), so they only ever take `&Call`: `check` reads the run
/// context, which is shared; the others take the lock.
struct Call<'s, 'c> {
    run: Option<&'s RunContext<'c>>,
    state: Mutex<CallState<'s>>,
    /// Where a use of this call's host after it returned is recorded (the
    /// kernel's), and taken from when the call ends.
    misuse: &'static Misuse,
}

/// The host functions, as every host lent to a call has them.
const HOST_FUNCTIONS: TpHost = TpHost {
    size: size_of::<TpHost>() as u32,
    reserved: 0,
    ctx: ptr::null_mut(),
    fail: host_fail,
    write: host_write,
    unfilled: host_unfilled,
    commit: host_commit,
    reserve: host_reserve,
    check: host_check,
};

// Host functions share `&Call` between the library's threads.
const _: fn() = || {
    fn sync<T: Sync>() {}
    sync::<Call<'static, 'static>>();
};

/// What the output functions change during a call.
struct CallState<'s> {
    sink: Option<&'s mut Sink>,
    /// What `fail` said last.
    failure: Option<(String, String)>,
    /// A write was refused, or `unfilled` lent nothing: the output is
    /// incomplete, and the task is too large whatever the status.
    refused: bool,
    /// `unfilled` lent less than asked (the limit is nearer): a kernel that
    /// needs whole units may answer TP_TOO_LARGE.
    short: bool,
    /// The room `unfilled` lent last (what `commit` may mark).
    room: usize,
    /// A rule the library broke during the call.
    misuse: Option<String>,
}

impl<'s, 'c> Call<'s, 'c> {
    fn new(misuse: &'static Misuse, sink: Option<&'s mut Sink>, run: Option<&'s RunContext<'c>>) -> Self {
        let state = CallState { sink, failure: None, refused: false, short: false, room: 0, misuse: None };
        Call { run, state: Mutex::new(state), misuse }
    }

    /// Runs `f`, the call into the library, with a host over this call:
    /// its functions act on `self` (only ever as `&Call`) until `f`
    /// returns, and on nothing after (lent.rs).
    #[inline]
    fn lend<R>(&self, f: impl FnOnce(*const TpHost) -> R) -> Result<R, KernelError> {
        lent::lend(&HOST_FUNCTIONS, ptr::from_ref(self).cast(), self.misuse, f)
            .ok_or_else(|| KernelError::InvalidInput("more threads than tidepool can lend hosts to run loaded kernels at once".into()))
    }

    fn lock(&self) -> MutexGuard<'_, CallState<'s>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a status means, checked against what happened during the call.
    fn outcome(self, status: i32, kernel: &str) -> Result<(), KernelError> {
        let contract = |message: String| KernelError::Failed {
            code: "ERR_TIDEPOOL_KERNEL_CONTRACT".into(),
            message: format!("kernel '{kernel}' {message}"),
        };
        let run = self.run;
        // A host of this kernel used after its call had returned: this
        // call (of the task it was lent to, if it still runs; else the
        // kernel's next) reports it.
        if let Some(m) = self.misuse.take() {
            return Err(contract(m));
        }
        if let Some(m) = lent::UNATTRIBUTED.take() {
            return Err(KernelError::Failed { code: "ERR_TIDEPOOL_KERNEL_CONTRACT".into(), message: m });
        }
        let mut st = self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        let too_large = KernelError::TooLarge { limit: st.sink.as_ref().map_or(0, |s| s.limit()) };
        if let Some(m) = st.misuse.take() {
            return Err(contract(m));
        }
        match status {
            // An output with a refused piece missing is not a result.
            abi::TP_OK if st.refused => Err(too_large),
            abi::TP_OK => Ok(()),
            abi::TP_ERROR => Err(match st.failure.take() {
                Some((code, message)) => KernelError::Failed { code, message },
                None => KernelError::Failed {
                    code: "ERR_TIDEPOOL_KERNEL_FAILED".into(),
                    message: format!("kernel '{kernel}' failed without saying why"),
                },
            }),
            abi::TP_PANIC => Err(KernelError::Panic(st.failure.take().map_or_else(|| "the kernel panicked".to_owned(), |(_, m)| m))),
            abi::TP_CANCELLED | abi::TP_TIMED_OUT => match run.map(|r| r.check()) {
                Some(Err(e)) => Err(e),
                _ => Err(contract(format!("returned status {status} (cancelled or timed out) but the task was neither"))),
            },
            abi::TP_TOO_LARGE if st.refused || st.short => Err(too_large),
            abi::TP_TOO_LARGE => Err(contract("returned TP_TOO_LARGE but no write was refused".into())),
            other => Err(contract(format!("returned an unknown status {other}"))),
        }
    }
}

/// Runs `f` on the `Call` behind a host function's `ctx`, the host function
/// `what`; `fallback`, having done nothing, if `ctx` is not the token of a
/// call in progress (a host kept past its call, or garbage: the misuse is
/// recorded, see lent.rs), or on a panic.
///
/// # Safety
/// No call of a host function may overlap the return of the kernel
/// function its host was lent to (the ABI: every thread is done with the
/// host before that function returns). Any `ctx` is allowed.
unsafe fn with_call<T>(ctx: *mut c_void, what: &str, fallback: T, f: impl FnOnce(&Call<'_, '_>) -> T) -> T {
    let Some(call) = lent::live_call(ctx, what) else {
        return fallback;
    };
    // SAFETY: `live_call` gives the `Call` only while its token is the one
    // in progress on its slot: `Call::lend` borrows the call for as long
    // as the token is live and retires it before returning, so the call
    // is alive and unmoved (a host function racing that return is excluded
    // by the caller). It is only ever shared (`&Call`).
    let call = unsafe { &*call.cast::<Call<'_, '_>>() };
    // A panic must not unwind into the library (it would abort): none is
    // expected here, but a bug must not take the process down.
    catch_unwind(AssertUnwindSafe(|| f(call))).unwrap_or(fallback)
}

/// `len` bytes at `p` as a slice (empty for NULL).
///
/// # Safety
/// `p` must be NULL or point to `len` readable bytes, alive for `'a`.
unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees the range.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

unsafe extern "C" fn host_fail(ctx: *mut c_void, code: *const u8, code_len: usize, message: *const u8, message_len: usize) {
    // SAFETY: called by the library under the ABI's rules, with its byte ranges.
    unsafe {
        with_call(ctx, "fail", (), |call| {
            let code = std::str::from_utf8(bytes(code, code_len.min(MAX_CODE + 1))).ok().filter(|c| valid_identifier(c));
            let message = String::from_utf8_lossy(bytes(message, message_len.min(MAX_MESSAGE))).into_owned();
            call.lock().failure = Some((code.unwrap_or("ERR_TIDEPOOL_KERNEL_FAILED").to_owned(), message));
        })
    }
}

unsafe extern "C" fn host_write(ctx: *mut c_void, data: *const u8, len: usize) -> i32 {
    // SAFETY: called by the library under the ABI's rules, with a live byte range.
    unsafe {
        with_call(ctx, "write", abi::TP_ERROR, |call| {
            let mut st = call.lock();
            st.room = 0;
            if data.is_null() && len > 0 {
                st.misuse = Some(format!("wrote {len} bytes from NULL"));
                return abi::TP_ERROR;
            }
            let Some(sink) = st.sink.as_deref_mut() else {
                st.misuse = Some("wrote output outside update and finish".into());
                return abi::TP_ERROR;
            };
            if sink.write(bytes(data, len)).is_ok() {
                return abi::TP_OK;
            }
            st.refused = true;
            abi::TP_TOO_LARGE
        })
    }
}

unsafe extern "C" fn host_unfilled(ctx: *mut c_void, at_least: usize, room: *mut usize) -> *mut u8 {
    // SAFETY: called by the library under the ABI's rules; `room` is its
    // out-pointer.
    let p = unsafe {
        with_call(ctx, "unfilled", ptr::null_mut(), |call| {
            let mut st = call.lock();
            st.room = 0;
            // At least one byte: room is lent to be written into, and a loop
            // asking for "whatever is left" must get some or NULL, never an
            // endless run of empty rooms.
            let want = at_least.max(1);
            let lent = match st.sink.as_deref_mut() {
                None => {
                    st.misuse = Some("asked for output room outside update and finish".into());
                    None
                }
                Some(sink) => sink.unfilled(want).ok().map(|space| (space.as_mut_ptr(), space.len())),
            };
            let (p, n) = match lent {
                Some(lent) => lent,
                None => {
                    st.refused |= st.misuse.is_none();
                    (ptr::null_mut(), 0)
                }
            };
            st.short |= !p.is_null() && n < want;
            st.room = n;
            if !room.is_null() {
                *room = n;
            }
            p
        })
    };
    if p.is_null() && !room.is_null() {
        // SAFETY: as above (a host that lent nothing says so).
        unsafe { *room = 0 };
    }
    p
}

unsafe extern "C" fn host_commit(ctx: *mut c_void, n: usize) -> i32 {
    // SAFETY: called by the library under the ABI's rules.
    unsafe {
        with_call(ctx, "commit", abi::TP_ERROR, |call| {
            let mut st = call.lock();
            let room = std::mem::take(&mut st.room);
            match st.sink.as_deref_mut() {
                Some(sink) if n <= room => {
                    sink.commit(n);
                    abi::TP_OK
                }
                _ => {
                    st.misuse = Some(format!("committed {n} bytes of output into {room} bytes of room"));
                    abi::TP_ERROR
                }
            }
        })
    }
}

unsafe extern "C" fn host_reserve(ctx: *mut c_void, additional: usize) {
    // SAFETY: called by the library under the ABI's rules.
    unsafe {
        with_call(ctx, "reserve", (), |call| {
            let mut st = call.lock();
            st.room = 0;
            if let Some(sink) = st.sink.as_deref_mut() {
                sink.reserve(additional);
            }
        })
    }
}

unsafe extern "C" fn host_check(ctx: *mut c_void) -> i32 {
    // SAFETY: called by the library under the ABI's rules (from any of its
    // threads). A host kept past its call is told to stop.
    unsafe {
        with_call(ctx, "check", abi::TP_CANCELLED, |call| match call.run.map(|r| r.check()) {
            Some(Err(KernelError::TimedOut)) => abi::TP_TIMED_OUT,
            Some(Err(_)) => abi::TP_CANCELLED,
            _ => abi::TP_OK,
        })
    }
}

/// The adapter over an SDK library in this test binary, small enough for
/// Miri (`npm run test:miri`): the unsafe paths (descriptor reads, the host
/// functions' `ctx`, rooms lent into the sink, parameters and states freed
/// by their maker) on real calls.
#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use tidepool_kernel_sdk::{Context, Error, Kernel, Output, Param, Transform, Values};

    use super::*;

    /// Writes each input chunk back twice, through `unfilled`/`commit`,
    /// then `tail` bytes of `b'!'` through `write`.
    struct Twice;
    struct Doubling(Vec<u8>);
    impl Kernel for Twice {
        const NAME: &'static std::ffi::CStr = c"unit/twice";
        const PARAMS: &'static [Param] = &[Param::integer(c"tail", 0, 100), Param::bytes(c"prefix")];
        type Params = (usize, Vec<u8>);
        type State = Doubling;
        fn params(v: &Values<'_>) -> Result<(usize, Vec<u8>), Error> {
            Ok((v.integer("tail").unwrap_or(1) as usize, v.bytes("prefix").unwrap_or_default().to_vec()))
        }
        fn start(p: &(usize, Vec<u8>), _: Option<u64>) -> Result<Doubling, Error> {
            let mut tail = p.1.clone();
            tail.extend(std::iter::repeat_n(b'!', p.0));
            Ok(Doubling(tail))
        }
    }
    impl Transform for Doubling {
        fn update(&mut self, chunk: &[u8], out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
            for _ in 0..2 {
                let mut left = chunk;
                while !left.is_empty() {
                    let room = out.unfilled(left.len())?;
                    let n = room.len().min(left.len());
                    room[..n].copy_from_slice(&left[..n]);
                    out.commit(n)?;
                    left = &left[n..];
                }
            }
            Ok(())
        }
        fn finish(&mut self, out: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
            cx.check()?;
            if self.0.first() == Some(&b'x') {
                out.unfilled(4)?;
                return out.commit(5);
            }
            out.write(&self.0)
        }
    }

    tidepool_kernel_sdk::export_kernels!(Twice);

    /// The kernel, boxed before its defaults are made (parameters remember
    /// their kernel's address), as the registry does.
    fn twice() -> Box<Foreign> {
        // SAFETY: this binary's own descriptor, static.
        let mut kernels = unsafe { check_library(tidepool_kernels_v1()) }.unwrap();
        let mut kernel = Box::new(kernels.pop().unwrap());
        kernel.seal();
        kernel
    }

    fn run(kernel: &Foreign, params: &Params, data: &[u8], limit: usize) -> Result<Vec<u8>, KernelError> {
        let flag = AtomicBool::new(false);
        let mut sink = Sink::new(limit);
        kernel.run(params, &Input::Owned(data.to_vec()), &RunContext::new(&flag), &mut sink)?;
        Ok(sink.into_output().as_bytes().to_vec())
    }

    #[test]
    fn a_loaded_kernel_writes_in_place_and_frees_what_it_made() {
        let kernel = twice();
        assert_eq!(kernel.name(), "unit/twice");
        assert_eq!(run(&kernel, &Params::NONE, b"ab", 64).unwrap(), b"abab!");
        let raw = RawParams::new(vec![("tail", RawValue::Number(3.0)), ("prefix", RawValue::Bytes(b"<"))]);
        let params = kernel.params(&raw).unwrap();
        let long: Vec<u8> = (0..100u8).collect();
        let out = run(&kernel, &params, &long, 1024).unwrap();
        assert_eq!(out, [&long[..], &long[..], b"<!!!"].concat(), "spilled past the inline bytes");
        assert_eq!(run(&kernel, &params, &long, 150), Err(KernelError::TooLarge { limit: 150 }));
        let bad = kernel.params(&RawParams::new(vec![("prefix", RawValue::Bytes(b"x"))])).unwrap();
        let err = run(&kernel, &bad, b"", 64).unwrap_err();
        assert!(matches!(err, KernelError::Failed { ref code, .. } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT"), "{err:?}");
        let mut state = kernel.start(&params, None).unwrap();
        // Kept for good, as the registry keeps its kernels (their names and
        // schema texts are leaked to be `'static`).
        static KEPT: std::sync::Mutex<Vec<Foreign>> = std::sync::Mutex::new(Vec::new());
        drop(params); // the state keeps its parameters
        let flag = AtomicBool::new(false);
        let mut sink = Sink::new(64);
        state.update(b"z", &mut sink, &RunContext::new(&flag)).unwrap();
        state.finish(&mut sink, &RunContext::new(&flag)).unwrap();
        assert_eq!(sink.into_output().as_bytes(), b"zz<!!!");
        drop(state);
        KEPT.lock().unwrap().push(*kernel);
    }
}
