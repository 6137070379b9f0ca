//! The registry: every kernel by number and by name, the built-ins first,
//! then the kernels loaded from libraries, registered all or none; and
//! what is known of the built-ins as a whole (the errno of their format
//! errors).

use std::sync::{Mutex, OnceLock};

use super::{brotli, echo, foreign, hashes, kdf, lz4, panic, timed, zlib, zstd, AnyKernel};

/// A kernel's number: what crosses the JS boundary per task. The built-in
/// kernels are `0..BUILTIN.len()`, in [`BUILTIN`]'s order (stable within a
/// build only); loaded kernels follow, in the order they were registered.
pub type KernelId = u32;

/// The number node:zlib puts in `errno` beside a
/// [`KernelError::Format`](super::KernelError::Format) code (zlib's return
/// codes, brotli's error numbers), if it has one.
pub fn format_errno(code: &str) -> Option<i32> {
    zlib::errno_of(code).or_else(|| brotli::errno_of(code)).or_else(|| zstd::errno_of(code))
}

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
    &zlib::UNZIP,
    &brotli::BROTLI_COMPRESS,
    &brotli::BROTLI_DECOMPRESS,
    &zstd::ZSTD_COMPRESS,
    &zstd::ZSTD_DECOMPRESS,
    &lz4::LZ4_COMPRESS,
    &lz4::LZ4_DECOMPRESS,
    &kdf::PBKDF2,
    &kdf::SCRYPT,
    &kdf::HKDF,
    &kdf::ARGON2ID,
    &kdf::ARGON2I,
    &kdf::ARGON2D,
    &kdf::BCRYPT,
];

/// Most kernels loaded from libraries in one process.
pub const MAX_LOADED: usize = 4096;

/// The loaded kernels, after the built-ins: each slot is set once, under
/// [`LIBRARIES`]' lock, and then only read, without a lock (a worker looks
/// its task's kernel up here). Loaded kernels are leaked: their libraries
/// are never unloaded.
static LOADED: [OnceLock<&'static foreign::Foreign>; MAX_LOADED] =
    [const { OnceLock::new() }; MAX_LOADED];

/// The registered libraries (their descriptors' addresses) and their
/// kernels' ids; its lock serializes registration.
static LIBRARIES: Mutex<Vec<(usize, Vec<KernelId>)>> = Mutex::new(Vec::new());

/// Every registered kernel, in id order.
pub fn all() -> impl Iterator<Item = &'static dyn AnyKernel> {
    BUILTIN
        .iter()
        .copied()
        .chain(LOADED.iter().map_while(|k| k.get().map(|&f| f as &dyn AnyKernel)))
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
pub unsafe fn register(
    library: *const tidepool_kernel_sdk::abi::TpLibrary,
) -> Result<Vec<KernelId>, foreign::LoadError> {
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
