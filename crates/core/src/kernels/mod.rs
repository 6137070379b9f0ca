//! Kernels: the computations a task can run, registered by name in
//! [`BUILTIN`] (and, loaded from libraries at run time, `foreign.rs`). The model (`model.rs`): a kernel is a byte transform with
//! state, made from checked parameters (`params.rs`), fed the input in
//! chunks by its [`RunContext`] (`context.rs`), writing output of any
//! length into a [`Sink`] (`sink.rs`). The kernels: the hashes (one
//! adapter, `digest.rs`; their table, `hashes.rs`, keyed ones included);
//! the codecs, which share one loop (`codec.rs`): the deflate family
//! (`zlib.rs`), `brotli.rs`, `zstd.rs`, `lz4.rs`; and `spin`, `sleep`
//! (`timed.rs`), `echo` and `panic` for tests and benchmarks.

mod brotli;
pub(crate) mod codec;
mod context;
mod digest;
mod echo;
pub mod foreign;
mod hashes;
mod lent;
mod lz4;
mod model;
mod panic;
pub mod params;
mod sink;
mod timed;
mod zlib;
mod zstd;

use std::sync::{Mutex, OnceLock};

pub use codec::PAIRS as CODEC_PAIRS;
pub use context::{RunContext, CHUNK};
pub use model::{AnyKernel, Fed, Kernel, Transform};
pub use params::{ParamError, Params, RawParams, RawValue};
pub use sink::{Output, Sink, INLINE};

/// Why a kernel did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// The cancellation flag was raised while the kernel ran.
    Cancelled,
    /// The input cannot be processed by this kernel (e.g. too short).
    InvalidInput(String),
    /// The task's run-time deadline passed while the kernel ran.
    TimedOut,
    /// The output would have been longer than the sink's limit.
    TooLarge { limit: usize },
    /// The input is not valid in the kernel's format (corrupt, truncated):
    /// `code` names why, as the format's reference does (zlib's
    /// `Z_DATA_ERROR`, ...).
    Format { code: &'static str, message: String },
    /// A loaded kernel failed with its own `code` (a checked identifier,
    /// like `ERR_NDJSON_BAD_RECORD`) and message.
    Failed { code: String, message: String },
    /// A loaded kernel panicked (its library caught the panic at the ABI
    /// boundary and reported it); the panic's message.
    Panic(String),
    /// A file could not be read (`postFile`): the system call that failed,
    /// the OS's error number (0: none), and its POSIX name where the kind
    /// is known (`ENOENT`...; `EIO` otherwise).
    Io { syscall: &'static str, errno: i32, name: &'static str },
}

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelError::Cancelled => f.write_str("the kernel was cancelled"),
            KernelError::InvalidInput(m) => write!(f, "invalid input: {m}"),
            KernelError::TimedOut => f.write_str("the kernel ran past its deadline"),
            KernelError::TooLarge { limit } => write!(f, "the output would be larger than {limit} bytes"),
            KernelError::Format { code, message } => write!(f, "{message} ({code})"),
            KernelError::Failed { code, message } => write!(f, "{message} ({code})"),
            KernelError::Panic(message) => write!(f, "the kernel panicked: {message}"),
            KernelError::Io { syscall, errno, name } => write!(f, "{name} (os error {errno}), {syscall}"),
        }
    }
}

impl std::error::Error for KernelError {}

/// A kernel's number: what crosses the JS boundary per task. The built-in
/// kernels are `0..BUILTIN.len()`, in [`BUILTIN`]'s order (stable within a
/// build only); loaded kernels follow, in the order they were registered.
pub type KernelId = u32;

/// The built-in kernels, in id order.
pub static BUILTIN: &[&dyn AnyKernel] = &[
    &hashes::SHA256,
    &hashes::SHA384,
    &hashes::SHA512,
    &hashes::SHA1,
    &hashes::MD5,
    &hashes::BLAKE3,
    &hashes::XXH3,
    &hashes::XXH64,
    &hashes::CRC32,
    &hashes::CRC32C,
    &hashes::HMAC,
    &timed::SPIN,
    &timed::SLEEP,
    &panic::Panic,
    &echo::Echo,
    &zlib::GZIP,
    &zlib::GUNZIP,
    &zlib::DEFLATE,
    &zlib::INFLATE,
    &zlib::DEFLATE_RAW,
    &zlib::INFLATE_RAW,
    &brotli::BROTLI_COMPRESS,
    &brotli::BROTLI_DECOMPRESS,
    &zstd::ZSTD_COMPRESS,
    &zstd::ZSTD_DECOMPRESS,
    &lz4::LZ4_COMPRESS,
    &lz4::LZ4_DECOMPRESS,
];

/// The number node:zlib puts in `errno` beside a [`KernelError::Format`]
/// code (zlib's return codes, brotli's error numbers), if it has one.
pub fn format_errno(code: &str) -> Option<i32> {
    zlib::errno_of(code).or_else(|| brotli::errno_of(code))
}

/// Most kernels loaded from libraries in one process.
pub const MAX_LOADED: usize = 4096;

/// The loaded kernels, after the built-ins: each slot is set once, under
/// [`LIBRARIES`]' lock, and then only read, without a lock (a worker looks
/// its task's kernel up here). Loaded kernels are leaked: their libraries
/// are never unloaded.
static LOADED: [OnceLock<&'static foreign::Foreign>; MAX_LOADED] = [const { OnceLock::new() }; MAX_LOADED];

/// The registered libraries (their descriptors' addresses) and their
/// kernels' ids; its lock serializes registration.
static LIBRARIES: Mutex<Vec<(usize, Vec<KernelId>)>> = Mutex::new(Vec::new());

/// Every registered kernel, in id order.
pub fn all() -> impl Iterator<Item = &'static dyn AnyKernel> {
    BUILTIN.iter().copied().chain(LOADED.iter().map_while(|k| k.get().map(|&f| f as &dyn AnyKernel)))
}

/// Looks a kernel up by name.
pub fn find(name: &str) -> Option<KernelId> {
    all().position(|k| k.name() == name).map(|i| i as KernelId)
}

/// The kernel with id `id`, if any.
pub fn get(id: KernelId) -> Option<&'static dyn AnyKernel> {
    let id = id as usize;
    match BUILTIN.get(id) {
        Some(&k) => Some(k),
        None => LOADED.get(id - BUILTIN.len())?.get().map(|&f| f as &dyn AnyKernel),
    }
}

/// Registers the kernels of the library whose entry point returned
/// `library`, all or none, and returns their ids (in the library's order).
/// Registering the same library again returns the same ids.
///
/// # Safety
/// `library` must be NULL or what a library's `tidepool_kernels_v1`
/// returned, and the library must stay loaded for the rest of the process.
pub unsafe fn register(library: *const tidepool_kernel_sdk::abi::TpLibrary) -> Result<Vec<KernelId>, foreign::LoadError> {
    let mut libraries = LIBRARIES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, ids)) = libraries.iter().find(|(at, _)| *at == library as usize) {
        return Ok(ids.clone());
    }
    // SAFETY: the caller's guarantee.
    let kernels = unsafe { foreign::check_library(library) }?;
    if let Some(taken) = kernels.iter().find(|k| find(k.name()).is_some()) {
        return Err(foreign::LoadError::Exists(taken.name().to_owned()));
    }
    let first = LOADED.iter().position(|slot| slot.get().is_none()).unwrap_or(MAX_LOADED);
    if first + kernels.len() > MAX_LOADED {
        return Err(foreign::LoadError::Full);
    }
    let mut ids = Vec::with_capacity(kernels.len());
    for (i, kernel) in kernels.into_iter().enumerate() {
        // Leaked before it is sealed: parameters remember the address of
        // the kernel that made them.
        let kernel: &'static mut foreign::Foreign = Box::leak(Box::new(kernel));
        kernel.seal();
        let slot = first + i;
        if LOADED[slot].set(kernel).is_err() {
            unreachable!("loaded slots are only set under the lock");
        }
        ids.push((BUILTIN.len() + slot) as KernelId);
    }
    libraries.push((library as usize, ids.clone()));
    Ok(ids)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::input::{Input, RawSlice};
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    /// Kernels whose output is a function of the input bytes alone, for any
    /// input, with their default parameters (not the decoders, which refuse
    /// most inputs, nor hmac, which needs a key).
    fn pure() -> impl Iterator<Item = &'static &'static dyn AnyKernel> {
        BUILTIN.iter().filter(|k| !matches!(k.name(), "spin" | "sleep" | "panic") && !k.expands() && k.params(&RawParams::none()).is_ok())
    }

    /// Runs kernel `name` over `data` (optionally split in parts).
    pub(crate) fn run(name: &str, parts: &[&'static [u8]]) -> Result<Output, KernelError> {
        let flag = AtomicBool::new(false);
        let input = Input::Many(parts.iter().map(|p| RawSlice::from_static(p)).collect());
        get(find(name).expect("kernel registered")).unwrap().compute(&input, &RunContext::new(&flag))
    }

    /// An output in a form that does not depend on how the input was fed: a
    /// compressor's bytes may differ with the chunking (zlib's may), so its
    /// output is compared decompressed.
    fn canonical(name: &str, out: Output) -> Vec<u8> {
        let Some(&(_, decoder)) = CODEC_PAIRS.iter().find(|(enc, _)| *enc == name) else {
            return out.as_bytes().to_vec();
        };
        let flag = AtomicBool::new(false);
        let decoded = get(find(decoder).unwrap()).unwrap().compute(&Input::Owned(out.as_bytes().to_vec()), &RunContext::new(&flag));
        decoded.expect("a compressor's output decodes").as_bytes().to_vec()
    }

    pub(crate) fn hex(name: &str, data: &'static [u8]) -> String {
        format!("{:?}", run(name, &[data]).unwrap())
    }

    #[test]
    fn names_are_unique_and_findable() {
        for (i, k) in BUILTIN.iter().enumerate() {
            assert_eq!(find(k.name()), Some(i as KernelId));
        }
        assert_eq!(find("nope"), None);
    }

    #[test]
    fn split_input_hashes_like_contiguous() {
        for k in pure() {
            let whole = run(k.name(), &[b"hello, tidepool"]).unwrap();
            let split = run(k.name(), &[b"hel", b"", b"lo, tide", b"pool"]).unwrap();
            assert_eq!(whole, split, "{}", k.name());
        }
    }

    #[test]
    fn chunking_does_not_change_digest() {
        let big: Vec<u8> = (0..CHUNK * 2 + 17).map(|i| (i % 251) as u8).collect();
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        for k in pure() {
            let a = k.compute(&Input::Owned(big.clone()), &ctx).unwrap();
            let mut joined = Vec::new();
            ctx.feed(&Input::Owned(big.clone()), |p| {
                joined.extend_from_slice(p);
                Ok(())
            })
            .unwrap();
            assert_eq!(joined, big);
            let b = k.compute(&Input::Owned(joined), &ctx).unwrap();
            assert_eq!(a, b, "{}", k.name());
        }
    }

    #[test]
    fn task_flag_and_deadline_stop_a_kernel() {
        let pool_flag = AtomicBool::new(false);
        let task_flag = AtomicBool::new(true);
        let input = Input::Owned(vec![0; CHUNK * 3]);
        let sha = get(find("sha256").unwrap()).unwrap();
        let ctx = RunContext::for_task(&pool_flag, Some(&task_flag), None);
        assert_eq!(sha.compute(&input, &ctx), Err(KernelError::Cancelled));
        let past = Instant::now() - std::time::Duration::from_millis(1);
        let ctx = RunContext::for_task(&pool_flag, None, Some(past));
        assert_eq!(sha.compute(&input, &ctx), Err(KernelError::TimedOut));
        let ctx = RunContext::for_task(&pool_flag, None, Some(Instant::now() + std::time::Duration::from_secs(60)));
        assert!(sha.compute(&input, &ctx).is_ok());
    }

    #[test]
    fn timed_kernels_check_the_deadline_even_when_their_time_is_already_up() {
        // A thread descheduled for longer than the whole spin or sleep (as a
        // low-priority worker on a busy machine can be) must still time out.
        let pool_flag = AtomicBool::new(false);
        let past = Instant::now() - std::time::Duration::from_millis(1);
        let ctx = RunContext::for_task(&pool_flag, None, Some(past));
        let zero = Input::Owned(vec![0; 4]);
        for name in ["spin", "sleep"] {
            assert_eq!(get(find(name).unwrap()).unwrap().compute(&zero, &ctx), Err(KernelError::TimedOut), "{name}");
        }
    }

    #[test]
    fn cancel_flag_stops_a_kernel() {
        let flag = AtomicBool::new(true);
        let ctx = RunContext::new(&flag);
        let input = Input::Owned(vec![0; CHUNK * 3]);
        assert_eq!(get(find("sha256").unwrap()).unwrap().compute(&input, &ctx), Err(KernelError::Cancelled));
    }

    #[test]
    fn a_stream_fed_across_calls_equals_the_one_shot_run() {
        // The same trait serves one-shot tasks and streams: a boxed state fed
        // chunk by chunk (as a stream's tasks will) ends in the same output.
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        for k in pure() {
            let whole = k.compute(&Input::Owned(data.clone()), &ctx).unwrap();
            let mut state = k.start(&Params::NONE, None).unwrap();
            let mut out = Sink::new(usize::MAX);
            for piece in data.chunks(9_999) {
                state.update(piece, &mut out, &ctx).unwrap();
            }
            state.finish(&mut out, &ctx).unwrap();
            assert_eq!(canonical(k.name(), out.into_output()), canonical(k.name(), whole), "{}", k.name());
        }
    }

    #[test]
    fn echo_returns_large_outputs_whole_and_respects_the_limit() {
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let echo = get(find("echo").unwrap()).unwrap();
        let data: Vec<u8> = (0..CHUNK * 3 + 5).map(|i| (i % 253) as u8).collect();
        let out = echo.compute(&Input::Owned(data.clone()), &ctx).unwrap();
        assert!(out.is_spilled());
        assert_eq!(out.as_bytes(), &data[..]);
        let mut small = Sink::new(1000);
        assert_eq!(echo.run(&Params::NONE, &Input::Owned(data), &ctx, &mut small), Err(KernelError::TooLarge { limit: 1000 }));
    }

    #[test]
    fn parameters_of_another_kernel_are_refused() {
        let flag = AtomicBool::new(false);
        let ctx = RunContext::new(&flag);
        let xxh = get(find("xxh64").unwrap()).unwrap();
        let wrong = Params::of(String::from("not a seed"));
        let err = xxh.run(&wrong, &Input::Owned(vec![1]), &ctx, &mut Sink::new(64)).unwrap_err();
        assert!(matches!(err, KernelError::InvalidInput(m) if m.contains("another kernel")));
    }
}
