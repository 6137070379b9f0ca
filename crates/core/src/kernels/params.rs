//! Kernel parameters: what arrives from JavaScript ([`RawParams`], a flat
//! list of named values), what a kernel makes of it once when a task or a
//! stream is created (its own typed value), and how that value travels with
//! the task ([`Params`], type-erased and shared).
//!
//! A kernel checks its parameters in `Kernel::params`, so a bad level or a
//! key of the wrong length is refused synchronously by `post()`, naming the
//! parameter, and never reaches a worker thread.

use std::any::Any;
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::Arc;

/// One parameter value as JavaScript gave it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawValue<'a> {
    Number(f64),
    BigInt(i128),
    Bool(bool),
    Text(&'a str),
    Bytes(&'a [u8]),
    /// A value no kernel takes (an object, a function, null...), by its type's name.
    Other(&'static str),
}

impl RawValue<'_> {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            RawValue::Number(_) => "number",
            RawValue::BigInt(_) => "bigint",
            RawValue::Bool(_) => "boolean",
            RawValue::Text(_) => "string",
            RawValue::Bytes(_) => "binary",
            RawValue::Other(name) => name,
        }
    }
}

/// The parameters given for one task or stream, unchecked.
#[derive(Debug, Clone, Default)]
pub struct RawParams<'a> {
    entries: Vec<(&'a str, RawValue<'a>)>,
}

/// Why parameters were refused; each names the parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamError {
    /// A name the kernel does not take (`known` lists the ones it does).
    Unknown { name: String, known: &'static [&'static str] },
    /// A value of the wrong type (`expected` reads like "an integer").
    Type { name: &'static str, expected: &'static str, got: &'static str },
    /// A number outside what the kernel accepts (`expected` reads like ">= 0 and <= 9").
    Range { name: &'static str, expected: String, got: String },
    /// A value of the right type the kernel does not accept (a hash name it
    /// does not know, a key of the wrong length); `expected` reads like
    /// "one of 'sha256', 'sha512'".
    Value { name: &'static str, expected: String, got: String },
    /// A parameter the kernel cannot do without.
    Missing { name: &'static str, expected: &'static str },
    /// A loaded kernel refused the values, in its own words (its schema's
    /// checks, which name the parameter, passed).
    Refused { message: String },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Unknown { name, known: [] } => {
                write!(f, "unknown parameter \"{name}\": this kernel takes no parameters")
            }
            ParamError::Unknown { name, known } => {
                write!(f, "unknown parameter \"{name}\" (this kernel takes {})", known.join(", "))
            }
            ParamError::Type { name, expected, got } => {
                write!(f, "the parameter \"{name}\" must be {expected}; received {got}")
            }
            ParamError::Range { name, expected, got }
            | ParamError::Value { name, expected, got } => {
                write!(f, "the parameter \"{name}\" must be {expected}; received {got}")
            }
            ParamError::Missing { name, expected } => {
                write!(f, "the parameter \"{name}\" is required: {expected}")
            }
            ParamError::Refused { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for ParamError {}

impl<'a> RawParams<'a> {
    /// No parameters.
    pub const fn none() -> RawParams<'a> {
        RawParams { entries: Vec::new() }
    }

    /// Parameters from `(name, value)` pairs.
    pub fn new(entries: Vec<(&'a str, RawValue<'a>)>) -> RawParams<'a> {
        RawParams { entries }
    }

    /// Fails on the first name not in `known`.
    pub fn only(&self, known: &'static [&'static str]) -> Result<(), ParamError> {
        match self.entries.iter().find(|(name, _)| !known.contains(name)) {
            Some((name, _)) => Err(ParamError::Unknown { name: (*name).to_owned(), known }),
            None => Ok(()),
        }
    }

    /// The value named `name`, if given.
    pub fn get(&self, name: &str) -> Option<RawValue<'a>> {
        self.entries.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// An integer parameter within `range`: a number with no fraction, or a
    /// bigint. `None` when not given.
    pub fn integer(
        &self,
        name: &'static str,
        range: RangeInclusive<i128>,
    ) -> Result<Option<i128>, ParamError> {
        let value = match self.get(name) {
            None => return Ok(None),
            Some(RawValue::Number(n)) if n.fract() == 0.0 && n.is_finite() => n as i128,
            Some(RawValue::BigInt(b)) => b,
            Some(RawValue::Number(n)) => {
                return Err(ParamError::Range {
                    name,
                    expected: "an integer".into(),
                    got: n.to_string(),
                });
            }
            Some(other) => {
                return Err(ParamError::Type {
                    name,
                    expected: "of type number or bigint",
                    got: other.type_name(),
                })
            }
        };
        if !range.contains(&value) {
            let expected = format!(">= {} and <= {}", range.start(), range.end());
            return Err(ParamError::Range { name, expected, got: value.to_string() });
        }
        Ok(Some(value))
    }

    /// Bytes: a binary as given, or a string as its UTF-8 bytes (as
    /// `crypto.createHmac` takes a string key). `None` when not given.
    pub fn bytes(&self, name: &'static str) -> Result<Option<&'a [u8]>, ParamError> {
        match self.get(name) {
            None => Ok(None),
            Some(RawValue::Bytes(b)) => Ok(Some(b)),
            Some(RawValue::Text(t)) => Ok(Some(t.as_bytes())),
            Some(other) => Err(ParamError::Type {
                name,
                expected: "of type string or an instance of Buffer, TypedArray or DataView",
                got: other.type_name(),
            }),
        }
    }

    /// A string. `None` when not given.
    pub fn text(&self, name: &'static str) -> Result<Option<&'a str>, ParamError> {
        match self.get(name) {
            None => Ok(None),
            Some(RawValue::Text(t)) => Ok(Some(t)),
            Some(other) => {
                Err(ParamError::Type { name, expected: "of type string", got: other.type_name() })
            }
        }
    }

    /// A boolean. `None` when not given.
    pub fn boolean(&self, name: &'static str) -> Result<Option<bool>, ParamError> {
        match self.get(name) {
            None => Ok(None),
            Some(RawValue::Bool(b)) => Ok(Some(b)),
            Some(other) => {
                Err(ParamError::Type { name, expected: "of type boolean", got: other.type_name() })
            }
        }
    }

    /// One of a fixed set of names, as the value it stands for. `None` when not given.
    pub fn choice<T: Copy>(
        &self,
        name: &'static str,
        choices: &[(&'static str, T)],
    ) -> Result<Option<T>, ParamError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        match choices.iter().find(|(n, _)| *n == text) {
            Some((_, value)) => Ok(Some(*value)),
            None => {
                let names: Vec<String> = choices.iter().map(|(n, _)| format!("'{n}'")).collect();
                Err(ParamError::Value {
                    name,
                    expected: format!("one of {}", names.join(", ")),
                    got: format!("'{text}'"),
                })
            }
        }
    }
}

/// `value`, or [`ParamError::Missing`] naming `name` when it was not given.
pub fn required<T>(
    value: Option<T>,
    name: &'static str,
    expected: &'static str,
) -> Result<T, ParamError> {
    value.ok_or(ParamError::Missing { name, expected })
}

/// The parameter check of a kernel that takes none.
pub(crate) fn no_params(raw: &RawParams<'_>) -> Result<(), ParamError> {
    raw.only(&[])
}

/// A kernel's checked parameters, type-erased so every task can carry them
/// whatever the kernel. Kernels without parameters (type `()`) carry none:
/// no allocation per task. Cloning shares the value (a stream's tasks and a
/// pool's default parameters reuse one).
#[derive(Clone, Default)]
pub struct Params(Option<Arc<dyn Any + Send + Sync>>);

impl Params {
    /// No parameters (a kernel whose parameters are `()`, or its defaults).
    pub const NONE: Params = Params(None);

    /// Wraps a kernel's checked parameters.
    pub fn of<P: Send + Sync + 'static>(value: P) -> Params {
        if std::any::TypeId::of::<P>() == std::any::TypeId::of::<()>() {
            Params::NONE
        } else {
            Params(Some(Arc::new(value)))
        }
    }

    /// The parameters as the kernel's own type; `None` when they were made
    /// by another kernel (or none were made and `P` is not `()`).
    pub fn get<P: 'static>(&self) -> Option<&P> {
        match &self.0 {
            Some(value) => value.downcast_ref::<P>(),
            None => (&() as &dyn Any).downcast_ref::<P>(),
        }
    }

    /// True when no parameters are carried.
    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }
}

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Params(..)" } else { "Params(none)" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_checked_by_type_range_and_name() {
        let raw = RawParams::new(vec![
            ("level", RawValue::Number(9.0)),
            ("seed", RawValue::BigInt(1 << 70)),
        ]);
        assert_eq!(raw.integer("level", 0..=9), Ok(Some(9)));
        assert_eq!(raw.integer("absent", 0..=9), Ok(None));
        let err = raw.integer("seed", 0..=u64::MAX as i128).unwrap_err();
        assert!(matches!(err, ParamError::Range { name: "seed", .. }), "{err}");
        let frac = RawParams::new(vec![("level", RawValue::Number(1.5))]);
        assert!(frac.integer("level", 0..=9).is_err());
        let text = RawParams::new(vec![("level", RawValue::Text("9"))]);
        assert_eq!(
            text.integer("level", 0..=9).unwrap_err().to_string(),
            "the parameter \"level\" must be of type number or bigint; received string"
        );
    }

    #[test]
    fn unknown_names_are_refused() {
        let raw = RawParams::new(vec![("levle", RawValue::Number(1.0))]);
        assert_eq!(
            raw.only(&["level"]).unwrap_err().to_string(),
            "unknown parameter \"levle\" (this kernel takes level)"
        );
        assert!(raw.only(&[]).unwrap_err().to_string().contains("takes no parameters"));
        assert!(RawParams::none().only(&[]).is_ok());
    }

    #[test]
    fn params_come_back_as_their_type_only() {
        let p = Params::of(42u64);
        assert_eq!(p.get::<u64>(), Some(&42));
        assert_eq!(p.get::<u32>(), None);
        let none = Params::of(());
        assert!(none.is_none(), "unit parameters are not allocated");
        assert_eq!(none.get::<()>(), Some(&()));
        assert_eq!(none.get::<u64>(), None);
    }
}
