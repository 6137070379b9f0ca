//! Kernels written at the raw ABI (as a C kernel is), breaking or testing
//! the rules the SDK would not let a Rust kernel break. Every `unsafe`
//! here dereferences what the host passed for the current call (live until
//! the function returns) or frees a state this module boxed.
// That one argument, above, covers every unsafe block of the module.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};

use tidepool_kernel_sdk::abi::{self, TpHost, TpKernel, TpLibrary};

pub static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// `*const TpHost` that a test may hand to its own threads.
#[derive(Clone, Copy)]
struct Shared(*const TpHost);
// SAFETY: the host functions may be called from any thread while the
// kernel function runs (the ABI's threads rule); the threads are joined
// before it returns.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

unsafe extern "C" fn start(
    _: *const c_void,
    _: u64,
    out: *mut *mut c_void,
    _: *const TpHost,
) -> i32 {
    unsafe { *out = Box::into_raw(Box::new(0u8)).cast() };
    abi::TP_OK
}

unsafe extern "C" fn start_misusing(
    _: *const c_void,
    _: u64,
    out: *mut *mut c_void,
    host: *const TpHost,
) -> i32 {
    let host = unsafe { &*host };
    unsafe { (host.write)(host.ctx, b"x".as_ptr(), 1) };
    unsafe { *out = Box::into_raw(Box::new(0u8)).cast() };
    abi::TP_OK
}

unsafe extern "C" fn update(
    _: *mut c_void,
    data: *const u8,
    len: usize,
    host: *const TpHost,
) -> i32 {
    let chunk = unsafe { std::slice::from_raw_parts(data, len) };
    let h = unsafe { &*host };
    match chunk.first() {
        // Copies its input with unfilled(0) ("whatever is left") until NULL.
        Some(b'z') => {
            let mut left = chunk;
            while !left.is_empty() {
                let mut room = 0usize;
                let p = unsafe { (h.unfilled)(h.ctx, 0, &mut room) };
                if p.is_null() {
                    return abi::TP_TOO_LARGE;
                }
                let n = room.min(left.len());
                unsafe { std::ptr::copy_nonoverlapping(left.as_ptr(), p, n) };
                if unsafe { (h.commit)(h.ctx, n) } != abi::TP_OK {
                    return abi::TP_ERROR;
                }
                left = &left[n..];
            }
            abi::TP_OK
        }
        // Writes whole 4-byte units: a room shorter than a unit is "too large".
        Some(b'u') => {
            for unit in chunk.chunks(4) {
                let mut room = 0usize;
                let p = unsafe { (h.unfilled)(h.ctx, 4, &mut room) };
                if p.is_null() || room < 4 {
                    return abi::TP_TOO_LARGE;
                }
                unsafe { std::ptr::copy_nonoverlapping(unit.as_ptr(), p, unit.len()) };
                unsafe { (h.commit)(h.ctx, unit.len()) };
            }
            abi::TP_OK
        }
        // Ignores a refused write and goes on.
        Some(b'i') => {
            unsafe { (h.write)(h.ctx, [0u8; 100].as_ptr(), 100) };
            unsafe { (h.write)(h.ctx, b"tail".as_ptr(), 4) };
            abi::TP_OK
        }
        Some(b'n') => unsafe { (h.write)(h.ctx, std::ptr::null(), 10) },
        // Four threads of its own write and check at once.
        Some(b't') => {
            let shared = Shared(host);
            std::thread::scope(|s| {
                for t in 0..4u8 {
                    s.spawn(move || {
                        let shared = shared;
                        let h = unsafe { &*shared.0 };
                        for _ in 0..1000 {
                            unsafe { (h.check)(h.ctx) };
                            unsafe { (h.write)(h.ctx, [t].as_ptr(), 1) };
                        }
                    });
                }
            });
            abi::TP_OK
        }
        _ => abi::TP_OK,
    }
}

unsafe extern "C" fn finish(_: *mut c_void, _: *const TpHost) -> i32 {
    abi::TP_OK
}

/// The host `raw/keep` kept (forbidden: it is valid only during the call).
pub static KEPT: AtomicPtr<TpHost> = AtomicPtr::new(std::ptr::null_mut());
/// What the write through it returned to `raw/meddle`.
pub static STALE_STATUS: AtomicI32 = AtomicI32::new(-1);
/// What `raw/from-start`'s stale write returned: its own static, as the
/// test of `raw/keep` resets `STALE_STATUS` while this one may run.
pub static FROM_START_STATUS: AtomicI32 = AtomicI32::new(-1);

/// `raw/keep`: keeps the host its update was lent, writes "kept".
unsafe extern "C" fn update_keeping(
    _: *mut c_void,
    _: *const u8,
    _: usize,
    host: *const TpHost,
) -> i32 {
    KEPT.store(host.cast_mut(), Ordering::SeqCst);
    let h = unsafe { &*host };
    unsafe { (h.write)(h.ctx, b"kept".as_ptr(), 4) }
}

/// `raw/meddle`: writes "EVIL" through the host `raw/keep` kept, then
/// "clean" through its own.
unsafe extern "C" fn update_meddling(
    _: *mut c_void,
    _: *const u8,
    _: usize,
    host: *const TpHost,
) -> i32 {
    let kept = KEPT.load(Ordering::SeqCst);
    if !kept.is_null() {
        let k = unsafe { &*kept };
        STALE_STATUS.store(unsafe { (k.write)(k.ctx, b"EVIL".as_ptr(), 4) }, Ordering::SeqCst);
    }
    let h = unsafe { &*host };
    unsafe { (h.write)(h.ctx, b"clean".as_ptr(), 5) }
}

/// The host `raw/from-start`'s start was lent, and a copy of it.
static STARTED: AtomicPtr<TpHost> = AtomicPtr::new(std::ptr::null_mut());
static STARTED_CTX: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// `raw/from-start`: keeps its start's host (a C library keeping "the
/// host" in its state)...
unsafe extern "C" fn start_keeping(
    _: *const c_void,
    _: u64,
    out: *mut *mut c_void,
    host: *const TpHost,
) -> i32 {
    STARTED.store(host.cast_mut(), Ordering::SeqCst);
    STARTED_CTX.store(unsafe { (*host).ctx }, Ordering::SeqCst);
    unsafe { *out = Box::into_raw(Box::new(0u8)).cast() };
    abi::TP_OK
}

/// ... and writes through it in update ('p': the kept pointer; 'c': a
/// copy of its ctx with this call's functions), then through its own.
unsafe extern "C" fn update_from_start(
    _: *mut c_void,
    data: *const u8,
    len: usize,
    host: *const TpHost,
) -> i32 {
    let h = unsafe { &*host };
    let ctx = match unsafe { std::slice::from_raw_parts(data, len) }.first() {
        Some(b'p') => unsafe { (*STARTED.load(Ordering::SeqCst)).ctx },
        _ => STARTED_CTX.load(Ordering::SeqCst),
    };
    FROM_START_STATUS.store(unsafe { (h.write)(ctx, b"EVIL".as_ptr(), 4) }, Ordering::SeqCst);
    unsafe { (h.write)(h.ctx, b"own".as_ptr(), 3) }
}

unsafe extern "C" fn drop_state(state: *mut c_void) {
    if !state.is_null() {
        drop(unsafe { Box::from_raw(state.cast::<u8>()) });
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

fn kernel(name: &'static std::ffi::CStr, start: abi::StartFn) -> TpKernel {
    kernel_with(name, start, update)
}

fn kernel_with(
    name: &'static std::ffi::CStr,
    start: abi::StartFn,
    update: abi::UpdateFn,
) -> TpKernel {
    TpKernel {
        name: name.as_ptr(),
        flags: 0,
        param_count: 0,
        params: std::ptr::null(),
        make_params: None,
        drop_params: None,
        start: Some(start),
        update: Some(update),
        finish: Some(finish),
        drop_state: Some(drop_state),
    }
}

/// The raw library, registered once.
pub fn library() -> *const TpLibrary {
    static KERNELS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *KERNELS.get_or_init(|| {
        let kernels: &'static [TpKernel] = Box::leak(Box::new([
            kernel(c"raw/ops", start),
            kernel(c"raw/misuse", start_misusing),
            kernel_with(c"raw/keep", start, update_keeping),
            kernel_with(c"raw/meddle", start, update_meddling),
            kernel_with(c"raw/from-start", start_keeping, update_from_start),
        ]));
        Box::leak(Box::new(tidepool_kernel_sdk::library(kernels))) as *const TpLibrary as usize
    }) as *const TpLibrary
}
