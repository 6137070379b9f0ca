//! The SDK on its own: kernels defined here with `export_kernels!`, driven
//! through the descriptor's function pointers exactly as tidepool drives a
//! loaded library, against a fake host written here (it records what `fail`
//! says, collects the output of `write` and `unfilled`/`commit`, and answers
//! `check` with a chosen status).

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use tidepool_kernel_sdk::abi::{self, TpHost, TpKernel, TpLibrary, TpValue};
use tidepool_kernel_sdk::{
    export_kernels, kernel_name, Context, Error, Kernel, Output, Param, Transform, Values,
};

// ---------------------------------------------------------------------------
// The kernels

/// Every parameter type; echoes its input through `unfilled`/`commit` in
/// pieces of `piece` bytes, then its settings through `write`.
struct Echo;

#[derive(Debug, Clone, PartialEq)]
struct Settings {
    piece: i64,
    ratio: Option<f64>,
    strict: Option<bool>,
    label: Option<String>,
    key: Option<Vec<u8>>,
}

struct Echoing(Settings);

impl Kernel for Echo {
    const NAME: &'static CStr = c"test/echo";
    const PARAMS: &'static [Param] = &[
        Param::integer(c"piece", 1, 1 << 20).required(),
        Param::number(c"ratio", -0.5, 2.5),
        Param::boolean(c"strict"),
        Param::string(c"label"),
        Param::bytes(c"key"),
    ];
    const EXPANDS: bool = true;
    type Params = Settings;
    type State = Echoing;

    fn params(v: &Values<'_>) -> Result<Settings, Error> {
        let settings = Settings {
            piece: v.integer("piece").unwrap_or(1),
            ratio: v.number("ratio"),
            strict: v.boolean("strict"),
            label: v.string("label").map(str::to_owned),
            key: v.bytes("key").map(<[u8]>::to_vec),
        };
        // Accessors of another type, or of names not in the schema, give nothing.
        assert_eq!(
            (v.number("piece"), v.integer("ratio"), v.string("key"), v.integer("nope")),
            (None, None, None, None)
        );
        match settings.label.as_deref() {
            Some("refuse") => Err(Error::new("ERR_TEST_REFUSED", "the label 'refuse' is refused")),
            _ => Ok(settings),
        }
    }

    fn start(settings: &Settings, _: Option<u64>) -> Result<Echoing, Error> {
        Ok(Echoing(settings.clone()))
    }
}

impl Transform for Echoing {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Output<'_>,
        cx: &Context<'_>,
    ) -> Result<(), Error> {
        cx.check()?;
        out.reserve(chunk.len());
        let mut left = chunk;
        while !left.is_empty() {
            let room = out.unfilled(left.len().min(self.0.piece as usize))?;
            let n = room.len().min(left.len());
            room[..n].copy_from_slice(&left[..n]);
            out.commit(n)?;
            left = &left[n..];
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(format!("|{:?}", self.0).as_bytes())
    }
}

/// No parameters (`()`, zero-sized): counts its input, checking for
/// cancellation before each chunk; the count and the length hint (8 bytes
/// each, `u64::MAX` for none) at the end.
struct Unit;

struct Counting {
    count: u64,
    hint: Option<u64>,
}

impl Kernel for Unit {
    const NAME: &'static CStr = c"test/unit";
    type Params = ();
    type State = Counting;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), hint: Option<u64>) -> Result<Counting, Error> {
        Ok(Counting { count: 0, hint })
    }
}

impl Transform for Counting {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        cx.check()?;
        self.count += chunk.len() as u64;
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&self.count.to_le_bytes())?;
        out.write(&self.hint.unwrap_or(u64::MAX).to_le_bytes())
    }
}

/// Panics: in `start` for a length hint of 13, in `update` (a `String`
/// message, or a payload that is no text for a chunk starting with 0), in
/// `finish` (a `&str` message). Counts its dropped states (only the panic
/// test uses it).
struct Fragile;

static FRAGILE_STATES_DROPPED: AtomicUsize = AtomicUsize::new(0);

struct Breaking;

impl Drop for Breaking {
    fn drop(&mut self) {
        FRAGILE_STATES_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

impl Kernel for Fragile {
    const NAME: &'static CStr = c"test/fragile";
    type Params = ();
    type State = Breaking;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), hint: Option<u64>) -> Result<Breaking, Error> {
        assert_ne!(hint, Some(13), "unlucky start");
        Ok(Breaking)
    }
}

impl Transform for Breaking {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        match chunk.first() {
            Some(0) => std::panic::panic_any(7u8),
            Some(_) => panic!("fragile: {} bytes", chunk.len()),
            None => Ok(()),
        }
    }

    fn finish(&mut self, _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        panic!("fragile finish");
    }
}

/// Zero-sized parameters and a state, both counting their drops (used by
/// one test only, so the counts are its own).
struct Tracked;

static TRACKED_PARAMS_DROPPED: AtomicUsize = AtomicUsize::new(0);
static TRACKED_STATES_DROPPED: AtomicUsize = AtomicUsize::new(0);

struct TrackedParams;

impl Drop for TrackedParams {
    fn drop(&mut self) {
        TRACKED_PARAMS_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

struct TrackedState(Vec<u8>);

impl Drop for TrackedState {
    fn drop(&mut self) {
        TRACKED_STATES_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

impl Kernel for Tracked {
    const NAME: &'static CStr = c"test/tracked";
    type Params = TrackedParams;
    type State = TrackedState;

    fn params(_: &Values<'_>) -> Result<TrackedParams, Error> {
        Ok(TrackedParams)
    }

    fn start(_: &TrackedParams, _: Option<u64>) -> Result<TrackedState, Error> {
        Ok(TrackedState(vec![1, 2, 3]))
    }
}

impl Transform for TrackedState {
    fn update(&mut self, _: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&self.0)
    }
}

export_kernels!(Echo, Unit, Fragile, Tracked);

// ---------------------------------------------------------------------------
// The fake host

/// What a host function's `ctx` points to during one test's calls.
struct Fake {
    /// Every `fail` call: (code, message).
    failures: Vec<(String, String)>,
    output: Vec<u8>,
    /// The most output `write` and `unfilled` allow.
    limit: usize,
    /// The room `unfilled` lent last.
    room: Vec<u8>,
    /// What `write` returns instead of doing its work, when set.
    write_status: Option<i32>,
    /// What `check` returns.
    check_status: i32,
    writes: usize,
    commits: usize,
    checks: usize,
    reserved: usize,
}

impl Fake {
    fn new() -> Fake {
        Fake::with_limit(usize::MAX)
    }

    fn with_limit(limit: usize) -> Fake {
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
    fn host(&mut self) -> TpHost {
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
    fn failure(&self) -> Option<(&str, &str)> {
        self.failures.last().map(|(c, m)| (c.as_str(), m.as_str()))
    }
}

/// # Safety
/// `ctx` is the `ctx` of a host made by [`Fake::host`], during a call.
unsafe fn fake<'a>(ctx: *mut c_void) -> &'a mut Fake {
    // SAFETY: the caller's guarantee; nothing else touches the fake meanwhile.
    unsafe { &mut *ctx.cast::<Fake>() }
}

/// # Safety
/// `p` is NULL or points to `len` readable bytes.
unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

unsafe extern "C" fn fake_fail(
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

unsafe extern "C" fn fake_write(ctx: *mut c_void, data: *const u8, len: usize) -> i32 {
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

unsafe extern "C" fn fake_unfilled(ctx: *mut c_void, at_least: usize, room: *mut usize) -> *mut u8 {
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

unsafe extern "C" fn fake_commit(ctx: *mut c_void, n: usize) -> i32 {
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

unsafe extern "C" fn fake_reserve(ctx: *mut c_void, additional: usize) {
    // SAFETY: called by the kernel during a call.
    let f = unsafe { fake(ctx) };
    f.room.clear();
    f.reserved += additional;
}

unsafe extern "C" fn fake_check(ctx: *mut c_void) -> i32 {
    // SAFETY: called by the kernel during a call.
    let f = unsafe { fake(ctx) };
    f.checks += 1;
    f.check_status
}

// ---------------------------------------------------------------------------
// Driving a kernel as tidepool does

fn library() -> &'static TpLibrary {
    // SAFETY: this binary's entry point returns its static descriptor.
    unsafe { &*tidepool_kernels_v1() }
}

fn kernels() -> &'static [TpKernel] {
    let lib = library();
    // SAFETY: `kernel_count` kernels of the static descriptor (the stride is
    // `size_of::<TpKernel>()`, checked by the descriptor test).
    unsafe { std::slice::from_raw_parts(lib.kernels, lib.kernel_count as usize) }
}

fn kernel(name: &str) -> &'static TpKernel {
    // SAFETY: every name is a static NUL-terminated string.
    kernels()
        .iter()
        .find(|k| unsafe { CStr::from_ptr(k.name) }.to_str() == Ok(name))
        .expect("a kernel of that name")
}

fn absent() -> TpValue {
    TpValue { present: 0, boolean: 0, integer: 0, number: 0.0, data: ptr::null(), len: 0 }
}

fn integer(n: i64) -> TpValue {
    TpValue { present: 1, integer: n, ..absent() }
}

fn number(n: f64) -> TpValue {
    TpValue { present: 1, number: n, ..absent() }
}

fn boolean(b: bool) -> TpValue {
    TpValue { present: 1, boolean: u32::from(b), ..absent() }
}

/// A string or bytes value borrowing `b` (which must outlive the call).
fn data(b: &[u8]) -> TpValue {
    TpValue { present: 1, data: b.as_ptr(), len: b.len(), ..absent() }
}

/// `make_params`: the status and what it stored (NULL if nothing).
fn make_params(k: &TpKernel, values: &[TpValue], fake: &mut Fake) -> (i32, *mut c_void) {
    let mut out = ptr::null_mut();
    let host = fake.host();
    // SAFETY: the kernel's function with live values, out-pointer and host.
    let status =
        unsafe { (k.make_params.unwrap())(values.as_ptr(), values.len() as u32, &mut out, &host) };
    (status, out)
}

/// `start`: the status and what it stored (NULL if nothing).
fn start(k: &TpKernel, params: *const c_void, hint: u64, fake: &mut Fake) -> (i32, *mut c_void) {
    let mut out = ptr::null_mut();
    let host = fake.host();
    // SAFETY: the kernel's function, with parameters it made (or NULL), a
    // live out-pointer and host.
    let status = unsafe { (k.start.unwrap())(params, hint, &mut out, &host) };
    (status, out)
}

fn update(k: &TpKernel, state: *mut c_void, chunk: &[u8], fake: &mut Fake) -> i32 {
    let host = fake.host();
    // SAFETY: a state this kernel made, a live chunk and host.
    unsafe { (k.update.unwrap())(state, chunk.as_ptr(), chunk.len(), &host) }
}

fn finish(k: &TpKernel, state: *mut c_void, fake: &mut Fake) -> i32 {
    let host = fake.host();
    // SAFETY: a state this kernel made, a live host.
    unsafe { (k.finish.unwrap())(state, &host) }
}

fn drop_state(k: &TpKernel, state: *mut c_void) {
    // SAFETY: a state this kernel made, dropped once.
    unsafe { (k.drop_state.unwrap())(state) }
}

fn drop_params(k: &TpKernel, params: *mut c_void) {
    // SAFETY: parameters this kernel made, dropped once.
    unsafe { (k.drop_params.unwrap())(params) }
}

/// Parameters from no values (the kernels without a schema).
fn no_params(k: &TpKernel) -> *mut c_void {
    let mut fake = Fake::new();
    let (status, params) = make_params(k, &[], &mut fake);
    assert_eq!((status, fake.failure()), (abi::TP_OK, None));
    params
}

/// A whole task: parameters from `values`, the chunks, `finish`: the status
/// of the first failing call (or `TP_OK`) and the fake.
fn run(name: &str, values: &[TpValue], chunks: &[&[u8]], mut fake: Fake) -> (i32, Fake) {
    let k = kernel(name);
    let (status, params) = make_params(k, values, &mut fake);
    if status != abi::TP_OK {
        return (status, fake);
    }
    let (mut status, state) = start(k, params, u64::MAX, &mut fake);
    if status == abi::TP_OK {
        for chunk in chunks {
            status = update(k, state, chunk, &mut fake);
            if status != abi::TP_OK {
                break;
            }
        }
        if status == abi::TP_OK {
            status = finish(k, state, &mut fake);
        }
        drop_state(k, state);
    }
    drop_params(k, params);
    (status, fake)
}

// ---------------------------------------------------------------------------
// The tests

#[test]
fn the_descriptor_describes_every_kernel_and_its_schema() {
    let lib = library();
    assert_eq!(lib.abi_version, abi::ABI_VERSION);
    assert_eq!(lib.size as usize, size_of::<TpLibrary>());
    assert_eq!(lib.kernel_size as usize, size_of::<TpKernel>());
    assert_eq!(lib.kernel_count, 4);
    assert!(
        ptr::eq(lib, library()),
        "the entry point returns the same static descriptor every time"
    );
    assert_eq!(abi::ENTRY_SYMBOL, "tidepool_kernels_v1");

    // SAFETY: static NUL-terminated names.
    let names: Vec<&str> =
        kernels().iter().map(|k| unsafe { CStr::from_ptr(k.name) }.to_str().unwrap()).collect();
    assert_eq!(names, ["test/echo", "test/unit", "test/fragile", "test/tracked"]);
    assert_eq!(kernel_name::<Echo>(), "test/echo");
    let flags: Vec<u32> = kernels().iter().map(|k| k.flags).collect();
    assert_eq!(flags, [abi::TP_KERNEL_EXPANDS, 0, 0, 0]);
    for k in kernels() {
        let every = [
            k.make_params.is_some(),
            k.drop_params.is_some(),
            k.start.is_some(),
            k.update.is_some(),
            k.finish.is_some(),
        ];
        assert!(every.iter().all(|&b| b) && k.drop_state.is_some(), "every function is there");
    }

    let echo = kernel("test/echo");
    assert_eq!(echo.param_count, 5);
    // SAFETY: the kernel's static schema of `param_count` entries.
    let schema = unsafe { std::slice::from_raw_parts(echo.params, echo.param_count as usize) };
    // SAFETY: static NUL-terminated names.
    let names: Vec<&str> =
        schema.iter().map(|p| unsafe { CStr::from_ptr(p.name) }.to_str().unwrap()).collect();
    assert_eq!(names, ["piece", "ratio", "strict", "label", "key"]);
    let kinds: Vec<u32> = schema.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            abi::TP_PARAM_INTEGER,
            abi::TP_PARAM_NUMBER,
            abi::TP_PARAM_BOOLEAN,
            abi::TP_PARAM_STRING,
            abi::TP_PARAM_BYTES
        ]
    );
    let required: Vec<u32> = schema.iter().map(|p| p.required).collect();
    assert_eq!(required, [1, 0, 0, 0, 0]);
    assert_eq!((schema[0].int_min, schema[0].int_max), (1, 1 << 20));
    assert_eq!((schema[1].num_min, schema[1].num_max), (-0.5, 2.5));
    // The other kinds' ranges are left at zero.
    assert_eq!(
        (schema[0].num_min, schema[0].num_max, schema[1].int_min, schema[1].int_max),
        (0.0, 0.0, 0, 0)
    );
    assert_eq!(Echo::PARAMS.iter().map(Param::name).collect::<Vec<_>>(), names);

    // No schema: no array to read.
    let unit = kernel("test/unit");
    assert_eq!(unit.param_count, 0);
}

#[test]
fn make_params_reads_present_and_absent_values() {
    let label = "naïve";
    let key = [0u8, 255, 7];
    let values = [integer(3), number(-0.25), boolean(true), data(label.as_bytes()), data(&key)];
    let (status, fake) = run("test/echo", &values, &[b"hello, world"], Fake::new());
    assert_eq!((status, fake.failure()), (abi::TP_OK, None));
    let all = Settings {
        piece: 3,
        ratio: Some(-0.25),
        strict: Some(true),
        label: Some(label.into()),
        key: Some(key.to_vec()),
    };
    assert_eq!(String::from_utf8(fake.output).unwrap(), format!("hello, world|{all:?}"));

    // Only the required one: the others are absent (whatever their other fields hold).
    let mut ignored = boolean(true);
    ignored.present = 0;
    let values = [integer(1 << 20), absent(), ignored, absent(), absent()];
    let (status, fake) = run("test/echo", &values, &[], Fake::new());
    assert_eq!(status, abi::TP_OK);
    let none = Settings { piece: 1 << 20, ratio: None, strict: None, label: None, key: None };
    assert_eq!(String::from_utf8(fake.output).unwrap(), format!("|{none:?}"));

    // A present empty string or byte string is there, and empty.
    let values =
        [integer(2), absent(), boolean(false), data(b""), TpValue { present: 1, ..absent() }];
    let (status, fake) = run("test/echo", &values, &[], Fake::new());
    assert_eq!(status, abi::TP_OK);
    let empty = Settings {
        piece: 2,
        ratio: None,
        strict: Some(false),
        label: Some(String::new()),
        key: Some(Vec::new()),
    };
    assert_eq!(String::from_utf8(fake.output).unwrap(), format!("|{empty:?}"));
}

#[test]
fn a_refusal_is_reported_through_fail_with_the_kernels_code() {
    let echo = kernel("test/echo");
    let mut fake = Fake::new();
    let values = [integer(1), absent(), absent(), data(b"refuse"), absent()];
    let (status, params) = make_params(echo, &values, &mut fake);
    assert_eq!(status, abi::TP_ERROR);
    assert!(params.is_null(), "a refusal stores nothing");
    assert_eq!(
        fake.failures,
        [("ERR_TEST_REFUSED".to_owned(), "the label 'refuse' is refused".to_owned())]
    );

    // Values that do not match the schema: the SDK's own contract error.
    let mut fake = Fake::new();
    let (status, params) = make_params(echo, &[integer(1)], &mut fake);
    assert_eq!(status, abi::TP_ERROR);
    assert!(params.is_null());
    assert_eq!(fake.failure().map(|f| f.0), Some("ERR_TIDEPOOL_KERNEL_CONTRACT"));
    // So is a start without parameters (this kernel has make_params).
    let mut fake = Fake::new();
    let (status, state) = start(echo, ptr::null(), u64::MAX, &mut fake);
    assert_eq!((status, state.is_null()), (abi::TP_ERROR, true));
    assert_eq!(fake.failure().map(|f| f.0), Some("ERR_TIDEPOOL_KERNEL_CONTRACT"));
}

#[test]
fn zero_sized_parameters_are_a_usable_non_null_pointer() {
    let unit = kernel("test/unit");
    let params = no_params(unit);
    assert!(!params.is_null());
    // Two tasks from the same parameters, with and without a length hint.
    let mut fake = Fake::new();
    let (status, a) = start(unit, params, 5, &mut fake);
    assert_eq!(status, abi::TP_OK);
    let (status, b) = start(unit, params, u64::MAX, &mut fake);
    assert_eq!(status, abi::TP_OK);
    assert!(!a.is_null() && !b.is_null() && a != b);
    assert_eq!(update(unit, a, b"abcde", &mut fake), abi::TP_OK);
    assert_eq!(finish(unit, a, &mut fake), abi::TP_OK);
    assert_eq!(update(unit, b, b"xy", &mut fake), abi::TP_OK);
    assert_eq!(update(unit, b, b"", &mut fake), abi::TP_OK);
    assert_eq!(finish(unit, b, &mut fake), abi::TP_OK);
    drop_state(unit, a);
    drop_state(unit, b);
    drop_params(unit, params);
    let words: Vec<u64> =
        fake.output.chunks(8).map(|w| u64::from_le_bytes(w.try_into().unwrap())).collect();
    assert_eq!(words, [5, 5, 2, u64::MAX], "the counts, and the hint (none is u64::MAX)");
    assert_eq!((fake.writes, fake.checks, fake.failure()), (4, 3, None));
}

#[test]
fn output_goes_through_write_and_unfilled_then_commit() {
    let input: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 256) as u8).collect();
    let (first, rest) = input.split_at(333);
    let (status, fake) = run(
        "test/echo",
        &[integer(64), absent(), absent(), absent(), absent()],
        &[first, b"", rest],
        Fake::new(),
    );
    assert_eq!((status, fake.failure()), (abi::TP_OK, None));
    assert_eq!(&fake.output[..1000], &input[..], "every byte, in order");
    assert!(fake.output[1000..].starts_with(b"|Settings { piece: 64,"));
    // 333 bytes in 64-byte pieces (6), then 667 (11); one write at the end.
    assert_eq!((fake.commits, fake.writes, fake.reserved, fake.checks), (6 + 11, 1, 1000, 3));

    // The limit: unfilled lends what is left, then NULL, which is TP_TOO_LARGE.
    let (status, fake) = run(
        "test/echo",
        &[integer(4), absent(), absent(), absent(), absent()],
        &[b"0123456789"],
        Fake::with_limit(6),
    );
    assert_eq!((status, fake.failure()), (abi::TP_TOO_LARGE, None));
    assert_eq!(fake.output, b"012345");
    // And write refuses what passes it.
    let (status, fake) = run("test/unit", &[], &[b"abc"], Fake::with_limit(12));
    assert_eq!((status, fake.failure()), (abi::TP_TOO_LARGE, None));
    assert_eq!(fake.output, 3u64.to_le_bytes(), "the first write fit, the second did not");

    // A status the SDK does not know from the host is a contract error.
    let mut odd = Fake::new();
    odd.write_status = Some(77);
    let (status, fake) = run("test/unit", &[], &[b"abc"], odd);
    assert_eq!(status, abi::TP_ERROR);
    let (code, message) = fake.failure().unwrap();
    assert_eq!(code, "ERR_TIDEPOOL_KERNEL_CONTRACT");
    assert!(message.contains("77"), "{message}");
}

#[test]
fn check_stops_a_kernel_that_asks() {
    for stop in [abi::TP_CANCELLED, abi::TP_TIMED_OUT] {
        let mut fake = Fake::new();
        fake.check_status = stop;
        let (status, fake) = run("test/unit", &[], &[b"abc", b"def"], fake);
        assert_eq!(status, stop);
        assert_eq!(
            (fake.checks, fake.failure(), fake.output.len()),
            (1, None, 0),
            "stopped at the first check, nothing said through fail"
        );
    }
    let mut fake = Fake::new();
    fake.check_status = abi::TP_CANCELLED;
    let (status, fake) =
        run("test/echo", &[integer(1), absent(), absent(), absent(), absent()], &[b"abc"], fake);
    assert_eq!((status, fake.output.len()), (abi::TP_CANCELLED, 0));
}

#[test]
fn a_panic_is_tp_panic_with_its_message_and_the_state_still_drops() {
    let k = kernel("test/fragile");
    let params = no_params(k);
    let dropped = FRAGILE_STATES_DROPPED.load(Ordering::SeqCst);

    // In update, with a formatted message.
    let mut fake = Fake::new();
    let (status, state) = start(k, params, u64::MAX, &mut fake);
    assert_eq!(status, abi::TP_OK);
    assert_eq!(update(k, state, b"", &mut fake), abi::TP_OK);
    assert_eq!(update(k, state, b"boom", &mut fake), abi::TP_PANIC);
    assert_eq!(fake.failures, [("ERR_TIDEPOOL_PANIC".to_owned(), "fragile: 4 bytes".to_owned())]);
    drop_state(k, state);
    assert_eq!(
        FRAGILE_STATES_DROPPED.load(Ordering::SeqCst),
        dropped + 1,
        "the state that panicked is dropped"
    );

    // A payload that is not text.
    let mut fake = Fake::new();
    let (_, state) = start(k, params, 0, &mut fake);
    assert_eq!(update(k, state, &[0, 1], &mut fake), abi::TP_PANIC);
    assert_eq!(fake.failure(), Some(("ERR_TIDEPOOL_PANIC", "the kernel panicked")));
    drop_state(k, state);
    // In finish, with a `&str` message.
    let (_, state) = start(k, params, 0, &mut fake);
    assert_eq!(finish(k, state, &mut fake), abi::TP_PANIC);
    assert_eq!(fake.failure(), Some(("ERR_TIDEPOOL_PANIC", "fragile finish")));
    drop_state(k, state);
    assert_eq!(FRAGILE_STATES_DROPPED.load(Ordering::SeqCst), dropped + 3);

    // In start: no state.
    let mut fake = Fake::new();
    let (status, state) = start(k, params, 13, &mut fake);
    assert_eq!((status, state.is_null()), (abi::TP_PANIC, true));
    let (code, message) = fake.failure().unwrap();
    assert_eq!(code, "ERR_TIDEPOOL_PANIC");
    assert!(message.contains("unlucky start"), "{message}");
    drop_params(k, params);

    // Without a host nothing can be reported: TP_ERROR, nothing run.
    let params = no_params(k);
    let mut fake = Fake::new();
    let (_, state) = start(k, params, u64::MAX, &mut fake);
    // SAFETY: the kernel's update with a NULL host, which the SDK refuses.
    let status = unsafe { (k.update.unwrap())(state, b"x".as_ptr(), 1, ptr::null()) };
    assert_eq!(status, abi::TP_ERROR);
    drop_state(k, state);
    drop_params(k, params);
}

#[test]
fn drop_state_and_drop_params_run_the_destructors() {
    let k = kernel("test/tracked");
    assert_eq!(size_of::<TrackedParams>(), 0);
    let params = no_params(k);
    assert!(!params.is_null());
    let mut fake = Fake::new();
    let (status, a) = start(k, params, u64::MAX, &mut fake);
    assert_eq!(status, abi::TP_OK);
    let (status, b) = start(k, params, u64::MAX, &mut fake);
    assert_eq!(status, abi::TP_OK);
    assert_eq!(update(k, a, b"x", &mut fake), abi::TP_OK);
    assert_eq!(finish(k, a, &mut fake), abi::TP_OK);
    assert_eq!(fake.output, [1, 2, 3]);
    assert_eq!(
        (
            TRACKED_STATES_DROPPED.load(Ordering::SeqCst),
            TRACKED_PARAMS_DROPPED.load(Ordering::SeqCst)
        ),
        (0, 0)
    );

    drop_state(k, a);
    assert_eq!(TRACKED_STATES_DROPPED.load(Ordering::SeqCst), 1);
    // A state never fed nor finished drops too.
    drop_state(k, b);
    assert_eq!(TRACKED_STATES_DROPPED.load(Ordering::SeqCst), 2);
    assert_eq!(
        TRACKED_PARAMS_DROPPED.load(Ordering::SeqCst),
        0,
        "the parameters outlive their states"
    );
    drop_params(k, params);
    assert_eq!(TRACKED_PARAMS_DROPPED.load(Ordering::SeqCst), 1);

    // NULL is nothing to drop.
    drop_state(k, ptr::null_mut());
    drop_params(k, ptr::null_mut());
    assert_eq!(
        (
            TRACKED_STATES_DROPPED.load(Ordering::SeqCst),
            TRACKED_PARAMS_DROPPED.load(Ordering::SeqCst)
        ),
        (2, 1)
    );
}
