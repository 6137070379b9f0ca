//! Why a kernel did not produce a result. A leaf: every kernel imports
//! it, and it imports no kernel.

/// Why a kernel did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// The cancellation flag was raised while the kernel ran.
    Cancelled,
    /// The input cannot be processed by this kernel (e.g. too short).
    InvalidInput(String),
    /// The task's run-time deadline passed while the kernel ran.
    TimedOut,
    /// The output would have been longer than the sink's limit.
    TooLarge { limit: usize },
    /// The input is not valid in the kernel's format (corrupt, truncated):
    /// `code` names why, as the format's reference does (zlib's
    /// `Z_DATA_ERROR`, ...).
    Format { code: &'static str, message: String },
    /// A loaded kernel failed with its own `code` (a checked identifier,
    /// like `ERR_NDJSON_BAD_RECORD`) and message.
    Failed { code: String, message: String },
    /// A loaded kernel panicked (its library caught the panic at the ABI
    /// boundary and reported it); the panic's message.
    Panic(String),
    /// A file could not be read (`postFile`): the system call that failed,
    /// the OS's error number (0: none), and its POSIX name where the kind
    /// is known (`ENOENT`...; `EIO` otherwise).
    Io { syscall: &'static str, errno: i32, name: &'static str },
}

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelError::Cancelled => f.write_str("the kernel was cancelled"),
            KernelError::InvalidInput(m) => write!(f, "invalid input: {m}"),
            KernelError::TimedOut => f.write_str("the kernel ran past its deadline"),
            KernelError::TooLarge { limit } => {
                write!(f, "the output would be larger than {limit} bytes")
            }
            KernelError::Format { code, message } => write!(f, "{message} ({code})"),
            KernelError::Failed { code, message } => write!(f, "{message} ({code})"),
            KernelError::Panic(message) => write!(f, "the kernel panicked: {message}"),
            KernelError::Io { syscall, errno, name } => {
                write!(f, "{name} (os error {errno}), {syscall}")
            }
        }
    }
}

impl std::error::Error for KernelError {}
