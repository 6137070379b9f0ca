//! Kernel parameters from JavaScript.
//!
//! `makeParams(kernel, names, values, once)` hands the values (lib/args/params.js
//! has already read them off the user's object into an Array of its own, so
//! no getter runs here) to the kernel's check, synchronously: a bad level or
//! key throws from `post()`, naming the parameter. What it returns is an
//! opaque handle (an External, type-tagged so that no other External can be
//! passed off as one) that `submit` takes as its `params` argument.
//!
//! A handle made for one post (`once`) gives its parameters up to the task
//! it is submitted with, so a key lives as long as that task, not until the
//! handle is collected; a pool's default handle is shared by every task.
//! Keys are copied here, once, into the kernel's own zeroizing storage.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

use napi::sys;
use tidepool_core::kernels::{KernelId, ParamError, Params, RawParams, RawValue};

use crate::binary;
use crate::wire::{MakeParamsArgs, Refusal, ERR_INVALID_ARG_TYPE, ERR_TIDEPOOL_INTERNAL};

/// The tag that marks our handles (random, fixed).
const TAG: sys::napi_type_tag =
    sys::napi_type_tag { lower: 0x5d1c_93a7_4be0_2f61, upper: 0xa4e8_07c2_9b35_d14e };

/// What a handle holds.
struct Handle {
    kernel: KernelId,
    /// Taken by the task a `once` handle is submitted with.
    params: RefCell<Option<Params>>,
    once: bool,
}

/// One value as read off the snapshot Array, owning its bytes.
enum Owned {
    Number(f64),
    BigInt(i128),
    Bool(bool),
    Text(zeroize::Zeroizing<String>),
    Bytes(zeroize::Zeroizing<Vec<u8>>),
    Other(&'static str),
}

impl Owned {
    fn raw(&self) -> RawValue<'_> {
        match self {
            Owned::Number(n) => RawValue::Number(*n),
            Owned::BigInt(b) => RawValue::BigInt(*b),
            Owned::Bool(b) => RawValue::Bool(*b),
            Owned::Text(t) => RawValue::Text(t.as_str()),
            Owned::Bytes(b) => RawValue::Bytes(b),
            Owned::Other(name) => RawValue::Other(name),
        }
    }
}

fn bad_call() -> Refusal {
    MakeParamsArgs::usage()
}

/// `makeParams(kernel, names, values, once)` (see [`MakeParamsArgs`]): a
/// handle, or, when the kernel refuses the parameters, an Array `[kind,
/// name, expected]` for lib/args/params.js to turn into Node's error (it has the
/// value to show).
pub unsafe extern "C" fn make_params_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = MakeParamsArgs::COUNT;
    let mut argv = [ptr::null_mut(); MakeParamsArgs::COUNT];
    // SAFETY: live env and callback info of this call; out-pointers to locals.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok {
        bad_call().throw(env);
        return ptr::null_mut();
    }
    // SAFETY: the arguments passed (`argc` may count more than were read)
    // are live values of this call.
    match unsafe {
        MakeParamsArgs::read(env, &argv[..argc.min(MakeParamsArgs::COUNT)])
            .and_then(|args| make_params(env, &args))
    } {
        Ok(value) => value,
        Err(refusal) => {
            refusal.throw(env);
            ptr::null_mut()
        }
    }
}

/// # Safety
/// `env` must be the live env of the current call, and `args` read from its
/// arguments.
unsafe fn make_params(
    env: sys::napi_env,
    args: &MakeParamsArgs,
) -> Result<sys::napi_value, Refusal> {
    // SAFETY: live env and values.
    let names = unsafe { strings(env, args.names) }?;
    // SAFETY: live env and values.
    let values = unsafe { owned_values(env, args.values) }?;
    if names.len() != values.len() {
        return Err(bad_call());
    }
    let raw = RawParams::new(
        names.iter().map(String::as_str).zip(values.iter().map(Owned::raw)).collect(),
    );
    match args.kernel.params(&raw) {
        // SAFETY: live env.
        Ok(params) => unsafe {
            handle(
                env,
                Handle { kernel: args.id, params: RefCell::new(Some(params)), once: args.once },
            )
        },
        // SAFETY: live env.
        Err(e) => unsafe { refusal(env, &e) },
    }
}

/// The kernel's refusal as `[kind, name, expected]`.
///
/// # Safety
/// `env` must be the live env of the current call.
unsafe fn refusal(env: sys::napi_env, e: &ParamError) -> Result<sys::napi_value, Refusal> {
    let (kind, name, expected): (&str, &str, String) = match e {
        ParamError::Unknown { name, known } => ("unknown", name, known.join(", ")),
        ParamError::Type { name, expected, .. } => ("type", name, (*expected).to_owned()),
        ParamError::Range { name, expected, .. } => ("range", name, expected.clone()),
        ParamError::Value { name, expected, .. } => ("value", name, expected.clone()),
        ParamError::Missing { name, expected } => ("missing", name, (*expected).to_owned()),
        ParamError::Refused { message } => ("refused", "", message.clone()),
    };
    let mut array = ptr::null_mut();
    // SAFETY: live env; out-pointers to locals; strings passed with their length.
    unsafe {
        sys::napi_create_array_with_length(env, 3, &mut array);
        for (i, text) in [kind, name, expected.as_str()].into_iter().enumerate() {
            let mut s = ptr::null_mut();
            sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut s);
            sys::napi_set_element(env, array, i as u32, s);
        }
    }
    Ok(array)
}

/// Wraps `handle` in a tagged External that frees it when collected.
///
/// # Safety
/// `env` must be the live env of the current call.
unsafe fn handle(env: sys::napi_env, handle: Handle) -> Result<sys::napi_value, Refusal> {
    let data = Box::into_raw(Box::new(handle));
    let mut external = ptr::null_mut();
    // SAFETY: live env; `data` is a leaked Box that `drop_handle` frees
    // exactly once, when the External is collected (or now, if not made).
    unsafe {
        if sys::napi_create_external(
            env,
            data.cast(),
            Some(drop_handle),
            ptr::null_mut(),
            &mut external,
        ) != sys::Status::napi_ok
        {
            drop(Box::from_raw(data));
            return Err(Refusal::new(ERR_TIDEPOOL_INTERNAL, "could not make a parameters handle"));
        }
        sys::napi_type_tag_object(env, external, &TAG);
    }
    Ok(external)
}

unsafe extern "C" fn drop_handle(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Box::into_raw` in `handle`; finalizers run once.
    drop(unsafe { Box::from_raw(data as *mut Handle) });
}

/// The parameters a handle gives the task it is submitted with, checked to
/// be made for `kernel`.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
pub unsafe fn take(
    env: sys::napi_env,
    value: sys::napi_value,
    kernel: KernelId,
) -> Result<Params, Refusal> {
    let invalid = || {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "submit: the parameters must be a handle from makeParams",
        )
    };
    let mut tagged = false;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: live env/value; out-pointers to locals. The tag check comes
    // first: only then is the External's data known to be one of ours.
    unsafe {
        if sys::napi_check_object_type_tag(env, value, &TAG, &mut tagged) != sys::Status::napi_ok
            || !tagged
        {
            return Err(invalid());
        }
        if sys::napi_get_value_external(env, value, &mut data) != sys::Status::napi_ok
            || data.is_null()
        {
            return Err(invalid());
        }
    }
    // SAFETY: a tagged External's data is a live `Handle` (made by `handle`,
    // freed only by its finalizer, which cannot run while `value` is in use).
    let handle = unsafe { &*(data as *const Handle) };
    if handle.kernel != kernel {
        return Err(Refusal::new(
            ERR_TIDEPOOL_INTERNAL,
            "submit: parameters made for another kernel",
        ));
    }
    let params = handle.params.borrow().clone();
    params.ok_or_else(|| {
        Refusal::new(ERR_TIDEPOOL_INTERNAL, "submit: these parameters were already used")
    })
}

/// After a successful submit: a `once` handle lets go of its parameters
/// (the task now holds the only reference). Not done in [`take`], so that a
/// post refused by a full queue can be submitted again with the same handle.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call,
/// one [`take`] accepted.
pub unsafe fn release(env: sys::napi_env, value: sys::napi_value) {
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: live env/value, a tagged External (checked by `take`).
    if unsafe { sys::napi_get_value_external(env, value, &mut data) } != sys::Status::napi_ok
        || data.is_null()
    {
        return;
    }
    // SAFETY: as in `take`.
    let handle = unsafe { &*(data as *const Handle) };
    if handle.once {
        handle.params.borrow_mut().take();
    }
}

/// The strings of an Array.
///
/// # Safety
/// `env` and `array` must be valid for the current call.
unsafe fn strings(env: sys::napi_env, array: sys::napi_value) -> Result<Vec<String>, Refusal> {
    let mut len = 0u32;
    // SAFETY: live env/value, out-pointer to a local.
    if unsafe { sys::napi_get_array_length(env, array, &mut len) } != sys::Status::napi_ok {
        return Err(bad_call());
    }
    (0..len)
        .map(|i| {
            let mut element = ptr::null_mut();
            // SAFETY: live env/value, index in bounds; lib/args/params.js's own Array.
            if unsafe { sys::napi_get_element(env, array, i, &mut element) } != sys::Status::napi_ok
            {
                return Err(bad_call());
            }
            // SAFETY: live env/value.
            unsafe { string(env, element) }.ok_or_else(bad_call)
        })
        .collect()
}

/// A JS string as UTF-8; `None` if `value` is not a string.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn string(env: sys::napi_env, value: sys::napi_value) -> Option<String> {
    let mut len = 0usize;
    // SAFETY: live env/value; a null buffer asks for the length only.
    if unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len) }
        != sys::Status::napi_ok
    {
        return None;
    }
    let mut bytes = vec![0u8; len + 1];
    let mut written = 0usize;
    // SAFETY: `bytes` has room for `len` bytes and the NUL N-API adds.
    unsafe {
        sys::napi_get_value_string_utf8(
            env,
            value,
            bytes.as_mut_ptr().cast(),
            len + 1,
            &mut written,
        )
    };
    bytes.truncate(written);
    // N-API writes valid UTF-8 (lone surrogates become U+FFFD).
    String::from_utf8(bytes).ok()
}

/// The values of an Array, each copied out of JS memory.
///
/// # Safety
/// `env` and `array` must be valid for the current call.
unsafe fn owned_values(env: sys::napi_env, array: sys::napi_value) -> Result<Vec<Owned>, Refusal> {
    let mut len = 0u32;
    // SAFETY: live env/value, out-pointer to a local.
    if unsafe { sys::napi_get_array_length(env, array, &mut len) } != sys::Status::napi_ok {
        return Err(bad_call());
    }
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut element = ptr::null_mut();
        // SAFETY: live env/value, index in bounds; lib/args/params.js's own Array.
        if unsafe { sys::napi_get_element(env, array, i, &mut element) } != sys::Status::napi_ok {
            return Err(bad_call());
        }
        // SAFETY: live env/value.
        out.push(unsafe { owned(env, element) });
    }
    Ok(out)
}

/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn owned(env: sys::napi_env, value: sys::napi_value) -> Owned {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: (whole block) live env/value; out-pointers to locals; each
    // getter is called only for a value of its type.
    unsafe {
        sys::napi_typeof(env, value, &mut kind);
        match kind {
            sys::ValueType::napi_number => {
                let mut n = 0.0;
                sys::napi_get_value_double(env, value, &mut n);
                Owned::Number(n)
            }
            sys::ValueType::napi_boolean => {
                let mut b = false;
                sys::napi_get_value_bool(env, value, &mut b);
                Owned::Bool(b)
            }
            // A string may be a key: its copy is wiped too.
            sys::ValueType::napi_string => string(env, value)
                .map_or(Owned::Other("string"), |t| Owned::Text(zeroize::Zeroizing::new(t))),
            sys::ValueType::napi_bigint => Owned::BigInt(bigint(env, value)),
            sys::ValueType::napi_object => match binary::slice_of(env, value) {
                // Copied at once: no JavaScript runs between the read and the
                // copy, so the memory cannot be detached or resized under it.
                Ok(slice) => Owned::Bytes(zeroize::Zeroizing::new(slice.as_slice().to_vec())),
                Err(_) => Owned::Other("object"),
            },
            sys::ValueType::napi_undefined => Owned::Other("undefined"),
            sys::ValueType::napi_null => Owned::Other("null"),
            sys::ValueType::napi_function => Owned::Other("function"),
            sys::ValueType::napi_symbol => Owned::Other("symbol"),
            _ => Owned::Other("object"),
        }
    }
}

/// A BigInt as i128, saturating (a kernel's range check refuses it then).
///
/// # Safety
/// `env` and `value` (a BigInt) must be valid for the current call.
unsafe fn bigint(env: sys::napi_env, value: sys::napi_value) -> i128 {
    let mut count = 0usize;
    // SAFETY: live env/value; null sign and words pointers ask for the word
    // count only (N-API refuses a sign pointer without a words buffer).
    unsafe {
        sys::napi_get_value_bigint_words(env, value, ptr::null_mut(), &mut count, ptr::null_mut())
    };
    let mut sign = 0i32;
    let mut words = [0u64; 2];
    let mut n = words.len();
    // SAFETY: `words` has room for `n` words; N-API writes at most that many.
    unsafe { sys::napi_get_value_bigint_words(env, value, &mut sign, &mut n, words.as_mut_ptr()) };
    let magnitude = if count > 2 || words[1] >> 63 != 0 {
        i128::MAX
    } else {
        (i128::from(words[1]) << 64) | i128::from(words[0])
    };
    if sign != 0 {
        -magnitude
    } else {
        magnitude
    }
}
