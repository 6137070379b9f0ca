//! The fake host: records what `fail` says, collects the output of `write`
//! and `unfilled`/`commit`, and answers `check` with a chosen status.

use std::ffi::c_void;
use std::ptr;

use tidepool_kernel_sdk::abi::{self, TpHost};

/// What a host function's `ctx` points to during one test's calls.
pub(crate) struct Fake {
    /// Every `fail` call: (code, message).
    pub(crate) failures: Vec<(String, String)>,
    pub(crate) output: Vec<u8>,
    /// The most output `write` and `unfilled` allow.
    pub(crate) limit: usize,
    /// The room `unfilled` lent last.
    pub(crate) room: Vec<u8>,
    /// What `write` returns instead of doing its work, when set.
    pub(crate) write_status: Option<i32>,
    /// What `check` returns.
    pub(crate) check_status: i32,
    pub(crate) writes: usize,
    pub(crate) commits: usize,
    pub(crate) checks: usize,
    pub(crate) reserved: usize,
}

impl Fake {
    pub(crate) fn new() -> Fake {
        Fake::with_limit(usize::MAX)
    }

    pub(crate) fn with_limit(limit: usize) -> Fake {
        Fake {
            failures: Vec::new(),
            output: Vec::new(),
            limit,
            room: Vec::new(),
            write_status: None,
            check_status: abi::TP_OK,
            writes: 0,
            commits: 0,
            checks: 0,
            reserved: 0,
        }
    }

    /// The host over this fake. The fake must not be touched while a
    /// kernel function holding the host runs.
    pub(crate) fn host(&mut self) -> TpHost {
        TpHost {
            size: size_of::<TpHost>() as u32,
            reserved: 0,
            ctx: ptr::from_mut(self).cast(),
            fail: fake_fail,
            write: fake_write,
            unfilled: fake_unfilled,
            commit: fake_commit,
            reserve: fake_reserve,
            check: fake_check,
        }
    }

    /// The last failure reported, as `(&str, &str)`.
    pub(crate) fn failure(&self) -> Option<(&str, &str)> {
        self.failures.last().map(|(c, m)| (c.as_str(), m.as_str()))
    }
}

/// # Safety
/// `ctx` is the `ctx` of a host made by [`Fake::host`], during a call.
pub(crate) unsafe fn fake<'a>(ctx: *mut c_void) -> &'a mut Fake {
    // SAFETY: the caller's guarantee; nothing else touches the fake meanwhile.
    unsafe { &mut *ctx.cast::<Fake>() }
}

/// # Safety
/// `p` is NULL or points to `len` readable bytes.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

pub(crate) unsafe extern "C" fn fake_fail(
    ctx: *mut c_void,
    code: *const u8,
    code_len: usize,
    message: *const u8,
    message_len: usize,
) {
    // SAFETY: called by the kernel during a call, with live byte ranges.
    let (f, code, message) =
        unsafe { (fake(ctx), bytes(code, code_len), bytes(message, message_len)) };
    f.failures.push((
        String::from_utf8(code.to_vec()).unwrap(),
        String::from_utf8(message.to_vec()).unwrap(),
    ));
}

pub(crate) unsafe extern "C" fn fake_write(ctx: *mut c_void, data: *const u8, len: usize) -> i32 {
    // SAFETY: called by the kernel during a call, with a live byte range.
    let (f, data) = unsafe { (fake(ctx), bytes(data, len)) };
    f.room.clear();
    if let Some(status) = f.write_status {
        return status;
    }
    if f.output.len() + data.len() > f.limit {
        return abi::TP_TOO_LARGE;
    }
    f.writes += 1;
    f.output.extend_from_slice(data);
    abi::TP_OK
}

pub(crate) unsafe extern "C" fn fake_unfilled(
    ctx: *mut c_void,
    at_least: usize,
    room: *mut usize,
) -> *mut u8 {
    // SAFETY: called by the kernel during a call.
    let f = unsafe { fake(ctx) };
    let n = at_least.max(1).min(f.limit - f.output.len());
    // Not zeros: a kernel must not count on the room's contents.
    f.room = vec![0xAA; n];
    // SAFETY: the kernel's out-pointer.
    unsafe { *room = n };
    if n == 0 {
        ptr::null_mut()
    } else {
        f.room.as_mut_ptr()
    }
}

pub(crate) unsafe extern "C" fn fake_commit(ctx: *mut c_void, n: usize) -> i32 {
    // SAFETY: called by the kernel during a call.
    let f = unsafe { fake(ctx) };
    let room = std::mem::take(&mut f.room);
    if n > room.len() {
        return abi::TP_ERROR;
    }
    f.commits += 1;
    f.output.extend_from_slice(&room[..n]);
    abi::TP_OK
}

pub(crate) unsafe extern "C" fn fake_reserve(ctx: *mut c_void, additional: usize) {
    // SAFETY: called by the kernel during a call.
    let f = unsafe { fake(ctx) };
    f.room.clear();
    f.reserved += additional;
}

pub(crate) unsafe extern "C" fn fake_check(ctx: *mut c_void) -> i32 {
    // SAFETY: called by the kernel during a call.
    let f = unsafe { fake(ctx) };
    f.checks += 1;
    f.check_status
}
