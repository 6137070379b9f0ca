//! tidepool's N-API binding: a thin layer between JavaScript (lib/) and
//! `tidepool-core`. Its modules, each with one job:
//!
//! The contract with lib/
//! * [`wire`]: what lib/ must agree with byte for byte: the raw functions'
//!   argument tables, the error codes, slots, the batch layout;
//! * [`refusal`]: the errors a raw function throws (below the wire: what
//!   reads a handle for it refuses with them too);
//! * this file: the free functions (`kernelTable`, `streamControls`, `batchLayout`,
//!   `taskErrorCodes`, `loadKernel*`, `paramsMaker`, ...).
//!
//! The `NativePool` class
//! * [`native_pool`]: its `#[napi]` methods (stats, close, destroy, cancel,
//!   the stream and batch calls, the bound submit functions);
//! * [`pool_objects`]: the plain objects it takes and returns (options,
//!   stats, metrics);
//! * [`lifecycle`]: who owns its state and how its threads are stopped
//!   (threadsafe function, env teardown, GC);
//! * [`inner`]: its JS-thread state and the invariants that tie it together,
//!   over the status-checked owners of raw N-API handles in [`handles`].
//!
//! The raw functions, one file each, reading their arguments through [`wire`]
//! * [`submit`]: one task (`post()`, `postFile()`);
//! * [`submit_many`]: a chunk of a batch (`postMany()`, `map()`);
//! * [`submit_records`]: a chunk of `postRecords()`' records of one binary;
//! * [`submit_step`]: one step of a stream's chunk;
//! * [`params`]: `makeParams`, a kernel's parameters checked into a handle.
//!
//! What they read and share
//! * [`binary`]: the JS values of a post as zero-copy [`Input`]s;
//! * [`cancel_flag`]: a cancel flag, shared by a batch's tasks or a signal's posts;
//! * [`streams`]: a stream's handle, its report, a hash's inline run;
//! * [`run_here`]: a one-shot run on the calling thread (the zlib module's
//!   `*Sync` functions this Node lacks).
//!
//! Results back to JavaScript
//! * [`delivery`]: the threadsafe function's callback, which settles a whole
//!   batch of finished tasks with one call into JavaScript;
//! * [`large_result`]: a large result lent to JavaScript as a Buffer;
//! * [`reclaim`]: the process-wide thread that frees large results.
//!
//! Elsewhere
//! * [`loader`]: registers the kernels of a library loaded at run time;
//! * [`napi_util`]: small helpers over raw N-API values, used by all (a leaf);
//! * [`ALLOCATOR`]: the addon's allocator, the system's, which zeroes what a
//!   kernel frees inside `tidepool_core::wipe::wiping`.
//!
//! [`Input`]: tidepool_core::Input

mod binary;
mod cancel_flag;
mod delivery;
mod handles;
mod inner;
mod large_result;
mod lifecycle;
mod loader;
mod napi_util;
mod native_pool;
mod params;
mod pool_objects;
mod reclaim;
mod refusal;
mod run_here;
mod streams;
mod submit;
mod submit_many;
mod submit_records;
mod submit_step;
mod wire;

use napi_derive::napi;

/// The system allocator, wiping blocks a kernel frees inside
/// `tidepool_core::wipe::wiping` (scrypt's V): secrets a dependency frees
/// unwiped do not outlive their task.
#[global_allocator]
static ALLOCATOR: tidepool_core::wipe::WipeOnFree<std::alloc::System> =
    tidepool_core::wipe::WipeOnFree(std::alloc::System);

/// The kernel table: a line per registered kernel, in id order (the id is
/// the line's index), its facts tab-separated (`Facts::line`: name, kind,
/// family, least input bytes, in blocks, flush kinds, default flush). A
/// string, which no accessor a caller put on `Array.prototype` can
/// intercept (a kernel name never holds a tab or a newline).
#[napi]
pub fn kernel_table() -> String {
    tidepool_core::kernels::all().map(|k| k.facts().line(k.name())).collect::<Vec<_>>().join("\n")
}

/// The flush kinds a codec stream's controls travel as, above every
/// family's own (see `stream::RESET`, `kernels::ZLIB_PARAMS`).
#[napi(object)]
pub struct StreamControls {
    /// The deflate family's `params(level, strategy)`: this + (level + 1) * 8 + strategy.
    pub params: u32,
    /// Any codec's `reset()`.
    pub reset: u32,
    /// The deflate family's empty write.
    pub empty_write: u32,
}

/// The numbers of a codec stream's controls, so that lib/streams/ never repeats them.
#[napi]
pub fn stream_controls() -> StreamControls {
    StreamControls {
        params: tidepool_core::kernels::ZLIB_PARAMS,
        reset: tidepool_core::stream::RESET,
        empty_write: tidepool_core::kernels::ZLIB_EMPTY_WRITE,
    }
}

/// Opens the kernel library at `path` (absolute) and registers its kernels:
/// `"<first id> <count>"`, or `"!<CODE> <message>"` (see loader.rs).
#[napi]
pub fn load_kernel_library(path: String) -> String {
    loader::load_library(path)
}

/// Registers the kernels of the library whose descriptor a kernel library's
/// addon handed out as a tagged External, answering as
/// `loadKernelLibrary` does (see loader.rs); `null` when `handle` is not
/// such an External.
#[napi]
pub fn load_kernel_handle(
    env: &napi::Env,
    handle: napi::bindgen_prelude::Unknown<'_>,
) -> Option<String> {
    use napi::JsValue;
    // SAFETY: the live env and an argument of this call.
    unsafe { loader::load_handle(env.raw(), handle.raw()) }
}

/// The `makeParams(kernel, names, values, once)` function (see params.rs):
/// a plain N-API function, made once by lib/addon/binding.js.
#[napi]
pub fn params_maker(env: &napi::Env) -> napi::Result<napi::bindgen_prelude::Unknown<'_>> {
    use napi::bindgen_prelude::FromNapiValue;
    let raw_env = env.raw();
    let mut function = std::ptr::null_mut();
    // SAFETY: live env; out-pointer to a local; the callback needs no data.
    unsafe {
        napi::check_status!(napi::sys::napi_create_function(
            raw_env,
            c"makeParams".as_ptr(),
            10,
            Some(params::make_params_callback),
            std::ptr::null_mut(),
            &mut function
        ))?;
        napi::bindgen_prelude::Unknown::from_napi_value(raw_env, function)
    }
}

/// For tests: V8's count of the native memory reported to it
/// (`napi_adjust_external_memory`, Node's own reports included), which
/// `process.memoryUsage()` does not show. A stream's handle adds its
/// codec's state to it while it lives (handles.rs).
#[napi]
pub fn external_memory(env: &napi::Env) -> f64 {
    // SAFETY: the live env of this call, on its JS thread.
    unsafe { handles::report_external(env.raw(), 0, true) as f64 }
}

/// Runs a one-shot task on this thread (see run_here.rs): its output as a
/// Buffer, or its error as the string `"code detail"`.
#[napi]
pub fn run_here<'env>(
    env: &'env napi::Env,
    kernel: u32,
    params: napi::bindgen_prelude::Unknown<'_>,
    input: napi::bindgen_prelude::Unknown<'_>,
    max_output_bytes: f64,
) -> napi::Result<napi::bindgen_prelude::Unknown<'env>> {
    use napi::bindgen_prelude::FromNapiValue;
    use napi::JsValue;
    // SAFETY: the live env and values of this call.
    let value = unsafe {
        run_here::run_here(env.raw(), kernel, params.raw(), input.raw(), max_output_bytes)
    }
    .map_err(crate::refusal::Refusal::into_napi)?;
    // SAFETY: a value just made in this live env.
    unsafe { napi::bindgen_prelude::Unknown::from_napi_value(env.raw(), value) }
}

/// CPUs this process may use (cgroup- and affinity-aware).
/// Joins this process to the machine's budget (once per process; later
/// calls give the first answer): null when it can be had, else why not.
#[napi]
pub fn open_machine_budget() -> Option<String> {
    tidepool_core::budget::MachineBudget::of_process().err()
}

#[napi]
pub fn available_parallelism() -> u32 {
    tidepool_core::cpus::available_parallelism() as u32
}

/// Batch geometry shared with lib/engine/: at most this many completions are
/// handed to JavaScript per call, each with at most this many result bytes.
#[napi(object)]
pub struct BatchLayout {
    /// Completions per call (entries in the meta array / 2).
    pub capacity: u32,
    /// Bytes of the result slab.
    pub slab_bytes: u32,
    /// The code of an entry whose result did not fit the slab: it is the
    /// next Buffer of the callback's array of large results.
    pub large_code: u32,
}

/// The sizes lib/engine/ must allocate the shared meta array and slab with.
#[napi]
pub fn batch_layout() -> BatchLayout {
    BatchLayout {
        capacity: wire::BATCH_CAPACITY as u32,
        slab_bytes: wire::SLAB_BYTES as u32,
        large_code: u32::from(wire::LARGE_CODE),
    }
}

/// The default `niceIncrement` of worker threads (see tidepool_core::priority).
#[napi]
pub fn default_nice_increment() -> u32 {
    u32::from(tidepool_core::pool::DEFAULT_NICE_INCREMENT)
}

/// The numbers a failed task's completion carries (wire/task_error.rs), by
/// name, so that lib/engine/ never repeats them.
#[napi(object)]
pub struct TaskErrorCodes {
    pub panic: u32,
    pub cancelled: u32,
    pub invalid_input: u32,
    pub expired: u32,
    pub timed_out: u32,
    pub too_large: u32,
    /// The input is corrupt or truncated for the kernel's format.
    pub format: u32,
    /// A loaded kernel failed with its own code and message.
    pub failed: u32,
    /// A file could not be read (postFile): "syscall errno name".
    pub io: u32,
    /// A packed task's result had another length than the batch's others:
    /// "expected got".
    pub unequal_length: u32,
    /// Not a task error: the delivery refused a result longer than any
    /// Buffer Node can make; the limit in decimal.
    pub buffer_too_large: u32,
}

/// See [`TaskErrorCodes`].
#[napi]
pub fn task_error_codes() -> TaskErrorCodes {
    use wire::task_code as code;
    TaskErrorCodes {
        panic: code::PANIC.into(),
        cancelled: code::CANCELLED.into(),
        invalid_input: code::INVALID_INPUT.into(),
        expired: code::EXPIRED.into(),
        timed_out: code::TIMED_OUT.into(),
        too_large: code::TOO_LARGE.into(),
        format: code::FORMAT.into(),
        failed: code::FAILED.into(),
        io: code::IO.into(),
        unequal_length: code::UNEQUAL_LENGTH.into(),
        buffer_too_large: u32::from(wire::BUFFER_TOO_LARGE_CODE),
    }
}

/// A length from JavaScript: an integer from 0 to 2^53 - 1.
fn length_arg(name: &str, value: f64) -> napi::Result<usize> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= 9_007_199_254_740_991.0
    {
        Ok(value.min(isize::MAX as f64) as usize)
    } else {
        Err(napi::Error::new(
            napi::Status::InvalidArg,
            format!("{name} must be an integer from 0 to 2^53 - 1"),
        ))
    }
}

/// Tells the delivery the longest Buffer Node can make: lib/addon/binding.js
/// passes `buffer.constants.MAX_LENGTH` when it loads the addon. A result
/// past it is refused with Node's `ERR_BUFFER_TOO_LARGE` (delivery.rs).
/// For the process, every pool and thread; a test passes less, to see a
/// result of a megabyte refused as one past 4 GiB would be.
#[napi]
pub fn set_buffer_max_length(max: f64) -> napi::Result<()> {
    large_result::set_buffer_max_length(length_arg("max", max)?);
    Ok(())
}

/// For tests: lends `length` zero bytes (never touched, so no memory is
/// used) to `napi_create_external_buffer` as the delivery lends a result,
/// without its length check, and says what Node did. With a length past
/// `buffer.constants.MAX_LENGTH`, Node refuses and calls the finalizer
/// during the call: what the delivery must survive. `null` when the bytes
/// cannot be allocated.
#[napi]
pub fn probe_buffer_refusal(
    env: &napi::Env,
    length: f64,
) -> napi::Result<Option<large_result::BufferRefusal>> {
    let length = length_arg("length", length)?;
    // SAFETY: the live env of this call, on its JS thread, inside the
    // handle scope Node opened for it.
    Ok(unsafe { large_result::probe_refusal(env.raw(), length) })
}
