//! The host a loaded kernel's calls are lent: the C-ABI table of host
//! functions (fail, write, unfilled, commit, reserve, check), what they act
//! on during one call, and what a call's status means once it returns.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Mutex, MutexGuard};

use tidepool_kernel_sdk::abi::{self, TpHost};

use super::spec::{valid_identifier, MAX_CODE};
use crate::kernels::lent::{self, Misuse};
use crate::kernels::{KernelError, RunContext, Sink};

/// Longest error message kept from a kernel (longer ones are cut): what
/// fits, with the longest code, in the 1 KiB a task's error text may take
/// on its way to JavaScript (delivery.rs).
const MAX_MESSAGE: usize = 896;

/// What tidepool lends one call into a library: what its host functions
/// act on, found from their `ctx` (a token, see lent.rs) while the call is
/// in progress.
///
/// The library may call host functions from any of its threads while its
/// function runs (a kernel that splits its work may check for cancellation
/// from each thread), so they only ever take `&Call`: `check` reads the run
/// context, which is shared; the others take the lock.
pub(super) struct Call<'s, 'c> {
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
    pub(super) fn new(
        misuse: &'static Misuse,
        sink: Option<&'s mut Sink>,
        run: Option<&'s RunContext<'c>>,
    ) -> Self {
        let state =
            CallState { sink, failure: None, refused: false, short: false, room: 0, misuse: None };
        Call { run, state: Mutex::new(state), misuse }
    }

    /// Runs `f`, the call into the library, with a host over this call:
    /// its functions act on `self` (only ever as `&Call`) until `f`
    /// returns, and on nothing after (lent.rs).
    #[inline]
    pub(super) fn lend<R>(&self, f: impl FnOnce(*const TpHost) -> R) -> Result<R, KernelError> {
        lent::lend(&HOST_FUNCTIONS, ptr::from_ref(self).cast(), self.misuse, f).ok_or_else(|| {
            KernelError::InvalidInput(
                "more threads than tidepool can lend hosts to run loaded kernels at once".into(),
            )
        })
    }

    fn lock(&self) -> MutexGuard<'_, CallState<'s>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a status means, checked against what happened during the call.
    pub(super) fn outcome(self, status: i32, kernel: &str) -> Result<(), KernelError> {
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
            return Err(KernelError::Failed {
                code: "ERR_TIDEPOOL_KERNEL_CONTRACT".into(),
                message: m,
            });
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
            abi::TP_PANIC => Err(KernelError::Panic(
                st.failure.take().map_or_else(|| "the kernel panicked".to_owned(), |(_, m)| m),
            )),
            abi::TP_CANCELLED | abi::TP_TIMED_OUT => match run.map(|r| r.check()) {
                Some(Err(e)) => Err(e),
                _ => Err(contract(format!(
                    "returned status {status} (cancelled or timed out) but the task was neither"
                ))),
            },
            abi::TP_TOO_LARGE if st.refused || st.short => Err(too_large),
            abi::TP_TOO_LARGE => {
                Err(contract("returned TP_TOO_LARGE but no write was refused".into()))
            }
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
unsafe fn with_call<T>(
    ctx: *mut c_void,
    what: &str,
    fallback: T,
    f: impl FnOnce(&Call<'_, '_>) -> T,
) -> T {
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

unsafe extern "C" fn host_fail(
    ctx: *mut c_void,
    code: *const u8,
    code_len: usize,
    message: *const u8,
    message_len: usize,
) {
    // SAFETY: called by the library under the ABI's rules, with its byte ranges.
    unsafe {
        with_call(ctx, "fail", (), |call| {
            let code = std::str::from_utf8(bytes(code, code_len.min(MAX_CODE + 1)))
                .ok()
                .filter(|c| valid_identifier(c));
            let message =
                String::from_utf8_lossy(bytes(message, message_len.min(MAX_MESSAGE))).into_owned();
            call.lock().failure =
                Some((code.unwrap_or("ERR_TIDEPOOL_KERNEL_FAILED").to_owned(), message));
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
                Some(sink) => {
                    sink.unfilled(want).ok().map(|space| (space.as_mut_ptr(), space.len()))
                }
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
                    st.misuse =
                        Some(format!("committed {n} bytes of output into {room} bytes of room"));
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
