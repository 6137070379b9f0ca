//! The operating system's part (Linux): the table in a file under
//! `/dev/shm` mapped into every process, a slot's liveness as an
//! open-file-description lock on one byte (the kernel drops it when the
//! process dies, SIGKILL included, so no crash leaves it held), and the
//! futex that threads waiting for a share sleep on.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use super::guard::{guard, Guarded};
use super::table::{Table, SLOTS};

/// The liveness locks sit past the table, one byte per slot.
const LOCKS_AT: i64 = 1 << 20;

/// The table's file, mapped, with this process's slot locked.
pub struct Mapping {
    table: NonNull<Table>,
    /// Against SIGBUS should the file be truncated (`guard.rs`); dropped
    /// before the table is unmapped.
    guard: Option<Guarded>,
    file: File,
    path: PathBuf,
    /// The file's device and inode: the file at `path` is ours while
    /// they match.
    id: (u64, u64),
    slot: usize,
}

// SAFETY: the mapping is shared memory used only through atomics (Table);
// the pointer stays valid until Drop, which needs no other thread's help.
unsafe impl Send for Mapping {}
// SAFETY: as above: &Table is only read through atomic operations.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Opens (creating if need be) `dir`'s table for this user, checks it,
    /// and locks a free slot.
    pub fn open(dir: &Path) -> io::Result<Mapping> {
        // SAFETY: geteuid cannot fail.
        let uid = unsafe { libc::geteuid() };
        // The layout's version is in the name too: a file another version
        // left (alive or not) is another budget, not a refusal.
        let path = dir.join(format!("tidepool-budget-v2-{uid}"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let meta = file.metadata()?;
        // Others must not even read it: a read lock of theirs on a slot's
        // byte would make a dead process look alive. One link only: not a
        // hard link to a file elsewhere.
        if meta.uid() != uid || meta.mode() & 0o077 != 0 || !meta.is_file() || meta.nlink() != 1 {
            return Err(io::Error::other(format!(
                "{} is not a file of this user's alone (owner, mode 0600, one link)",
                path.display()
            )));
        }
        let size = std::mem::size_of::<Table>() as u64;
        if meta.len() == 0 {
            // Zeros: a valid empty table. Two processes may both do this.
            file.set_len(size)?;
        }
        if file.metadata()?.len() != size {
            return Err(io::Error::other(format!(
                "{} was made by another version of tidepool ({} bytes, not {size})",
                path.display(),
                meta.len()
            )));
        }
        // Memory for every page now: a page of a full tmpfs first touched
        // through the mapping would kill the process with SIGBUS.
        // SAFETY: a valid fd; posix_fallocate only changes the file.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, size as libc::off_t) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        // SAFETY: a fresh shared mapping of `size` bytes of an open file
        // that long, its pages allocated; checked for MAP_FAILED below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut mapping = Mapping {
            table: NonNull::new(ptr.cast()).expect("mmap returned null"),
            guard: guard(ptr, size as usize),
            file,
            path,
            id: (meta.dev(), meta.ino()),
            slot: 0,
        };
        if mapping.table().check().is_err() {
            return Err(io::Error::other(format!(
                "{} was made by another version of tidepool",
                mapping.path.display()
            )));
        }
        mapping.slot = (0..SLOTS).find(|&slot| mapping.lock(slot)).ok_or_else(|| {
            io::Error::other(format!("all {SLOTS} places in {} are taken", mapping.path.display()))
        })?;
        Ok(mapping)
    }

    pub fn table(&self) -> &Table {
        // SAFETY: the mapping is page-aligned (more than Table's 64), as
        // long as Table, lives until Drop, and every bit pattern of its
        // atomics is valid; others write it only through atomics.
        unsafe { self.table.as_ref() }
    }

    /// Whether this is no longer the machine's table: the file at `path`
    /// is gone or another, or shorter than the table (truncated), or the
    /// mapping was hit by SIGBUS and stands on private memory. An error
    /// reading the path counts as gone: a new member makes the file anew.
    pub fn stale(&self) -> bool {
        let size = std::mem::size_of::<Table>() as u64;
        if self.guard.as_ref().is_some_and(Guarded::faulted) {
            return true;
        }
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => (meta.dev(), meta.ino()) != self.id || meta.len() < size,
            Err(_) => true,
        }
    }

    /// The slot this process locked.
    pub fn slot(&self) -> usize {
        self.slot
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock_request(kind: i32, slot: usize) -> libc::flock {
        // SAFETY: flock is plain data; zeroed is a valid start (l_pid must
        // be 0 for OFD locks).
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = kind as _;
        lock.l_whence = libc::SEEK_SET as _;
        lock.l_start = (LOCKS_AT + slot as i64) as _;
        lock.l_len = 1;
        lock
    }

    /// Takes `slot`'s lock if no one holds it.
    fn lock(&self, slot: usize) -> bool {
        let lock = Self::lock_request(libc::F_WRLCK, slot);
        // SAFETY: a valid fd and a flock that lives through the call.
        unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_OFD_SETLK, &lock) == 0 }
    }

    /// Whether another open file description (another process, or another
    /// Mapping) holds `slot`'s lock. An error counts as alive: shares are
    /// never taken from a process on a doubt.
    pub fn held_by_other(&self, slot: usize) -> bool {
        let mut lock = Self::lock_request(libc::F_WRLCK, slot);
        // SAFETY: as in lock(); F_OFD_GETLK writes into `lock`.
        let rc = unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) };
        rc != 0 || i32::from(lock.l_type) != libc::F_UNLCK
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unguarded first: the addresses may be mapped again by others.
        drop(self.guard.take());
        // SAFETY: the address and length mmap returned; nothing borrows the
        // table past self. Closing the file drops the slot's lock.
        unsafe {
            libc::munmap(self.table.as_ptr().cast(), std::mem::size_of::<Table>());
        }
    }
}

/// Sleeps while `word` holds `seen`, for at most `timeout` (or until woken).
/// The futex is not process-private: the word is in shared memory.
pub fn wait(word: &AtomicU32, seen: u32, timeout: Duration) {
    let ts =
        libc::timespec { tv_sec: timeout.as_secs() as _, tv_nsec: timeout.subsec_nanos() as _ };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call;
    // the kernel only reads it and the timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            seen,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes every thread, in any process, sleeping on `word`.
pub fn wake_all(word: &AtomicU32) {
    wake(word, i32::MAX);
}

/// Wakes one thread sleeping on `word` (the one that waited longest, as
/// the kernel queues waiters of one priority in order).
pub fn wake_one(word: &AtomicU32) {
    wake(word, 1);
}

fn wake(word: &AtomicU32, count: i32) {
    // SAFETY: as in wait(); FUTEX_WAKE reads no memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            count,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}
