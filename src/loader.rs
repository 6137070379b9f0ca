//! `Pool.loadKernels()`'s native half: find a kernel library's descriptor,
//! from a shared library's path (opened here) or from an External handed
//! out by an addon that is already loaded, and register its kernels for
//! every pool of the process (`tidepool_core::kernels::register`).
//!
//! Libraries are never unloaded: a kernel may be running, or be run later,
//! on any pool's threads for as long as the process lives, and its
//! functions and data must stay mapped. A library refused after it was
//! opened (wrong ABI version, a name clash) stays loaded too: its
//! initializers have run, and unloading would be the riskier step.

use std::ffi::c_void;
use std::ptr;

use napi::sys;
use tidepool_core::kernels::{self, foreign::LoadError};
use tidepool_kernel_sdk::abi::{self, EntryPoint, TpLibrary};

/// What JavaScript gets, as one string (a primitive: no property a caller
/// put on `Object.prototype` or `Array.prototype` can intercept it):
/// `"<first id> <count>"` for the library's kernels (their ids are
/// consecutive), or `"!<CODE> <message>"` for lib/args/kernels.js to throw.
pub type Loaded = String;

fn refused(code: &str, message: String) -> Loaded {
    format!("!{code} {message}")
}

fn registered(library: *const TpLibrary, source: &str) -> Loaded {
    // SAFETY: `library` is what a library's entry point returned (or an
    // addon's tagged External holds, which by the ABI is the same), and
    // libraries are never unloaded.
    match unsafe { kernels::register(library) } {
        Ok(ids) => format!("{} {}", ids.first().copied().unwrap_or(0), ids.len()),
        Err(e) => {
            let code = match e {
                LoadError::Abi(_) => "ERR_TIDEPOOL_KERNEL_ABI",
                LoadError::Invalid(_) => "ERR_TIDEPOOL_KERNEL_INVALID",
                LoadError::Exists(_) => "ERR_TIDEPOOL_KERNEL_EXISTS",
                LoadError::Full => "ERR_TIDEPOOL_KERNEL_LIMIT",
            };
            refused(code, format!("{source}: {e}"))
        }
    }
}

/// Opens the shared library at `path` (absolute: lib/args/kernels.js resolves
/// it, so no search path is ever consulted) and registers its kernels.
pub fn load_library(path: String) -> Loaded {
    // SAFETY: opening a library runs its initializers: that is what the
    // caller asked for (a kernel library is trusted native code, like an
    // addon). It is never closed (`forget` below).
    let library = match unsafe { open(&path) } {
        Ok(library) => library,
        Err(e) => {
            // libloading's own text is "dlopen failed"; the system's reason is its source.
            let reason =
                std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
            return refused("ERR_DLOPEN_FAILED", reason);
        }
    };
    let entry_name = format!("{}\0", abi::ENTRY_SYMBOL);
    // SAFETY: the symbol, when present, is the ABI's entry point, whose type
    // is `EntryPoint`.
    let entry =
        unsafe { library.get::<EntryPoint>(entry_name.as_bytes()) }.ok().map(|symbol| *symbol);
    let result = match entry {
        // SAFETY: the ABI's entry point: no arguments, returns the
        // library's static descriptor (or NULL, which `register` refuses).
        Some(entry) => registered(unsafe { entry() }, &path),
        None => match other_version(&library) {
            Some(version) => refused(
                "ERR_TIDEPOOL_KERNEL_ABI",
                format!(
                    "{path}: the library was built for kernel ABI version {version}; this tidepool supports version {}",
                    abi::ABI_VERSION
                ),
            ),
            None => {
                refused("ERR_TIDEPOOL_KERNEL_ENTRY", format!("{path}: not a tidepool kernel library (it exports no {})", abi::ENTRY_SYMBOL))
            }
        },
    };
    std::mem::forget(library);
    result
}

/// The major version of another ABI's entry point the library exports, if any.
fn other_version(library: &libloading::Library) -> Option<u32> {
    (2..=9).find(|v| {
        let name = format!("tidepool_kernels_v{v}\0");
        // SAFETY: only looked up, never called.
        unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_ok()
    })
}

/// `dlopen(path, RTLD_NOW | RTLD_LOCAL)`: every symbol resolved now (a
/// library missing one is refused here, not when a kernel first runs), none
/// of its symbols visible to other libraries.
///
/// # Safety
/// Runs the library's initializers.
#[cfg(unix)]
unsafe fn open(path: &str) -> Result<libloading::Library, libloading::Error> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: the caller's.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map(Into::into)
}

/// `LoadLibraryExW` with the default search flags; `path` is absolute.
///
/// # Safety
/// Runs the library's initializers.
#[cfg(not(unix))]
unsafe fn open(path: &str) -> Result<libloading::Library, libloading::Error> {
    // SAFETY: the caller's.
    unsafe { libloading::Library::new(path) }
}

/// The tag of an External whose data is a library descriptor.
const TAG: sys::napi_type_tag =
    sys::napi_type_tag { lower: abi::NAPI_TYPE_TAG.0, upper: abi::NAPI_TYPE_TAG.1 };

/// Registers the kernels of the library whose descriptor `handle` (an
/// External tagged with `abi::NAPI_TYPE_TAG`, made by an addon) points to.
/// `None` when `handle` is not such an External.
///
/// # Safety
/// `env` and `handle` must be the live env and a value of the current call.
pub unsafe fn load_handle(env: sys::napi_env, handle: sys::napi_value) -> Option<Loaded> {
    let mut tagged = false;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: live env/value; out-pointers to locals. The tag is checked
    // before the External's data is read.
    unsafe {
        if sys::napi_check_object_type_tag(env, handle, &TAG, &mut tagged) != sys::Status::napi_ok
            || !tagged
        {
            return None;
        }
        if sys::napi_get_value_external(env, handle, &mut data) != sys::Status::napi_ok {
            return None;
        }
    }
    pin(data.cast_const());
    Some(registered(data.cast_const().cast(), "the kernel library handle"))
}

/// Keeps the shared library that holds `address` loaded for the rest of the
/// process, whoever else closes it: the addon a handle came from was opened
/// by Node, not by us, and may have been loaded by a worker thread whose
/// environment ends long before the kernels stop running.
#[cfg(unix)]
fn pin(address: *const c_void) {
    // SAFETY: `Dl_info` is plain data, valid zeroed.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address's mapping; out-pointer to a local.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return;
    }
    // RTLD_NOLOAD: only a library already loaded (the one holding the
    // descriptor) gets a reference; RTLD_NODELETE: its memory stays mapped
    // even if every reference is closed. The handle is never closed.
    // SAFETY: `dli_fname` is the loader's NUL-terminated path of that library.
    unsafe {
        libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE)
    };
}

/// Not pinned on Windows (no dladdr): the library stays loaded as long as
/// Node keeps its addon loaded, which Node does not undo.
#[cfg(not(unix))]
fn pin(_address: *const c_void) {}
