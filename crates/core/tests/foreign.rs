//! Kernels loaded through the C ABI, without a dynamic library: kernels
//! written with the SDK in this test binary, whose entry point hands its
//! descriptor to `kernels::register` exactly as a loaded library's would.
//! (The Node tests load real libraries: examples/kernels.)

use std::ffi::CStr;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use tidepool_core::kernels::foreign::LoadError;
use tidepool_core::kernels::{
    self, AnyKernel, KernelError, KernelId, ParamError, Params, RawParams, RawValue, RunContext,
    Sink,
};
use tidepool_core::{Input, Pool, Task, TaskError};
use tidepool_kernel_sdk::abi::{self, TpKernel, TpLibrary};
use tidepool_kernel_sdk::{
    descriptor, export_kernels, library, Context, Error, Kernel, Output, Param, Transform, Values,
};

mod common;

/// Sums the input's bytes times `scale`: 8 little-endian bytes.
struct Sum;
struct Summing(u64, u64);
impl Kernel for Sum {
    const NAME: &'static CStr = c"test/sum";
    const PARAMS: &'static [Param] = &[Param::integer(c"scale", 1, 1000)];
    type Params = u64;
    type State = Summing;
    fn params(v: &Values<'_>) -> Result<u64, Error> {
        Ok(v.integer("scale").unwrap_or(1) as u64)
    }
    fn start(scale: &u64, _: Option<u64>) -> Result<Summing, Error> {
        Ok(Summing(*scale, 0))
    }
}
impl Transform for Summing {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        self.1 += chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
        Ok(())
    }
    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&(self.0 * self.1).to_le_bytes())
    }
}

/// Its input `repeat` times, written in place (unfilled/commit).
struct Repeat;
struct Repeating(u32);
impl Kernel for Repeat {
    const NAME: &'static CStr = c"test/repeat";
    const PARAMS: &'static [Param] =
        &[Param::integer(c"repeat", 1, 4).required(), Param::string(c"mode")];
    type Params = u32;
    type State = Repeating;
    fn params(v: &Values<'_>) -> Result<u32, Error> {
        match v.string("mode") {
            None | Some("plain") => Ok(v.integer("repeat").unwrap() as u32),
            Some(other) => {
                Err(Error::new("ERR_TEST_MODE", format!("mode must be 'plain', not '{other}'")))
            }
        }
    }
    fn start(n: &u32, _: Option<u64>) -> Result<Repeating, Error> {
        Ok(Repeating(*n))
    }
}
impl Transform for Repeating {
    fn update(&mut self, chunk: &[u8], out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        for _ in 0..self.0 {
            let mut left = chunk;
            while !left.is_empty() {
                let room = out.unfilled(left.len())?;
                let n = room.len().min(left.len());
                room[..n].copy_from_slice(&left[..n]);
                out.commit(n)?;
                left = &left[n..];
            }
        }
        Ok(())
    }
    fn finish(&mut self, _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        Ok(())
    }
}

/// A kernel named `$name` without parameters whose state is [`Misbehaving`].
macro_rules! named {
    ($t:ident, $name:literal) => {
        struct $t;
        impl Kernel for $t {
            const NAME: &'static CStr = $name;
            type Params = ();
            type State = Misbehaving;
            fn params(_: &Values<'_>) -> Result<(), Error> {
                Ok(())
            }
            fn start(_: &(), _: Option<u64>) -> Result<Misbehaving, Error> {
                Ok(Misbehaving)
            }
        }
    };
}

// Misbehaves as its first input byte says.
named!(Misbehave, c"test/misbehave");
struct Misbehaving;
impl Transform for Misbehaving {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Output<'_>,
        cx: &Context<'_>,
    ) -> Result<(), Error> {
        match chunk.first() {
            Some(b'p') => panic!("on purpose: {}", chunk.len()),
            Some(b'f') => Err(Error::new("ERR_TEST_BAD", "the input starts with f")),
            Some(b'c') => Err(Error::new("not a code!", "bad code")),
            Some(b'l') => Err(Error::CANCELLED),
            Some(b'o') => {
                out.unfilled(10)?;
                out.commit(1_000_000)
            }
            Some(b's') => loop {
                cx.check()?;
                std::hint::spin_loop();
            },
            _ => Ok(()),
        }
    }
    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(b"done")
    }
}

export_kernels!(Sum, Repeat, Misbehave);

/// Registers this binary's library (once; again returns the same ids).
fn ids() -> Vec<KernelId> {
    // SAFETY: the entry point of this test binary, which stays loaded.
    unsafe { kernels::register(tidepool_kernels_v1()) }.expect("the library registers")
}

fn kernel(name: &str) -> &'static dyn AnyKernel {
    ids();
    kernels::get(kernels::find(name).expect("registered")).unwrap()
}

fn run(name: &str, params: &Params, data: &[u8], limit: usize) -> Result<Vec<u8>, KernelError> {
    let flag = AtomicBool::new(false);
    let mut out = Sink::new(limit);
    kernel(name).run(params, &Input::Owned(data.to_vec()), &RunContext::new(&flag), &mut out)?;
    Ok(out.into_output().as_bytes().to_vec())
}

fn params(name: &str, raw: Vec<(&str, RawValue<'_>)>) -> Result<Params, ParamError> {
    kernel(name).params(&RawParams::new(raw))
}

#[test]
fn a_library_registers_once_after_the_built_ins() {
    let first = ids();
    assert_eq!(first.len(), 3);
    assert!(first.iter().all(|&id| id as usize >= kernels::BUILTIN.len()));
    assert_eq!(ids(), first, "registering the same library again returns its ids");
    let names: Vec<&str> = first.iter().map(|&id| kernels::get(id).unwrap().name()).collect();
    assert_eq!(names, ["test/sum", "test/repeat", "test/misbehave"]);
    assert!(kernels::all().any(|k| k.name() == "test/sum"));
}

#[test]
fn loaded_kernels_run_with_their_defaults_or_checked_parameters() {
    let data: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
    let sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
    assert_eq!(run("test/sum", &Params::NONE, &data, 64).unwrap(), sum.to_le_bytes());
    let scaled = params("test/sum", vec![("scale", RawValue::Number(3.0))]).unwrap();
    assert_eq!(run("test/sum", &scaled, &data, 64).unwrap(), (3 * sum).to_le_bytes());
    let big = params("test/repeat", vec![("repeat", RawValue::BigInt(1))]).unwrap();
    assert_eq!(
        run("test/repeat", &big, &data, usize::MAX).unwrap(),
        data,
        "a bigint is an integer too"
    );
}

#[test]
fn output_in_place_is_every_byte_in_order() {
    let data: Vec<u8> = (0..(kernels::CHUNK + 1000) as u32).map(|i| (i * 7 % 256) as u8).collect();
    let twice = params("test/repeat", vec![("repeat", RawValue::Number(2.0))]).unwrap();
    let out = run("test/repeat", &twice, &data, usize::MAX).unwrap();
    // Each input chunk, twice, in order.
    let mut want = Vec::new();
    for piece in data.chunks(kernels::CHUNK) {
        want.extend_from_slice(piece);
        want.extend_from_slice(piece);
    }
    assert_eq!(out, want);
}

#[test]
fn the_schema_is_checked_before_the_kernel_sees_the_values() {
    let err = params("test/sum", vec![("scael", RawValue::Number(1.0))]).unwrap_err();
    assert!(
        matches!(err, ParamError::Unknown { ref name, known: ["scale"] } if name == "scael"),
        "{err:?}"
    );
    let err = params("test/sum", vec![("scale", RawValue::Number(1001.0))]).unwrap_err();
    assert!(matches!(err, ParamError::Range { name: "scale", .. }), "{err:?}");
    let err = params("test/sum", vec![("scale", RawValue::Text("3"))]).unwrap_err();
    assert!(matches!(err, ParamError::Type { name: "scale", .. }), "{err:?}");
    let err = params("test/repeat", vec![]).unwrap_err();
    assert!(
        matches!(err, ParamError::Missing { name: "repeat", expected: "an integer >= 1 and <= 4" }),
        "{err:?}"
    );
    let err = params(
        "test/repeat",
        vec![("repeat", RawValue::Number(1.0)), ("mode", RawValue::Text("fancy"))],
    )
    .unwrap_err();
    assert_eq!(
        err,
        ParamError::Refused { message: "mode must be 'plain', not 'fancy' (ERR_TEST_MODE)".into() }
    );
    // A task without parameters of a kernel with a required one fails (the
    // binding refuses it before it is queued; this is the kernel's own guard).
    let err = run("test/repeat", &Params::NONE, b"x", 64).unwrap_err();
    assert!(matches!(err, KernelError::InvalidInput(ref m) if m.contains("repeat")), "{err:?}");
}

#[test]
fn parameters_of_another_kernel_are_refused() {
    let of_sum = params("test/sum", vec![("scale", RawValue::Number(2.0))]).unwrap();
    let err = run("test/repeat", &of_sum, b"x", 64).unwrap_err();
    assert!(
        matches!(err, KernelError::InvalidInput(ref m) if m.contains("another kernel")),
        "{err:?}"
    );
    let builtin = kernels::get(kernels::find("xxh64").unwrap())
        .unwrap()
        .params(&RawParams::new(vec![("seed", RawValue::Number(1.0))]))
        .unwrap();
    assert!(run("test/sum", &builtin, b"x", 64).is_err());
}

#[test]
fn errors_panics_and_broken_rules_become_task_errors() {
    assert_eq!(
        run("test/misbehave", &Params::NONE, b"f", 64),
        Err(KernelError::Failed {
            code: "ERR_TEST_BAD".into(),
            message: "the input starts with f".into()
        })
    );
    assert_eq!(
        run("test/misbehave", &Params::NONE, b"pp", 64),
        Err(KernelError::Panic("on purpose: 2".into()))
    );
    let bad_code = run("test/misbehave", &Params::NONE, b"c", 64).unwrap_err();
    assert_eq!(
        bad_code,
        KernelError::Failed {
            code: "ERR_TIDEPOOL_KERNEL_FAILED".into(),
            message: "bad code".into()
        }
    );
    let lie = run("test/misbehave", &Params::NONE, b"l", 64).unwrap_err();
    assert!(
        matches!(lie, KernelError::Failed { ref code, ref message } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.contains("neither")),
        "{lie:?}"
    );
    let over = run("test/misbehave", &Params::NONE, b"o", 1 << 20).unwrap_err();
    assert!(
        matches!(over, KernelError::Failed { ref code, ref message } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.contains("committed 1000000")),
        "{over:?}"
    );
    assert_eq!(run("test/misbehave", &Params::NONE, b"x", 64).unwrap(), b"done");
}

#[test]
fn the_output_limit_holds_for_loaded_kernels() {
    let once = params("test/repeat", vec![("repeat", RawValue::Number(1.0))]).unwrap();
    assert_eq!(
        run("test/repeat", &once, &[7; 1000], 1000).unwrap(),
        vec![7; 1000],
        "exactly at the limit passes"
    );
    assert_eq!(
        run("test/repeat", &once, &[7; 1001], 1000),
        Err(KernelError::TooLarge { limit: 1000 })
    );
    assert_eq!(run("test/sum", &Params::NONE, b"abc", 7), Err(KernelError::TooLarge { limit: 7 }));
}

#[test]
fn cancellation_and_deadlines_reach_a_kernel_that_checks() {
    let pool_flag = AtomicBool::new(false);
    let task_flag = AtomicBool::new(true);
    let spin = kernel("test/misbehave");
    let input = Input::Owned(b"s".to_vec());
    let ctx = RunContext::for_task(&pool_flag, Some(&task_flag), None);
    assert_eq!(
        spin.run(&Params::NONE, &input, &ctx, &mut Sink::new(64)),
        Err(KernelError::Cancelled)
    );
    let ctx =
        RunContext::for_task(&pool_flag, None, Some(Instant::now() + Duration::from_millis(20)));
    assert_eq!(
        spin.run(&Params::NONE, &input, &ctx, &mut Sink::new(64)),
        Err(KernelError::TimedOut)
    );
}

#[test]
fn a_stream_state_fed_across_calls_equals_the_one_shot_run() {
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    let sum = kernel("test/sum");
    let scaled = params("test/sum", vec![("scale", RawValue::Number(5.0))]).unwrap();
    let mut state = sum.start(&scaled, None).unwrap();
    drop(scaled); // the state keeps its parameters alive
    let mut out = Sink::new(64);
    for piece in [&b"ab"[..], b"", b"cdef"] {
        state.update(piece, &mut out, &ctx).unwrap();
    }
    state.finish(&mut out, &ctx).unwrap();
    let want = 5 * b"abcdef".iter().map(|&b| u64::from(b)).sum::<u64>();
    assert_eq!(out.into_output().as_bytes(), want.to_le_bytes());
}

#[test]
fn a_pool_runs_loaded_kernels_and_survives_their_panics() {
    ids();
    let pool = Pool::new(common::config(1, 2), Box::new(|| {})).unwrap();
    let sum = kernels::find("test/sum").unwrap();
    let bad = kernels::find("test/misbehave").unwrap();
    let n = 10_000u32;
    for slot in 0..n {
        let (kernel, data) =
            if slot % 100 == 0 { (bad, b"p".to_vec()) } else { (sum, slot.to_le_bytes().to_vec()) };
        pool.submit(Task::new(slot, kernel, Input::Owned(data), Instant::now())).unwrap();
    }
    let mut seen = vec![false; n as usize];
    let mut buf = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut left = n;
    while left > 0 {
        assert!(Instant::now() < deadline, "{left} tasks never completed");
        pool.take_completions(&mut buf);
        for c in buf.drain(..) {
            assert!(
                !std::mem::replace(&mut seen[c.slot as usize], true),
                "slot {} completed twice",
                c.slot
            );
            left -= 1;
            match c.outcome {
                Err(TaskError::Kernel(KernelError::Panic(m))) => {
                    assert!(c.slot % 100 == 0 && m.contains("on purpose"), "{m}")
                }
                Ok(out) => {
                    let want: u64 = c.slot.to_le_bytes().iter().map(|&b| u64::from(b)).sum();
                    assert_eq!(out.as_bytes(), want.to_le_bytes());
                }
                Err(e) => panic!("slot {}: {e}", c.slot),
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(pool.stats(false).threads >= 1, "the threads survive the panics");
    pool.close();
    pool.join();
}

/// A library descriptor made by hand, to break one rule at a time.
fn library_with(kernels: Vec<TpKernel>, edit: impl FnOnce(&mut TpLibrary)) -> *const TpLibrary {
    let kernels: &'static [TpKernel] = Box::leak(kernels.into_boxed_slice());
    let mut lib = library(kernels);
    edit(&mut lib);
    Box::leak(Box::new(lib))
}

fn load(lib: *const TpLibrary) -> Result<Vec<KernelId>, LoadError> {
    // SAFETY: descriptors made (and leaked) by this test.
    unsafe { kernels::register(lib) }
}

named!(Fresh, c"test/fresh");
named!(Clash, c"test/sum");
named!(Unscoped, c"sha256");
named!(Upper, c"Test/Upper");

#[test]
fn a_library_of_another_version_or_breaking_a_rule_is_refused_whole() {
    ids();
    let abi = |edit: fn(&mut TpLibrary)| load(library_with(vec![descriptor::<Fresh>()], edit));
    assert!(
        matches!(abi(|l| l.abi_version = 2), Err(LoadError::Abi(ref m)) if m.contains("version 2"))
    );
    assert!(matches!(abi(|l| l.size = 8), Err(LoadError::Abi(_))));
    assert!(matches!(abi(|l| l.kernel_size = 16), Err(LoadError::Abi(_))));
    assert!(matches!(abi(|l| l.kernel_count = 0), Err(LoadError::Invalid(_))));
    assert!(matches!(load(std::ptr::null()), Err(LoadError::Invalid(_))));

    // A clash refuses the whole library: "test/fresh" is not registered either.
    assert_eq!(
        load(library_with(vec![descriptor::<Fresh>(), descriptor::<Clash>()], |_| {})),
        Err(LoadError::Exists("test/sum".into()))
    );
    assert_eq!(kernels::find("test/fresh"), None);
    for bad in [descriptor::<Unscoped>(), descriptor::<Upper>()] {
        assert!(
            matches!(load(library_with(vec![bad], |_| {})), Err(LoadError::Invalid(ref m)) if m.contains("scope/name"))
        );
    }
    let mut no_update = descriptor::<Fresh>();
    no_update.update = None;
    assert!(matches!(load(library_with(vec![no_update], |_| {})), Err(LoadError::Invalid(_))));
    let mut bad_spec = descriptor::<Sum>();
    static WRONG: [tidepool_kernel_sdk::abi::TpParamSpec; 1] =
        [tidepool_kernel_sdk::abi::TpParamSpec {
            name: c"scale".as_ptr(),
            kind: 99,
            required: 0,
            int_min: 0,
            int_max: 0,
            num_min: 0.0,
            num_max: 0.0,
        }];
    bad_spec.params = WRONG.as_ptr();
    bad_spec.name = c"test/other".as_ptr();
    assert!(
        matches!(load(library_with(vec![bad_spec], |_| {})), Err(LoadError::Invalid(ref m)) if m.contains("unknown type 99"))
    );
    assert_eq!(abi::ABI_VERSION, 1);

    // The same kernel, valid, registers after all.
    let fresh = load(library_with(vec![descriptor::<Fresh>()], |_| {})).unwrap();
    assert_eq!(kernels::find("test/fresh"), Some(fresh[0]));
}

/// Kernels written at the raw ABI (as a C kernel is), breaking or testing
/// the rules the SDK would not let a Rust kernel break. Every `unsafe`
/// here dereferences what the host passed for the current call (live until
/// the function returns) or frees a state this module boxed.
// That one argument, above, covers every unsafe block of the module.
#[allow(clippy::undocumented_unsafe_blocks)]
mod raw {
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
}

fn raw(name: &str, data: &[u8], limit: usize) -> Result<Vec<u8>, KernelError> {
    // SAFETY: the raw library's descriptor, leaked by `raw::library`.
    unsafe { kernels::register(raw::library()) }.unwrap();
    run(name, &Params::NONE, data, limit)
}

#[test]
fn rooms_are_never_empty_and_a_short_room_may_end_in_too_large() {
    let data = [b'z'; 300];
    assert_eq!(raw("raw/ops", &data, 1000).unwrap(), data, "unfilled(0) lends at least a byte");
    assert_eq!(
        raw("raw/ops", &data, 299),
        Err(KernelError::TooLarge { limit: 299 }),
        "then NULL at the limit"
    );
    let units = [b'u'; 12];
    assert_eq!(raw("raw/ops", &units, 12).unwrap(), units);
    assert_eq!(
        raw("raw/ops", &units, 11),
        Err(KernelError::TooLarge { limit: 11 }),
        "a room shorter than a unit"
    );
}

#[test]
fn an_ignored_refusal_or_a_null_write_fails_the_task() {
    assert_eq!(
        raw("raw/ops", b"i", 50),
        Err(KernelError::TooLarge { limit: 50 }),
        "no result with a hole in it"
    );
    let err = raw("raw/ops", b"n", 50).unwrap_err();
    assert!(
        matches!(err, KernelError::Failed { ref code, ref message } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.contains("NULL")),
        "{err:?}"
    );
}

#[test]
fn a_state_handed_over_is_dropped_even_when_its_start_broke_a_rule() {
    let before = raw::DROPPED.load(std::sync::atomic::Ordering::SeqCst);
    let err = raw("raw/misuse", b"x", 64).unwrap_err();
    assert!(
        matches!(err, KernelError::Failed { ref code, .. } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT"),
        "{err:?}"
    );
    assert!(
        raw::DROPPED.load(std::sync::atomic::Ordering::SeqCst) > before,
        "the library's state was given back to it"
    );
}

#[test]
fn host_functions_may_be_called_from_the_kernels_own_threads() {
    let out = raw("raw/ops", b"t", 1 << 20).unwrap();
    assert_eq!(out.len(), 4000);
    for t in 0..4u8 {
        assert_eq!(out.iter().filter(|&&b| b == t).count(), 1000);
    }
}

fn contract_error(err: &KernelError, kernel: &str, what: &str) -> bool {
    matches!(err, KernelError::Failed { code, message }
        if code == "ERR_TIDEPOOL_KERNEL_CONTRACT" && message.starts_with(&format!("kernel '{kernel}' ")) && message.contains(what))
}

// The tests below use raw/keep, raw/meddle and raw/from-start, each in one
// test only: a misuse is reported by its kernel's next call, which another
// test running at the same time could make.

#[test]
fn a_host_kept_past_its_call_writes_into_no_other_task_and_its_kernel_is_told() {
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(raw("raw/keep", b"k", 64).unwrap(), b"kept");
    // The next task on this thread: before hosts were checked, the kept
    // pointer read this call's host (same stack slot) and "EVIL" landed in
    // its output.
    assert_eq!(
        raw("raw/meddle", b"m", 64).unwrap(),
        b"clean",
        "the other task's output is untouched"
    );
    assert_eq!(raw::STALE_STATUS.load(SeqCst), abi::TP_ERROR, "the late write was refused");
    // The kernel whose host it was hears of it at its next call.
    let err = raw("raw/keep", b"k", 64).unwrap_err();
    assert!(
        contract_error(
            &err,
            "raw/keep",
            "called its host's write after the call it was lent to had returned"
        ),
        "{err:?}"
    );
    assert_eq!(raw("raw/keep", b"k", 64).unwrap(), b"kept", "reported once");
    // Tasks in between do not make the kept host any less stale.
    for _ in 0..10 {
        raw("raw/ops", b"x", 64).unwrap();
    }
    raw::STALE_STATUS.store(-1, SeqCst);
    assert_eq!(raw("raw/meddle", b"m", 64).unwrap(), b"clean");
    assert_eq!(raw::STALE_STATUS.load(SeqCst), abi::TP_ERROR);
    assert!(contract_error(&raw("raw/keep", b"k", 64).unwrap_err(), "raw/keep", "write"));
}

#[test]
fn a_host_kept_from_start_and_used_in_update_fails_that_task() {
    use std::sync::atomic::Ordering::SeqCst;
    // The kept pointer, and a copy of its ctx: both stale in update.
    for input in [b"p", b"c"] {
        raw::FROM_START_STATUS.store(-1, SeqCst);
        let err = raw("raw/from-start", input, 64).unwrap_err();
        assert_eq!(raw::FROM_START_STATUS.load(SeqCst), abi::TP_ERROR, "{}", input[0] as char);
        assert!(contract_error(&err, "raw/from-start", "write after the call"), "{err:?}");
    }
}
