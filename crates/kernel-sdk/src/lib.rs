//! Write tidepool kernels in Rust.
//!
//! A kernel is a byte transform with state, the model tidepool's own kernels
//! use: it checks its parameters once, when a task is posted
//! ([`Kernel::params`]); makes a fresh state for each task
//! ([`Kernel::start`]); is fed the input in chunks, read in place
//! ([`Transform::update`]); and ends with [`Transform::finish`]. Both may
//! write output of any length into an [`Output`], and should call
//! [`Context::check`] between pieces of long work so the task can be
//! cancelled or time out.
//!
//! [`export_kernels!`] turns a list of kernels into the library's one entry
//! point (the [`abi`] module): a versioned descriptor with the kernels'
//! names and parameter schemas, and functions that catch every panic.
//!
//! ```
//! use tidepool_kernel_sdk::{export_kernels, Context, Error, Kernel, Output, Param, Transform, Values};
//!
//! /// Counts the bytes equal to `byte`; the count as 8 little-endian bytes.
//! struct CountByte;
//! struct Counting { byte: u8, count: u64 }
//!
//! impl Kernel for CountByte {
//!     const NAME: &'static std::ffi::CStr = c"demo/count-byte";
//!     const PARAMS: &'static [Param] = &[Param::integer(c"byte", 0, 255).required()];
//!     type Params = u8;
//!     type State = Counting;
//!     fn params(values: &Values<'_>) -> Result<u8, Error> {
//!         Ok(values.integer("byte").unwrap_or(0) as u8)
//!     }
//!     fn start(byte: &u8, _len_hint: Option<u64>) -> Result<Counting, Error> {
//!         Ok(Counting { byte: *byte, count: 0 })
//!     }
//! }
//!
//! impl Transform for Counting {
//!     fn update(&mut self, chunk: &[u8], _out: &mut Output<'_>, _cx: &Context<'_>) -> Result<(), Error> {
//!         self.count += chunk.iter().filter(|&&b| b == self.byte).count() as u64;
//!         Ok(())
//!     }
//!     fn finish(&mut self, out: &mut Output<'_>, _cx: &Context<'_>) -> Result<(), Error> {
//!         out.write(&self.count.to_le_bytes())
//!     }
//! }
//!
//! export_kernels!(CountByte);
//! ```
//!
//! Build the crate as a `cdylib` with `panic = "unwind"` (the default;
//! `panic = "abort"` is refused at compile time, since a panic could then
//! not become a rejected task), and load it with
//! `Pool.loadKernels('/absolute/path/libname.so')`. See
//! `docs/writing-kernels.md` in the tidepool repository.

pub mod abi;
mod ffi;

use std::borrow::Cow;
use std::ffi::CStr;
use std::fmt;

use abi::{TpHost, TpParamSpec, TpValue};

pub use ffi::{descriptor, library};

/// A kernel: a name, a parameter schema, and how to make a task's state.
pub trait Kernel: 'static {
    /// The name users pass as `kernel`: `scope/name`, each part lowercase
    /// letters, digits, `-`, `_` or `.` (a scope keeps it clear of
    /// tidepool's built-in kernels and of other libraries).
    const NAME: &'static CStr;
    /// The parameters this kernel takes. tidepool checks every task's
    /// parameters against it (unknown names, types, integer and number
    /// ranges, required ones) before [`Kernel::params`] sees them.
    const PARAMS: &'static [Param] = &[];
    /// True for a decoder, whose output may be far larger than its input:
    /// its tasks get the pool's smaller default output limit.
    const EXPANDS: bool = false;

    /// The checked parameters, shared (read-only) by every task made with
    /// them, possibly on several threads at once.
    type Params: Send + Sync + 'static;
    /// One task's state.
    type State: Transform;

    /// Makes the parameters from the values given (on the JavaScript
    /// thread, when the task is posted or the pool made). An error here
    /// makes `post()` throw `ERR_INVALID_ARG_VALUE` with its message.
    fn params(values: &Values<'_>) -> Result<Self::Params, Error>;
    /// A fresh state for one task; `len_hint` is the input's total length
    /// when known.
    fn start(params: &Self::Params, len_hint: Option<u64>) -> Result<Self::State, Error>;
}

/// One task's computation.
pub trait Transform: Send + 'static {
    /// Consumes the next chunk of input (read in place; do not keep it),
    /// writing any output it makes.
    fn update(&mut self, chunk: &[u8], out: &mut Output<'_>, cx: &Context<'_>)
        -> Result<(), Error>;
    /// Ends the input, writing what is left. Called once, and not after an
    /// `update` failed.
    fn finish(&mut self, out: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error>;
}

/// One entry of a kernel's parameter schema. Make them with the `const`
/// constructors: `Param::integer(c"width", 1, 65535).required()`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy)]
pub struct Param(pub(crate) TpParamSpec);

impl Param {
    const fn of(name: &'static CStr, kind: u32) -> Param {
        Param(TpParamSpec {
            name: name.as_ptr(),
            kind,
            required: 0,
            int_min: 0,
            int_max: 0,
            num_min: 0.0,
            num_max: 0.0,
        })
    }

    /// An integer within `min..=max` (a number without a fraction, or a bigint).
    pub const fn integer(name: &'static CStr, min: i64, max: i64) -> Param {
        let mut p = Param::of(name, abi::TP_PARAM_INTEGER);
        p.0.int_min = min;
        p.0.int_max = max;
        p
    }

    /// A number within `min..=max` (never NaN).
    pub const fn number(name: &'static CStr, min: f64, max: f64) -> Param {
        let mut p = Param::of(name, abi::TP_PARAM_NUMBER);
        p.0.num_min = min;
        p.0.num_max = max;
        p
    }

    /// A boolean.
    pub const fn boolean(name: &'static CStr) -> Param {
        Param::of(name, abi::TP_PARAM_BOOLEAN)
    }

    /// A string.
    pub const fn string(name: &'static CStr) -> Param {
        Param::of(name, abi::TP_PARAM_STRING)
    }

    /// Bytes: a Buffer, TypedArray, DataView or ArrayBuffer, or a string as
    /// its UTF-8 bytes.
    pub const fn bytes(name: &'static CStr) -> Param {
        Param::of(name, abi::TP_PARAM_BYTES)
    }

    /// The same parameter, which every task must give.
    pub const fn required(mut self) -> Param {
        self.0.required = 1;
        self
    }

    /// The parameter's name.
    pub fn name(&self) -> &'static str {
        // SAFETY: every `Param` is made from a `&'static CStr` (the field is
        // private to this crate).
        let name = unsafe { CStr::from_ptr(self.0.name) };
        name.to_str().unwrap_or("")
    }
}

/// The values given for a task's parameters, checked against the schema:
/// each accessor gives `None` when the parameter was not given (or is not
/// in the schema with that type).
pub struct Values<'a> {
    schema: &'static [Param],
    values: &'a [TpValue],
}

impl<'a> Values<'a> {
    /// Values for `schema`, in its order (`values.len() == schema.len()`).
    pub(crate) fn new(schema: &'static [Param], values: &'a [TpValue]) -> Values<'a> {
        Values { schema, values }
    }

    fn find(&self, name: &str, kind: u32) -> Option<&'a TpValue> {
        let i = self.schema.iter().position(|p| p.0.kind == kind && p.name() == name)?;
        self.values.get(i).filter(|v| v.present != 0)
    }

    /// An integer parameter.
    pub fn integer(&self, name: &str) -> Option<i64> {
        self.find(name, abi::TP_PARAM_INTEGER).map(|v| v.integer)
    }

    /// A number parameter.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.find(name, abi::TP_PARAM_NUMBER).map(|v| v.number)
    }

    /// A boolean parameter.
    pub fn boolean(&self, name: &str) -> Option<bool> {
        self.find(name, abi::TP_PARAM_BOOLEAN).map(|v| v.boolean != 0)
    }

    /// A string parameter (borrowed until `params` returns: copy what you keep).
    pub fn string(&self, name: &str) -> Option<&'a str> {
        self.find(name, abi::TP_PARAM_STRING).and_then(|v| std::str::from_utf8(bytes_of(v)).ok())
    }

    /// A bytes parameter (borrowed until `params` returns: copy what you keep).
    pub fn bytes(&self, name: &str) -> Option<&'a [u8]> {
        self.find(name, abi::TP_PARAM_BYTES).map(bytes_of)
    }
}

fn bytes_of(v: &TpValue) -> &[u8] {
    if v.len == 0 || v.data.is_null() {
        return &[];
    }
    // SAFETY: tidepool hands `data`/`len` over as a live byte range that
    // stays valid until `make_params` returns, which outlives `Values`.
    unsafe { std::slice::from_raw_parts(v.data, v.len) }
}

/// Why a kernel failed.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Repr);

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    Failed { code: Cow<'static, str>, message: String },
    Cancelled,
    TimedOut,
    TooLarge,
}

impl Error {
    /// A failure with your own `code` (letters, digits and `_`, at most 64,
    /// like `ERR_NDJSON_BAD_RECORD`; anything else becomes
    /// `ERR_TIDEPOOL_KERNEL_FAILED`) and message: the task's promise rejects
    /// with an `Error` carrying both.
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Error {
        Error(Repr::Failed { code: code.into(), message: message.into() })
    }

    /// The task was cancelled (what [`Context::check`] returns).
    pub const CANCELLED: Error = Error(Repr::Cancelled);
    /// The task's deadline passed (what [`Context::check`] returns).
    pub const TIMED_OUT: Error = Error(Repr::TimedOut);
    /// The output would pass the task's limit (what [`Output::write`] returns).
    pub const TOO_LARGE: Error = Error(Repr::TooLarge);

    /// The code: yours, or tidepool's for the other cases.
    pub fn code(&self) -> &str {
        match &self.0 {
            Repr::Failed { code, .. } => code,
            Repr::Cancelled => "ABORT_ERR",
            Repr::TimedOut => "ERR_TIDEPOOL_TIMEOUT",
            Repr::TooLarge => "ERR_BUFFER_TOO_LARGE",
        }
    }

    /// Reports the error to tidepool and returns the status to return.
    pub(crate) fn report(&self, host: &TpHost) -> i32 {
        match &self.0 {
            Repr::Failed { code, message } => {
                // SAFETY: `host` is the live host of the current call; the
                // code and message are live byte ranges it copies.
                unsafe {
                    (host.fail)(
                        host.ctx,
                        code.as_ptr(),
                        code.len(),
                        message.as_ptr(),
                        message.len(),
                    )
                };
                abi::TP_ERROR
            }
            Repr::Cancelled => abi::TP_CANCELLED,
            Repr::TimedOut => abi::TP_TIMED_OUT,
            Repr::TooLarge => abi::TP_TOO_LARGE,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Failed { code, message } => write!(f, "{message} ({code})"),
            Repr::Cancelled => f.write_str("the task was cancelled"),
            Repr::TimedOut => f.write_str("the task ran past its deadline"),
            Repr::TooLarge => f.write_str("the output would pass the task's limit"),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({self})")
    }
}

impl std::error::Error for Error {}

/// Where a kernel writes its output: memory tidepool owns, bounded by the
/// task's `maxOutputBytes`.
pub struct Output<'a> {
    host: &'a TpHost,
}

impl<'a> Output<'a> {
    pub(crate) fn new(host: &'a TpHost) -> Output<'a> {
        Output { host }
    }

    /// Appends `bytes`; [`Error::TOO_LARGE`] (nothing written) past the limit.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        // SAFETY: live host of the current call; `bytes` is a live range.
        status(unsafe { (self.host.write)(self.host.ctx, bytes.as_ptr(), bytes.len()) })
    }

    /// Room after the output for at least `at_least` bytes (fewer only
    /// when the limit is nearer), initialized memory of unspecified
    /// contents: write into its front, then [`commit`](Output::commit) how
    /// much you used.
    pub fn unfilled(&mut self, at_least: usize) -> Result<&mut [u8], Error> {
        let mut room = 0usize;
        // SAFETY: live host of the current call; `room` is a local.
        let ptr = unsafe { (self.host.unfilled)(self.host.ctx, at_least, &mut room) };
        if ptr.is_null() {
            return Err(Error::TOO_LARGE);
        }
        // SAFETY: tidepool lends `room` initialized bytes at `ptr`, valid
        // until the next output call (write, unfilled, commit, reserve), each
        // of which needs `&mut self` again: the
        // slice's borrow of `self` ends before then.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, room) })
    }

    /// Marks the first `n` bytes of the last room as output. `n` past that
    /// room is a bug: the task fails.
    pub fn commit(&mut self, n: usize) -> Result<(), Error> {
        // SAFETY: live host of the current call.
        status(unsafe { (self.host.commit)(self.host.ctx, n) })
    }

    /// Reserves memory for `additional` more bytes (one allocation for an
    /// output whose size you know).
    pub fn reserve(&mut self, additional: usize) {
        // SAFETY: live host of the current call.
        unsafe { (self.host.reserve)(self.host.ctx, additional) }
    }
}

/// What a running kernel may ask: whether to stop.
pub struct Context<'a> {
    host: &'a TpHost,
}

impl<'a> Context<'a> {
    pub(crate) fn new(host: &'a TpHost) -> Context<'a> {
        Context { host }
    }

    /// `Err` once the task is cancelled or past its deadline: return it
    /// (`cx.check()?`). Cheap (two atomic loads and, with a deadline, a
    /// clock read): call it every few hundred microseconds of work.
    pub fn check(&self) -> Result<(), Error> {
        // SAFETY: live host of the current call.
        status(unsafe { (self.host.check)(self.host.ctx) })
    }
}

// SAFETY: `Context` only calls `check`, which the ABI lets any thread call
// while the kernel function runs (tidepool's is a read of atomics and the
// clock): a kernel may share its `Context` with threads of its own (scoped
// to the call, which the borrow enforces) to check for cancellation there.
unsafe impl Sync for Context<'_> {}

fn status(code: i32) -> Result<(), Error> {
    match code {
        abi::TP_OK => Ok(()),
        abi::TP_CANCELLED => Err(Error::CANCELLED),
        abi::TP_TIMED_OUT => Err(Error::TIMED_OUT),
        abi::TP_TOO_LARGE => Err(Error::TOO_LARGE),
        other => Err(Error::new(
            "ERR_TIDEPOOL_KERNEL_CONTRACT",
            format!("tidepool refused the call (status {other})"),
        )),
    }
}

/// Emits the library's entry point, `tidepool_kernels_v1`, describing the
/// given kernels (types implementing [`Kernel`]).
///
/// Refuses to compile with `panic = "abort"`: a panicking kernel would take
/// the whole Node process down instead of rejecting one task.
#[macro_export]
macro_rules! export_kernels {
    ($($kernel:ty),+ $(,)?) => {
        #[cfg(panic = "abort")]
        compile_error!("tidepool kernels need panic = \"unwind\": with panic = \"abort\" a panicking kernel would end the Node process instead of rejecting its task");

        /// The tidepool kernel library's entry point (ABI version 1).
        #[unsafe(no_mangle)]
        pub extern "C" fn tidepool_kernels_v1() -> *const $crate::abi::TpLibrary {
            static KERNELS: &[$crate::abi::TpKernel] = &[$($crate::descriptor::<$kernel>()),+];
            static LIBRARY: $crate::abi::TpLibrary = $crate::library(KERNELS);
            &LIBRARY
        }
    };
}

/// The name of a kernel as a `&str` (for messages).
pub fn kernel_name<K: Kernel>() -> &'static str {
    K::NAME.to_str().unwrap_or("")
}
