//! Checking the descriptor a library's entry point returned: the ABI
//! version and struct sizes, the kernels' names and parameter schemas, and
//! the functions every kernel must have; one unsealed [`Foreign`] per kernel.

use std::ffi::c_char;
use std::ptr;

use tidepool_kernel_sdk::abi::{self, TpKernel, TpLibrary, TpParamSpec};

use super::adapter::{Foreign, UNSEALED};
use super::spec::{js_number, valid_identifier, Spec, MAX_CODE};
use super::LoadError;
use crate::kernels::Params;

/// Most kernels one library may describe.
const MAX_KERNELS: u32 = 256;
/// Most parameters one kernel may take.
const MAX_PARAMS: u32 = 64;
/// Longest kernel name.
const MAX_NAME: usize = 128;

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
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
    };
    matches!(name.split_once('/'), Some((scope, rest)) if part(scope) && part(rest))
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
        return Err(LoadError::Abi(format!(
            "the library's descriptor has {size} bytes; ABI version 1 needs {}",
            size_of::<TpLibrary>()
        )));
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
        return Err(LoadError::Invalid(format!(
            "a library describes 1 to {MAX_KERNELS} kernels; this one {}",
            lib.kernel_count
        )));
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
            return Err(LoadError::Invalid(format!(
                "kernel '{name}' lacks start, update, finish or drop_state"
            )));
        }
        if !specs.is_empty() && k.make_params.is_none() {
            return Err(LoadError::Invalid(format!(
                "kernel '{name}' takes parameters but has no make_params"
            )));
        }
        if k.flags & !abi::TP_KERNEL_EXPANDS != 0 {
            return Err(LoadError::Invalid(format!(
                "kernel '{name}' has flags {:#x}; ABI version 1 knows TP_KERNEL_EXPANDS (1)",
                k.flags
            )));
        }
        out.push(Foreign {
            name,
            kernel: k,
            specs,
            known: &[],
            expected: &[],
            defaults: Ok(Params::NONE),
            misuse: &UNSEALED,
        });
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
        return Err(bad(format!(
            "a kernel takes at most {MAX_PARAMS} parameters, described by a non-NULL array"
        )));
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
            .ok_or_else(|| {
                bad(format!(
                    "parameter {j} has no valid name (a letter, then letters, digits or '_')"
                ))
            })?;
        if specs.iter().any(|s| s.name == pname) {
            return Err(bad(format!("two parameters are named '{pname}'")));
        }
        let expected = match p.kind {
            abi::TP_PARAM_INTEGER if p.int_min <= p.int_max => {
                format!("an integer >= {} and <= {}", p.int_min, p.int_max)
            }
            abi::TP_PARAM_NUMBER if p.num_min <= p.num_max => {
                format!("a number >= {} and <= {}", js_number(p.num_min), js_number(p.num_max))
            }
            abi::TP_PARAM_BOOLEAN => "a boolean".to_owned(),
            abi::TP_PARAM_STRING => "a string".to_owned(),
            abi::TP_PARAM_BYTES => {
                "a string or an instance of Buffer, TypedArray or DataView".to_owned()
            }
            abi::TP_PARAM_INTEGER | abi::TP_PARAM_NUMBER => {
                return Err(bad(format!("parameter '{pname}' has an empty range")))
            }
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
