//! Files read by the pool's threads (`postFile`): the kernel runs over a
//! file's bytes as they are read, a chunk at a time, with no JavaScript
//! Buffer and no libuv request in between.
//!
//! The task's input is the path's bytes ([`path_of`]), resolved by the
//! binding when it was posted (a later `chdir` changes nothing). A worker thread opens it with the
//! process's permissions, as `fs` would, reads [`CHUNK`] bytes at a time
//! into one buffer, and hands each read to the kernel's state, looking at
//! cancellation and the deadline between reads. A file that grows or
//! shrinks while it is read is processed as far as the reads see it: no
//! size is promised to the kernel (zstd would refuse a frame whose pledged
//! size turned out wrong).
//!
//! Failures of the file system are [`KernelError::Io`]: the system call
//! that failed and the OS's error number, which the binding turns into a
//! Node-style fs error (`code`, `errno`, `syscall`, `path`).

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use crate::input::Input;
use crate::kernels::{AnyKernel, KernelError, Params, RunContext, Sink, CHUNK};

/// The path whose bytes `input` holds: any bytes on Unix (a path there is
/// bytes, not text), UTF-8 elsewhere.
pub(crate) fn path_of(input: &Input) -> Result<PathBuf, KernelError> {
    let mut bytes = Vec::with_capacity(input.len());
    input.for_each_part(|part| {
        bytes.extend_from_slice(part);
        Ok::<(), KernelError>(())
    })?;
    if bytes.is_empty() || bytes.contains(&0) {
        return Err(KernelError::InvalidInput(
            "a file's path must be non-empty, without NUL bytes".to_owned(),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Ok(std::ffi::OsString::from_vec(bytes).into())
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(bytes).map(Into::into).map_err(|_| {
            KernelError::InvalidInput("a file's path must be UTF-8 on this platform".to_owned())
        })
    }
}

/// Runs `kernel` over the file at `path` into `out`.
pub(crate) fn run(
    kernel: &dyn AnyKernel,
    params: &Params,
    path: &Path,
    ctx: &RunContext<'_>,
    out: &mut Sink,
) -> Result<(), KernelError> {
    ctx.check()?;
    let mut file = open(path)?;
    let mut state = kernel.start(params, None)?;
    let mut buffer = vec![0u8; CHUNK];
    loop {
        ctx.check()?;
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error("read", &e)),
        };
        state.update(&buffer[..read], out, ctx)?;
    }
    state.finish(out, ctx)
}

/// Opens `path` for reading, refusing what is not a regular file: a FIFO,
/// a socket or a terminal could block a read (or, for a FIFO, the open
/// itself) with no end, beyond the reach of cancellation, the deadline and
/// `destroy()`. The open does not wait for a FIFO's writer (`O_NONBLOCK`,
/// which reads of a regular file ignore), and the check is on what was
/// opened (`fstat`), not on the path, so a file swapped in between changes
/// nothing. A directory fails as `fs.readFile` fails on it: `EISDIR`.
fn open(path: &Path) -> Result<File, KernelError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| io_error("open", &e))?;
    let kind = file.metadata().map_err(|e| io_error("fstat", &e))?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    if kind.is_dir() {
        #[cfg(unix)]
        let errno = libc::EISDIR;
        #[cfg(not(unix))]
        let errno = 0;
        return Err(KernelError::Io { syscall: "read", errno, name: "EISDIR" });
    }
    // Not an OS error: tidepool's own code, which the binding reports the
    // way it reports fs errors (with the path the caller gave).
    Err(KernelError::Io { syscall: "fstat", errno: 0, name: NOT_A_FILE })
}

/// The code of a file that is not a regular file (nor a directory).
pub const NOT_A_FILE: &str = "ERR_TIDEPOOL_NOT_A_FILE";

/// The error of a failed system call: its name, the OS's error number,
/// and a POSIX name from the error's kind for where the number says nothing
/// to Node (`EIO` when no kind fits).
fn io_error(syscall: &'static str, e: &std::io::Error) -> KernelError {
    let name = match e.kind() {
        ErrorKind::NotFound => "ENOENT",
        ErrorKind::PermissionDenied => "EACCES",
        ErrorKind::IsADirectory => "EISDIR",
        ErrorKind::NotADirectory => "ENOTDIR",
        ErrorKind::InvalidFilename => "ENAMETOOLONG",
        ErrorKind::OutOfMemory => "ENOMEM",
        _ => "EIO",
    };
    // Unix's numbers are libuv's (negated); Windows' are not, and go as 0.
    let errno = if cfg!(unix) { e.raw_os_error().unwrap_or(0) } else { 0 };
    KernelError::Io { syscall, errno, name }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::codec::testing::{kernel, run as run_kernel, text};
    use std::io::Write;
    use std::sync::atomic::AtomicBool;

    fn run_file(name: &str, path: &Path) -> Result<Vec<u8>, KernelError> {
        let flag = AtomicBool::new(false);
        let mut out = Sink::new(usize::MAX);
        run(kernel(name), &Params::NONE, path, &RunContext::new(&flag), &mut out)?;
        Ok(out.into_output().as_bytes().to_vec())
    }

    fn temp_file(name: &str, data: &[u8]) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("tidepool-file-{}-{name}", std::process::id()));
        File::create(&path).unwrap().write_all(data).unwrap();
        path
    }

    #[test]
    fn a_file_read_in_chunks_gives_the_one_shot_result() {
        let data = text(3 * CHUNK + 17);
        let path = temp_file("chunks", &data);
        for name in ["sha256", "gzip", "xxh3"] {
            let got = run_file(name, &path).unwrap();
            if name == "gzip" {
                assert_eq!(run_kernel("gunzip", &got).unwrap(), data);
            } else {
                assert_eq!(got, run_kernel(name, &data).unwrap(), "{name}");
            }
        }
        let empty = temp_file("empty", b"");
        assert_eq!(run_file("sha256", &empty).unwrap(), run_kernel("sha256", b"").unwrap());
        std::fs::remove_file(path).unwrap();
        std::fs::remove_file(empty).unwrap();
    }

    #[test]
    fn failures_name_the_system_call_and_the_os_error() {
        let missing = std::env::temp_dir().join("tidepool-file-that-is-not-there");
        let err = run_file("sha256", &missing).unwrap_err();
        assert!(
            matches!(err, KernelError::Io { syscall: "open", name: "ENOENT", errno } if errno == 2),
            "{err:?}"
        );
        // A directory fails as fs.readFile fails on it.
        let err = run_file("sha256", &std::env::temp_dir()).unwrap_err();
        assert!(matches!(err, KernelError::Io { name: "EISDIR", syscall: "read", .. }), "{err:?}");
    }

    /// A FIFO without a writer would block the open, and one without data
    /// every read, past cancellation: refused, at once.
    #[cfg(unix)]
    #[test]
    fn what_is_not_a_regular_file_is_refused_without_blocking() {
        let fifo = std::env::temp_dir().join(format!("tidepool-file-{}-fifo", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only reads it.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let err = run_file("sha256", &fifo).unwrap_err();
        assert_eq!(err, KernelError::Io { syscall: "fstat", errno: 0, name: NOT_A_FILE });
        std::fs::remove_file(&fifo).unwrap();
        let err = run_file("sha256", Path::new("/dev/null")).unwrap_err();
        assert_eq!(err, KernelError::Io { syscall: "fstat", errno: 0, name: NOT_A_FILE });
    }

    #[test]
    fn a_raised_flag_stops_before_the_next_read() {
        let path = temp_file("cancel", &text(CHUNK * 2));
        let raised = AtomicBool::new(true);
        let mut out = Sink::new(usize::MAX);
        let err = run(kernel("sha256"), &Params::NONE, &path, &RunContext::new(&raised), &mut out)
            .unwrap_err();
        assert_eq!(err, KernelError::Cancelled);
        std::fs::remove_file(path).unwrap();
    }
}
