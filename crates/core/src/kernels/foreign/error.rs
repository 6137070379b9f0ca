//! Why a library was refused.

/// Why a library was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// Built for another ABI version, or its structs are too small for it.
    Abi(String),
    /// The descriptor breaks a rule (a bad name, a missing function...).
    Invalid(String),
    /// A kernel's name is already taken (by a built-in or another library).
    Exists(String),
    /// The registry has no room for more kernels.
    Full,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Abi(m) | LoadError::Invalid(m) => f.write_str(m),
            LoadError::Exists(name) => write!(f, "a kernel named '{name}' is already registered"),
            LoadError::Full => f.write_str("no room for more kernels in this process"),
        }
    }
}

impl std::error::Error for LoadError {}
