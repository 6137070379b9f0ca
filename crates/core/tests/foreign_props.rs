//! Property tests of what the host promises a loaded kernel about its
//! parameters: whatever JavaScript passes, `make_params` sees only values
//! its schema allows (the right kind, integers and numbers within range,
//! every required one present, valid UTF-8 strings), and a descriptor with
//! any schema is either refused whole or checked consistently. The kernel
//! here is hand-written against the raw ABI, as a C kernel would be.

use std::cell::RefCell;
use std::ffi::{c_void, CString};
use std::ptr;

use proptest::prelude::*;
use tidepool_core::kernels::foreign::check_library;
use tidepool_core::kernels::{AnyKernel, ParamError, RawParams, RawValue};
use tidepool_kernel_sdk::abi::{self, TpHost, TpKernel, TpLibrary, TpParamSpec, TpValue};

thread_local! {
    /// The schema of the kernel under test, and the violations its
    /// `make_params` saw.
    static SCHEMA: RefCell<(Vec<TpParamSpec>, Vec<String>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

unsafe extern "C" fn make_params(
    values: *const TpValue,
    count: u32,
    out: *mut *mut c_void,
    _host: *const TpHost,
) -> i32 {
    SCHEMA.with(|s| {
        let (specs, violations) = &mut *s.borrow_mut();
        if count as usize != specs.len() {
            violations.push(format!("{count} values for {} parameters", specs.len()));
            return abi::TP_OK;
        }
        // SAFETY: the host passes `count` live values.
        let values = unsafe { std::slice::from_raw_parts(values, count as usize) };
        for (spec, v) in specs.iter().zip(values) {
            if v.present == 0 {
                if spec.required == 1 {
                    violations.push("a required parameter is absent".into());
                }
                continue;
            }
            let ok = match spec.kind {
                abi::TP_PARAM_INTEGER => (spec.int_min..=spec.int_max).contains(&v.integer),
                abi::TP_PARAM_NUMBER => {
                    !v.number.is_nan() && v.number >= spec.num_min && v.number <= spec.num_max
                }
                abi::TP_PARAM_BOOLEAN => v.boolean <= 1,
                // SAFETY: the host passes a live range.
                abi::TP_PARAM_STRING => std::str::from_utf8(unsafe { bytes(v) }).is_ok(),
                _ => true,
            };
            if !ok {
                violations.push(format!("kind {} got {v:?}", spec.kind));
            }
        }
        // SAFETY: the host's out-pointer.
        unsafe { *out = ptr::null_mut() };
        abi::TP_OK
    })
}

unsafe fn bytes(v: &TpValue) -> &[u8] {
    if v.len == 0 {
        &[]
    } else {
        // SAFETY: the caller's.
        unsafe { std::slice::from_raw_parts(v.data, v.len) }
    }
}

unsafe extern "C" fn start(
    _: *const c_void,
    _: u64,
    out: *mut *mut c_void,
    _: *const TpHost,
) -> i32 {
    // SAFETY: the host's out-pointer.
    unsafe { *out = ptr::null_mut() };
    abi::TP_OK
}
unsafe extern "C" fn update(_: *mut c_void, _: *const u8, _: usize, _: *const TpHost) -> i32 {
    abi::TP_OK
}
unsafe extern "C" fn finish(_: *mut c_void, _: *const TpHost) -> i32 {
    abi::TP_OK
}
unsafe extern "C" fn drop_state(_: *mut c_void) {}

const NAMES: [&str; 4] = ["alpha", "beta", "gamma", "delta"];

fn spec() -> impl Strategy<Value = (u32, bool, i64, i64, f64, f64)> {
    (0u32..=6, any::<bool>(), any::<i64>(), any::<i64>(), any::<f64>(), any::<f64>())
}

fn value() -> impl Strategy<Value = RawValue<'static>> {
    prop_oneof![
        any::<f64>().prop_map(RawValue::Number),
        prop_oneof![
            Just(i64::MIN as i128 - 1),
            Just(u64::MAX as i128),
            any::<i64>().prop_map(i128::from)
        ]
        .prop_map(RawValue::BigInt),
        any::<bool>().prop_map(RawValue::Bool),
        prop_oneof![Just(""), Just("é"), Just("text")].prop_map(RawValue::Text),
        prop_oneof![Just(&b""[..]), Just(&b"\xff\x00"[..])].prop_map(RawValue::Bytes),
        Just(RawValue::Other("object")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn make_params_sees_only_what_the_schema_allows(
        specs in prop::collection::vec(spec(), 0..4),
        given in prop::collection::vec((0usize..5, value()), 0..6),
    ) {
        let names: Vec<CString> = NAMES.iter().map(|n| CString::new(*n).unwrap()).collect();
        let raw_specs: Vec<TpParamSpec> = specs
            .iter()
            .enumerate()
            .map(|(i, &(kind, required, a, b, x, y))| TpParamSpec {
                name: names[i].as_ptr(),
                kind,
                required: u32::from(required),
                int_min: a,
                int_max: b,
                num_min: x,
                num_max: y,
            })
            .collect();
        let kernel = TpKernel {
            name: c"prop/kernel".as_ptr(),
            flags: 0,
            param_count: raw_specs.len() as u32,
            params: raw_specs.as_ptr(),
            make_params: Some(make_params),
            drop_params: None,
            start: Some(start),
            update: Some(update),
            finish: Some(finish),
            drop_state: Some(drop_state),
        };
        let kernels = [kernel];
        let library = TpLibrary {
            abi_version: abi::ABI_VERSION,
            size: size_of::<TpLibrary>() as u32,
            kernel_count: 1,
            kernel_size: size_of::<TpKernel>() as u32,
            kernels: kernels.as_ptr(),
        };
        // SAFETY: a descriptor of this test, alive for the whole case.
        let checked = unsafe { check_library(&library) };
        // Refused exactly when a kind is unknown or a range is empty (or NaN).
        let refused = raw_specs.iter().any(|s| match s.kind {
            abi::TP_PARAM_INTEGER => s.int_min > s.int_max,
            abi::TP_PARAM_NUMBER => s.num_min.partial_cmp(&s.num_max).is_none_or(|o| o.is_gt()),
            k => k == 0 || k > abi::TP_PARAM_BYTES,
        });
        prop_assert_eq!(checked.is_err(), refused, "{:?}", checked.as_ref().err());
        let Ok(mut kernels) = checked else { return Ok(()) };
        let mut foreign = kernels.pop().unwrap();
        SCHEMA.with(|s| *s.borrow_mut() = (raw_specs.clone(), Vec::new()));
        foreign.seal(); // as the registry does (it makes the defaults: no values)
        let raw = RawParams::new(given.iter().map(|(n, v)| (NAMES.get(*n).copied().unwrap_or("other"), *v)).collect());
        let result = foreign.params(&raw);
        let violations = SCHEMA.with(|s| std::mem::take(&mut s.borrow_mut().1));
        prop_assert!(violations.is_empty(), "{violations:?}");
        if let Err(e) = &result {
            prop_assert!(!matches!(e, ParamError::Refused { .. }), "this kernel refuses nothing: {e}");
        }
    }
}
