//! The checked shape of a loaded kernel's schema, below the checker
//! (descriptor.rs), the adapter that reads it (adapter.rs) and the hosts
//! lent to its calls (host.rs): a parameter's [`Spec`], and the rules for
//! the names and numbers all three of them say.

/// Longest parameter name or error code.
pub(super) const MAX_CODE: usize = 64;

/// One parameter of a loaded kernel's schema, copied out of the library.
#[derive(Debug)]
pub(super) struct Spec {
    pub(super) name: &'static str,
    pub(super) kind: u32,
    pub(super) required: bool,
    pub(super) int_range: (i64, i64),
    pub(super) num_range: (f64, f64),
    /// What a missing required value is told ("an integer >= 1 and <= 10");
    /// made `'static` by [`Foreign::seal`](super::Foreign::seal).
    pub(super) expected: String,
}

/// `[A-Za-z][A-Za-z0-9_]*`, at most [`MAX_CODE`] bytes.
pub(super) fn valid_identifier(s: &str) -> bool {
    s.len() <= MAX_CODE
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A number as JavaScript writes it (`Infinity`, `1e+300`, `0.5`).
pub(super) fn js_number(n: f64) -> String {
    if n.is_infinite() {
        return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if n != 0.0 && (n.abs() >= 1e21 || n.abs() < 1e-6) {
        let e = format!("{n:e}");
        return match e.split_once('e') {
            Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
            _ => e,
        };
    }
    n.to_string()
}
