//! The C ABI between tidepool and a kernel library, version 1.
//!
//! These definitions are the ABI: `include/tidepool_kernel.h` declares the
//! same structs for C, C++ and Zig, and `tests/header.rs` compiles that
//! header against the sizes and offsets below, so the two cannot drift.
//!
//! # Rules
//!
//! * **One entry point per major version.** A library exports
//!   [`ENTRY_SYMBOL`] (`tidepool_kernels_v1`), a function that takes nothing
//!   and returns a pointer to a [`TpLibrary`] living as long as the library.
//!   A future incompatible ABI gets a new symbol (`_v2`); a tidepool that
//!   knows several can load libraries of each.
//! * **Structs only grow at the end.** Each struct a library hands over
//!   says how big it is ([`TpLibrary::size`], [`TpLibrary::kernel_size`]),
//!   and tidepool reads kernels with the library's stride, so a library
//!   built against a later minor version (more fields at the end) loads in
//!   an older tidepool, and an older library in a newer tidepool (which
//!   treats missing fields as absent). [`TpHost::size`] is the same rule in
//!   the other direction.
//! * **Nothing is freed across the boundary.** Each side has its own
//!   allocator. A library frees its own parameters and states
//!   (`drop_params`, `drop_state`); output goes into memory tidepool hands
//!   out ([`TpHost::write`], [`TpHost::unfilled`]), which is where the
//!   task's `maxOutputBytes` is enforced; error texts are copied by tidepool
//!   during [`TpHost::fail`].
//! * **No unwinding across the boundary.** Every function returns a status
//!   ([`TP_OK`], ...). The Rust SDK catches panics in every entry and reports
//!   them as [`TP_PANIC`].
//! * **Threads.** `make_params` runs on the JavaScript thread, the others on
//!   any worker thread, concurrently for different tasks. A parameter
//!   object is shared (read-only) by every task made with it; a state is used
//!   by one thread at a time, not always the same one. No function may call
//!   N-API or keep a pointer it was given (input, room, values) after it
//!   returns. While a kernel function runs, its host functions may be
//!   called from any thread (tidepool serializes them); all must be done
//!   before it returns.
//! * **Fixed-size value structs.** [`TpParamSpec`] and [`TpValue`] carry no
//!   size: they are arrays whose stride is version 1's, so they cannot grow
//!   without a new major version (a new parameter kind is a new
//!   `TP_PARAM_*` value instead, which an older tidepool refuses).

use std::ffi::{c_char, c_void};

/// The ABI's major version: in [`ENTRY_SYMBOL`] and [`TpLibrary::abi_version`].
pub const ABI_VERSION: u32 = 1;

/// The symbol a library exports (a `const tp_library *(*)(void)`).
pub const ENTRY_SYMBOL: &str = "tidepool_kernels_v1";

/// The entry point's type.
pub type EntryPoint = unsafe extern "C" fn() -> *const TpLibrary;

/// Success.
pub const TP_OK: i32 = 0;
/// Failure, with a code and a message given through [`TpHost::fail`].
pub const TP_ERROR: i32 = 1;
/// The task was cancelled ([`TpHost::check`] said so).
pub const TP_CANCELLED: i32 = 2;
/// The task's deadline passed ([`TpHost::check`] said so).
pub const TP_TIMED_OUT: i32 = 3;
/// The output would pass the task's limit ([`TpHost::write`] refused,
/// [`TpHost::unfilled`] returned NULL, or lent less than asked to a kernel
/// that writes whole units).
pub const TP_TOO_LARGE: i32 = 4;
/// The kernel panicked (the message through [`TpHost::fail`]).
pub const TP_PANIC: i32 = 5;

/// A kernel whose output may be far larger than its input (a decoder): it
/// gets the pool's smaller default output limit.
pub const TP_KERNEL_EXPANDS: u32 = 1;

/// An integer parameter: a JavaScript number without a fraction, or a
/// bigint, within `[int_min, int_max]`.
pub const TP_PARAM_INTEGER: u32 = 1;
/// A number parameter within `[num_min, num_max]` (never NaN).
pub const TP_PARAM_NUMBER: u32 = 2;
/// A boolean parameter.
pub const TP_PARAM_BOOLEAN: u32 = 3;
/// A string parameter, handed over as UTF-8 bytes (not NUL-terminated).
pub const TP_PARAM_STRING: u32 = 4;
/// A binary parameter (Buffer, TypedArray, DataView, ArrayBuffer) or a
/// string, as its UTF-8 bytes.
pub const TP_PARAM_BYTES: u32 = 5;

/// What the entry point returns.
#[repr(C)]
#[derive(Debug)]
pub struct TpLibrary {
    /// [`ABI_VERSION`] when the library was built.
    pub abi_version: u32,
    /// `size_of::<TpLibrary>()` as the library knows it.
    pub size: u32,
    /// How many kernels `kernels` points to.
    pub kernel_count: u32,
    /// `size_of::<TpKernel>()` as the library knows it: the stride of `kernels`.
    pub kernel_size: u32,
    /// The kernels.
    pub kernels: *const TpKernel,
}

/// Creates a kernel's parameters from the values given for a task (in the
/// order of its schema; absent ones have `present == 0`). On success stores
/// the parameters in `*out` (any pointer, NULL included) and returns
/// [`TP_OK`]; on refusal calls `host->fail` and returns [`TP_ERROR`].
pub type MakeParamsFn = unsafe extern "C" fn(
    values: *const TpValue,
    count: u32,
    out: *mut *mut c_void,
    host: *const TpHost,
) -> i32;
/// Frees parameters made by `make_params`.
pub type DropFn = unsafe extern "C" fn(ptr: *mut c_void);
/// Creates a task's (or stream's) state from its parameters; `len_hint` is
/// the input's total length, or `u64::MAX` when unknown.
pub type StartFn = unsafe extern "C" fn(
    params: *const c_void,
    len_hint: u64,
    out: *mut *mut c_void,
    host: *const TpHost,
) -> i32;
/// Consumes the next chunk of input (`data` may be NULL when `len` is 0).
pub type UpdateFn = unsafe extern "C" fn(
    state: *mut c_void,
    data: *const u8,
    len: usize,
    host: *const TpHost,
) -> i32;
/// Ends the input. Called at most once, and never after a failed `update`.
pub type FinishFn = unsafe extern "C" fn(state: *mut c_void, host: *const TpHost) -> i32;

/// One kernel.
#[repr(C)]
#[derive(Debug)]
pub struct TpKernel {
    /// The name users pass as `kernel`: `scope/name`, NUL-terminated, each
    /// part lowercase letters, digits, `-`, `_` or `.`.
    pub name: *const c_char,
    /// [`TP_KERNEL_EXPANDS`] or 0.
    pub flags: u32,
    /// How many parameters `params` describes (at most 64).
    pub param_count: u32,
    /// The parameters' schema; tidepool checks names, types, ranges and
    /// required ones against it before `make_params` is called.
    pub params: *const TpParamSpec,
    /// NULL when the kernel takes no parameters (`start` then gets NULL).
    pub make_params: Option<MakeParamsFn>,
    /// NULL when parameters need no freeing.
    pub drop_params: Option<DropFn>,
    pub start: Option<StartFn>,
    pub update: Option<UpdateFn>,
    pub finish: Option<FinishFn>,
    /// Frees a state made by `start`; called once for every state, whatever
    /// happened to it.
    pub drop_state: Option<DropFn>,
}

/// One parameter in a kernel's schema.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TpParamSpec {
    /// The name in `params`, NUL-terminated: letters, digits, `_`, starting
    /// with a letter.
    pub name: *const c_char,
    /// `TP_PARAM_*`.
    pub kind: u32,
    /// 1 when a task must give it.
    pub required: u32,
    /// The range of a [`TP_PARAM_INTEGER`].
    pub int_min: i64,
    pub int_max: i64,
    /// The range of a [`TP_PARAM_NUMBER`].
    pub num_min: f64,
    pub num_max: f64,
}

/// One parameter value given to `make_params`, as its schema entry says.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TpValue {
    /// 0 when the task did not give this parameter.
    pub present: u32,
    /// A [`TP_PARAM_BOOLEAN`]: 0 or 1.
    pub boolean: u32,
    /// A [`TP_PARAM_INTEGER`].
    pub integer: i64,
    /// A [`TP_PARAM_NUMBER`].
    pub number: f64,
    /// A [`TP_PARAM_STRING`] (valid UTF-8) or [`TP_PARAM_BYTES`]: valid
    /// until `make_params` returns.
    pub data: *const u8,
    pub len: usize,
}

/// What tidepool lends a kernel function while it runs: where the output
/// goes, whether to stop, how to say why it failed. `ctx` is passed back to
/// every function; the pointers are valid until the kernel function returns.
/// A host function called with the `ctx` of a call that has returned does
/// nothing (`TP_ERROR`, NULL, `TP_CANCELLED`), and the kernel the host was
/// lent to fails its next call with `ERR_TIDEPOOL_KERNEL_CONTRACT`.
#[repr(C)]
#[derive(Debug)]
pub struct TpHost {
    /// `size_of::<TpHost>()` as tidepool knows it.
    pub size: u32,
    pub reserved: u32,
    /// Opaque: a token naming the call (not an address), to pass back.
    pub ctx: *mut c_void,
    /// Says why the call fails: `code` (like `ERR_MYLIB_BAD_RECORD`: letters,
    /// digits and `_`, at most 64) and `message` (UTF-8, cut at 896 bytes),
    /// both copied. The last call wins. Then return [`TP_ERROR`].
    pub fail: unsafe extern "C" fn(
        ctx: *mut c_void,
        code: *const u8,
        code_len: usize,
        message: *const u8,
        message_len: usize,
    ),
    /// Appends `len` bytes to the output: [`TP_OK`], or [`TP_TOO_LARGE`]
    /// (nothing written; return it). [`TP_ERROR`] outside `update`/`finish`.
    pub write: unsafe extern "C" fn(ctx: *mut c_void, data: *const u8, len: usize) -> i32,
    /// Room after the output for at least `at_least` bytes (0 counts as 1;
    /// fewer only when the limit is nearer): its length in `*room`;
    /// initialized memory of unspecified contents, allocated when lent (ask
    /// for what you will use). Write into its front, then `commit`. NULL
    /// when no byte is left under the limit (return [`TP_TOO_LARGE`]).
    /// Valid until the next `write`, `unfilled`, `commit` or `reserve`, from
    /// any thread.
    pub unfilled:
        unsafe extern "C" fn(ctx: *mut c_void, at_least: usize, room: *mut usize) -> *mut u8,
    /// Marks the first `n` bytes of the last room as output: [`TP_OK`], or
    /// [`TP_ERROR`] when `n` is more than that room (the task then fails).
    pub commit: unsafe extern "C" fn(ctx: *mut c_void, n: usize) -> i32,
    /// Reserves memory for `additional` more bytes of output (a hint).
    pub reserve: unsafe extern "C" fn(ctx: *mut c_void, additional: usize),
    /// [`TP_OK`] to go on; [`TP_CANCELLED`] or [`TP_TIMED_OUT`] to stop
    /// (return it). Call it between pieces of long work: a kernel that never
    /// does cannot be stopped.
    pub check: unsafe extern "C" fn(ctx: *mut c_void) -> i32,
}

// SAFETY: the descriptors are immutable after they are made and point only
// to immutable data that lives as long as the library (names, schemas,
// functions); sharing them between threads only ever reads them.
unsafe impl Sync for TpLibrary {}
// SAFETY: as for `TpLibrary`.
unsafe impl Sync for TpKernel {}
// SAFETY: as for `TpLibrary`.
unsafe impl Sync for TpParamSpec {}
// SAFETY: as for `TpLibrary`.
unsafe impl Send for TpParamSpec {}

/// The `napi_type_tag` (lower, upper) of an External whose data is a
/// `*const TpLibrary`: what a kernel library inside a Node addon hands
/// JavaScript for `Pool.loadKernels(handle)` (no dynamic loading; the
/// addon is already loaded). The tag is what tells tidepool the External
/// is one; napi-rs's own `External<T>` tags with a Rust `TypeId`, which
/// differs between separately built binaries, so it cannot be used.
pub const NAPI_TYPE_TAG: (u64, u64) = (0x7469_6465_706f_6f6c, 0x6b65_726e_656c_7631);
