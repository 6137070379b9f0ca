//! `include/tidepool_kernel.h` against `src/abi.rs`: a C file generated here
//! from the Rust definitions (every struct's size, every field's offset,
//! size and type, every constant) is compiled with the system's C compiler
//! as C11 and as C++11, so the header and the Rust ABI cannot drift apart.
//!
//! Without a C compiler the checks are skipped with a note, unless `CI` is
//! set: there a missing compiler fails the test.

use std::ffi::{c_char, c_void};
use std::fmt::Write as _;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;

use tidepool_kernel_sdk::abi::{self, TpHost, TpKernel, TpLibrary, TpParamSpec, TpValue};

/// The directory holding `tidepool_kernel.h`.
fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include")
}

/// The C spelling of a Rust type of the ABI, as an abstract declarator
/// (what `_Generic` and `std::is_same` take). Pointers are written with the
/// qualifier after the pointee (`uint8_t const *`), which composes without
/// parentheses.
trait CType {
    fn c() -> String;
}

macro_rules! c_types {
    ($($t:ty => $c:literal),* $(,)?) => {$(
        impl CType for $t {
            fn c() -> String {
                $c.to_owned()
            }
        }
    )*};
}

c_types! {
    () => "void",
    c_void => "void",
    u8 => "uint8_t",
    u32 => "uint32_t",
    i32 => "int32_t",
    u64 => "uint64_t",
    i64 => "int64_t",
    f64 => "double",
    usize => "size_t",
    TpLibrary => "tp_library",
    TpKernel => "tp_kernel",
    TpParamSpec => "tp_param_spec",
    TpValue => "tp_value",
    TpHost => "tp_host",
}

impl<T: CType> CType for *const T {
    fn c() -> String {
        format!("{} const *", T::c())
    }
}

impl<T: CType> CType for *mut T {
    fn c() -> String {
        format!("{} *", T::c())
    }
}

/// `Option<fn>` is a nullable function pointer: the same C type.
impl<F: CType> CType for Option<F> {
    fn c() -> String {
        F::c()
    }
}

macro_rules! c_fn_types {
    ($($a:ident),*) => {
        impl<R: CType $(, $a: CType)*> CType for unsafe extern "C" fn($($a),*) -> R {
            fn c() -> String {
                let args: Vec<String> = vec![$($a::c()),*];
                let args = if args.is_empty() { "void".to_owned() } else { args.join(", ") };
                format!("{} (*)({args})", R::c())
            }
        }
    };
}

c_fn_types!();
c_fn_types!(A);
c_fn_types!(A, B);
c_fn_types!(A, B, C);
c_fn_types!(A, B, C, D);
c_fn_types!(A, B, C, D, E);

/// The size and C type of the field `_field` selects.
fn field<S, F: CType>(_field: fn(&S) -> &F) -> (usize, String) {
    (size_of::<F>(), F::c())
}

/// The same for a C string field: `c_char` is `i8` or `u8` depending on the
/// target, so it cannot have a C spelling of its own (`char` is neither
/// `int8_t` nor `uint8_t` to a C compiler).
fn c_string<S>(_field: fn(&S) -> &*const c_char) -> (usize, String) {
    (size_of::<*const c_char>(), "char const *".to_owned())
}

/// One assertion per line of the generated file.
struct Checks {
    lines: Vec<String>,
    /// How many fields were checked (to make sure the macro ran).
    fields: usize,
}

impl Checks {
    fn assert(&mut self, condition: String, what: &str) {
        // The message is a C string literal: `what` never holds quotes or backslashes.
        assert!(!what.contains(['"', '\\']), "{what}");
        self.lines.push(format!("TP_ASSERT({condition}, \"{what}\");"));
    }
}

/// Asserts the size and alignment of struct `$s` (C name `$c`) and the
/// offset, size and type of each field (`name as c_string` for a C string).
/// The field list must name every field: the destructuring below fails to
/// compile when `abi.rs` gains one.
macro_rules! check_struct {
    (@info $s:ident $f:ident) => { field(|s: &$s| &s.$f) };
    (@info $s:ident $f:ident $how:ident) => { $how(|s: &$s| &s.$f) };
    ($checks:expr, $s:ident as $c:literal { $($f:ident $(as $how:ident)?),+ $(,)? }) => {{
        let _every_field_is_listed = |s: &$s| {
            let $s { $($f: _),+ } = s;
        };
        let checks: &mut Checks = $checks;
        checks.assert(format!("sizeof({}) == {}", $c, size_of::<$s>()), concat!("sizeof(", $c, ")"));
        checks.assert(format!("TP_ALIGNOF({}) == {}", $c, align_of::<$s>()), concat!("alignment of ", $c));
        $(
            let (size, ty) = check_struct!(@info $s $f $($how)?);
            let member = format!("((({} *)0)->{})", $c, stringify!($f));
            let what = concat!($c, ".", stringify!($f));
            checks.assert(format!("offsetof({}, {}) == {}", $c, stringify!($f), std::mem::offset_of!($s, $f)), &format!("offset of {what}"));
            checks.assert(format!("sizeof{member} == {size}"), &format!("size of {what}"));
            checks.assert(format!("TP_SAME_TYPE({member}, {ty})"), &format!("type of {what} is {ty}"));
            checks.fields += 1;
        )+
    }};
}

/// The C file: the header included (twice, for its guard) and every check.
fn generated_source() -> String {
    let mut checks = Checks { lines: Vec::new(), fields: 0 };
    check_struct!(&mut checks, TpLibrary as "tp_library" { abi_version, size, kernel_count, kernel_size, kernels });
    check_struct!(&mut checks, TpKernel as "tp_kernel" {
        name as c_string, flags, param_count, params, make_params, drop_params, start, update, finish, drop_state,
    });
    check_struct!(&mut checks, TpParamSpec as "tp_param_spec" { name as c_string, kind, required, int_min, int_max, num_min, num_max });
    check_struct!(&mut checks, TpValue as "tp_value" { present, boolean, integer, number, data, len });
    check_struct!(&mut checks, TpHost as "tp_host" { size, reserved, ctx, fail, write, unfilled, commit, reserve, check });
    assert_eq!(checks.fields, 5 + 10 + 7 + 6 + 9);

    // The function pointer typedefs and the entry point.
    let typedefs = [
        ("tp_make_params_fn", <abi::MakeParamsFn as CType>::c()),
        ("tp_drop_fn", <abi::DropFn as CType>::c()),
        ("tp_start_fn", <abi::StartFn as CType>::c()),
        ("tp_update_fn", <abi::UpdateFn as CType>::c()),
        ("tp_finish_fn", <abi::FinishFn as CType>::c()),
        ("tp_entry_point_fn", <abi::EntryPoint as CType>::c()),
    ];
    for (name, ty) in typedefs {
        checks.assert(format!("TP_SAME_TYPE((({name})0), {ty})"), &format!("{name} is {ty}"));
    }
    let entry = abi::ENTRY_SYMBOL;
    checks.assert(
        format!("TP_SAME_TYPE(&{entry}, {})", <abi::EntryPoint as CType>::c()),
        &format!("{entry} is declared as an entry point"),
    );

    // The constants.
    let constants: [(&str, String); 16] = [
        ("TIDEPOOL_KERNEL_ABI_VERSION", abi::ABI_VERSION.to_string()),
        ("TP_OK", abi::TP_OK.to_string()),
        ("TP_ERROR", abi::TP_ERROR.to_string()),
        ("TP_CANCELLED", abi::TP_CANCELLED.to_string()),
        ("TP_TIMED_OUT", abi::TP_TIMED_OUT.to_string()),
        ("TP_TOO_LARGE", abi::TP_TOO_LARGE.to_string()),
        ("TP_PANIC", abi::TP_PANIC.to_string()),
        ("TP_KERNEL_EXPANDS", abi::TP_KERNEL_EXPANDS.to_string()),
        ("TP_PARAM_INTEGER", abi::TP_PARAM_INTEGER.to_string()),
        ("TP_PARAM_NUMBER", abi::TP_PARAM_NUMBER.to_string()),
        ("TP_PARAM_BOOLEAN", abi::TP_PARAM_BOOLEAN.to_string()),
        ("TP_PARAM_STRING", abi::TP_PARAM_STRING.to_string()),
        ("TP_PARAM_BYTES", abi::TP_PARAM_BYTES.to_string()),
        // start's `len_hint` for an unknown length (`u64::MAX` in the SDK).
        ("TP_LEN_HINT_UNKNOWN", format!("{}ULL", u64::MAX)),
        ("TIDEPOOL_KERNEL_NAPI_TYPE_TAG_LOWER", format!("{:#x}ULL", abi::NAPI_TYPE_TAG.0)),
        ("TIDEPOOL_KERNEL_NAPI_TYPE_TAG_UPPER", format!("{:#x}ULL", abi::NAPI_TYPE_TAG.1)),
    ];
    for (name, value) in constants {
        checks.assert(format!("{name} == {value}"), &format!("{name} is {value}"));
    }
    // The name of the entry point: its length in C (a string literal's
    // characters are not constant expressions there), every character in C++.
    checks.assert(
        format!("sizeof(TIDEPOOL_KERNEL_ENTRY) == {}", entry.len() + 1),
        "length of TIDEPOOL_KERNEL_ENTRY",
    );
    let mut chars = String::new();
    for (i, c) in entry.chars().enumerate() {
        assert!(c.is_ascii_alphanumeric() || c == '_');
        let _ = writeln!(chars, "static_assert(TIDEPOOL_KERNEL_ENTRY[{i}] == '{c}', \"TIDEPOOL_KERNEL_ENTRY is {entry}\");");
    }

    format!(
        r#"/* Generated by crates/kernel-sdk/tests/header.rs: the header checked against abi.rs. */
#include "tidepool_kernel.h"
#include "tidepool_kernel.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include <type_traits>
#define TP_ASSERT(condition, what) static_assert(condition, what)
#define TP_SAME_TYPE(expr, ...) (std::is_same<std::remove_reference<decltype(expr)>::type, __VA_ARGS__>::value)
#define TP_ALIGNOF(type) alignof(type)
#else
#define TP_ASSERT(condition, what) _Static_assert(condition, what)
#define TP_SAME_TYPE(expr, ...) _Generic((expr), __VA_ARGS__: 1, default: 0)
#define TP_ALIGNOF(type) _Alignof(type)
#endif

#ifdef __cplusplus
extern "C" {{
#endif

{}

#ifdef __cplusplus
{chars}#endif

#ifdef __cplusplus
}} /* extern "C" */
#endif
"#,
        checks.lines.join("\n")
    )
}

/// A compiler command: the program named by `$var` (words split on white
/// space, so `CC="gcc -m32"` works), or `default`.
fn compiler(var: &str, default: &str) -> Command {
    let words: Vec<String> = match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v.split_whitespace().map(str::to_owned).collect(),
        _ => vec![default.to_owned()],
    };
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// Runs `cmd`; `false` when its program does not exist (a skip, outside CI).
fn compiles(mut cmd: Command, what: &str, source: &str) -> bool {
    let shown = format!("{cmd:?}");
    match cmd.output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => panic!(
            "{what} failed ({}):\n{shown}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- the generated file ---\n{source}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            assert!(std::env::var_os("CI").is_none(), "{what}: no compiler ({shown}: {e}), and CI is set");
            eprintln!("note: {what} skipped: no compiler ({shown}: {e})");
            false
        }
        Err(e) => panic!("{what}: could not run {shown}: {e}"),
    }
}

/// A fresh directory under the system's temporary one, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("tidepool-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const WARNINGS: [&str; 4] = ["-Wall", "-Wextra", "-Werror", "-pedantic"];

#[test]
fn the_header_declares_the_same_abi_as_abi_rs() {
    let include = include_dir();
    assert!(include.join("tidepool_kernel.h").is_file(), "no header at {}", include.display());
    let source = generated_source();
    let dir = TempDir::new("header");
    let file = dir.0.join("header_check.c");
    std::fs::write(&file, &source).expect("the generated file is written");

    let mut c = compiler("CC", "cc");
    c.arg("-std=c11").args(WARNINGS).arg("-fsyntax-only").arg("-I").arg(&include).arg(&file);
    compiles(c, "the header as C11", &source);

    let mut cxx = compiler("CXX", "c++");
    cxx.arg("-std=c++11")
        .args(WARNINGS)
        .arg("-fsyntax-only")
        .arg("-I")
        .arg(&include)
        .arg("-x")
        .arg("c++")
        .arg(&file);
    compiles(cxx, "the header as C++11", &source);
}

/// The generated checks are what they claim (a check that cannot fail would
/// hide drift): a few of them, spelled out.
#[test]
fn the_generated_checks_spell_the_abi() {
    let source = generated_source();
    let has = |line: &str| assert!(source.contains(line), "missing: {line}\n{source}");
    has(&format!("TP_ASSERT(sizeof(tp_host) == {}, \"sizeof(tp_host)\");", size_of::<TpHost>()));
    has(&format!(
        "TP_ASSERT(offsetof(tp_kernel, drop_state) == {}, ",
        std::mem::offset_of!(TpKernel, drop_state)
    ));
    has("TP_ASSERT(TP_SAME_TYPE((((tp_param_spec *)0)->int_min), int64_t), ");
    has("TP_ASSERT(TP_SAME_TYPE(((tp_start_fn)0), int32_t (*)(void const *, uint64_t, void * *, tp_host const *)), ");
    has("TP_ASSERT(TP_SAME_TYPE((((tp_host *)0)->unfilled), uint8_t * (*)(void *, size_t, size_t *)), ");
    has("TP_ASSERT(TP_SAME_TYPE((((tp_kernel *)0)->name), char const *), ");
    has("TP_ASSERT(TP_PANIC == 5, \"TP_PANIC is 5\");");
    has("static_assert(TIDEPOOL_KERNEL_ENTRY[18] == '1', ");
}

/// The C example kernel compiles against the header without a warning.
#[test]
fn the_c_example_compiles_against_the_header() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kernels/c/wc.c");
    assert!(example.is_file(), "no example at {}", example.display());
    let mut c = compiler("CC", "cc");
    c.arg("-std=c11")
        .args(WARNINGS)
        .arg("-fsyntax-only")
        .arg("-I")
        .arg(include_dir())
        .arg(&example);
    compiles(c, "examples/kernels/c/wc.c", "(examples/kernels/c/wc.c)");
}
