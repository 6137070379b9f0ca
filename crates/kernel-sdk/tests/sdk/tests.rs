//! The tests: the descriptor, parameters, refusals, output, checks,
//! panics and destructors, each through the fake host.

use std::ffi::CStr;
use std::ptr;
use std::sync::atomic::Ordering;

use tidepool_kernel_sdk::abi::{self, TpKernel, TpLibrary, TpValue};
use tidepool_kernel_sdk::{kernel_name, Kernel, Param};

use crate::drive::*;
use crate::host::*;
use crate::kernels::*;

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
