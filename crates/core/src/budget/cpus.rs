//! How many CPUs this process may use: the CPUs its affinity mask allows
//! (a cgroup cpuset narrows it), capped by the cgroup v2 `cpu.max` quotas
//! of its cgroup and every ancestor. Read again periodically, since a
//! container's limits may change while it runs.

/// The CPUs a `cpu.max` line (`"<quota> <period>"` or `"max <period>"`)
/// allows, rounded up: a quota of 1.5 CPUs lets two threads run, each a
/// part of the time. None when there is no limit or the line is malformed.
pub fn quota_cpus(cpu_max: &str) -> Option<usize> {
    let mut fields = cpu_max.split_whitespace();
    let quota = fields.next()?;
    let period: u64 = fields.next().map_or(Some(100_000), |p| p.parse().ok())?;
    if quota == "max" || period == 0 {
        return None;
    }
    let quota: u64 = quota.parse().ok()?;
    Some((quota.div_ceil(period)).max(1) as usize)
}

/// The cgroup v2 path of this process from `/proc/self/cgroup`'s `0::` line.
pub fn cgroup_path(proc_self_cgroup: &str) -> Option<&str> {
    proc_self_cgroup.lines().find_map(|line| line.strip_prefix("0::"))
}

/// The CPUs this process may use, to be read again while it runs.
///
/// The cgroup's path is read once, and the `cpu.max` files of that cgroup
/// and its ancestors are opened once and re-read in place (as Go's runtime
/// does): no path is looked up again, so a thread holding a share never
/// waits on the file system. A process moved to another cgroup keeps
/// reading the old one's.
#[derive(Debug)]
pub struct Cpus {
    quotas: Vec<std::fs::File>,
}

impl Cpus {
    /// Opens this process's `cpu.max` files (none where there are none).
    pub fn open() -> Cpus {
        Cpus { quotas: quota_files() }
    }

    /// The CPUs this process may use now.
    pub fn allowed(&self) -> usize {
        affinity().min(self.quota().unwrap_or(usize::MAX)).max(1)
    }

    /// The tightest `cpu.max` on the way from this process's cgroup to
    /// the root.
    fn quota(&self) -> Option<usize> {
        self.quotas.iter().filter_map(read_quota).min()
    }
}

#[cfg(unix)]
fn read_quota(file: &std::fs::File) -> Option<usize> {
    use std::os::unix::fs::FileExt;
    // "<quota> <period>\n": two u64s at most.
    let mut line = [0u8; 64];
    let n = file.read_at(&mut line, 0).ok()?;
    quota_cpus(std::str::from_utf8(&line[..n]).ok()?)
}

#[cfg(not(unix))]
fn read_quota(_: &std::fs::File) -> Option<usize> {
    None
}

/// The CPUs of this process's affinity mask (std's count would already be
/// capped by a quota rounded down).
#[cfg(target_os = "linux")]
fn affinity() -> usize {
    // SAFETY: a zeroed cpu_set_t is an empty set; sched_getaffinity writes
    // at most size_of::<cpu_set_t>() bytes into it, and CPU_COUNT reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            return (libc::CPU_COUNT(&set) as usize).max(1);
        }
    }
    crate::pool::available_parallelism()
}

#[cfg(not(target_os = "linux"))]
fn affinity() -> usize {
    crate::pool::available_parallelism()
}

/// The `cpu.max` files from this process's cgroup up to the root.
#[cfg(target_os = "linux")]
fn quota_files() -> Vec<std::fs::File> {
    let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") else { return Vec::new() };
    let Some(path) = cgroup_path(&own) else { return Vec::new() };
    let mut dir = std::path::PathBuf::from("/sys/fs/cgroup");
    dir.push(path.trim_start_matches('/'));
    let mut files = Vec::new();
    loop {
        if let Ok(file) = std::fs::File::open(dir.join("cpu.max")) {
            files.push(file);
        }
        if dir.as_os_str() == "/sys/fs/cgroup" || !dir.pop() {
            return files;
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn quota_files() -> Vec<std::fs::File> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_round_up_and_max_means_none() {
        assert_eq!(quota_cpus("max 100000\n"), None);
        assert_eq!(quota_cpus("200000 100000\n"), Some(2));
        assert_eq!(quota_cpus("150000 100000"), Some(2));
        assert_eq!(quota_cpus("50000 100000"), Some(1));
        assert_eq!(quota_cpus("1000 100000"), Some(1));
        assert_eq!(quota_cpus("400000"), Some(4), "the period defaults to 100 ms");
        assert_eq!(quota_cpus("lots 100000"), None);
        assert_eq!(quota_cpus(""), None);
        assert_eq!(quota_cpus("100 0"), None);
    }

    #[test]
    fn the_v2_line_names_the_cgroup() {
        let text = "12:cpu,cpuacct:/old\n0::/system.slice/app.service\n";
        assert_eq!(cgroup_path(text), Some("/system.slice/app.service"));
        assert_eq!(cgroup_path("1:name=systemd:/\n"), None);
    }

    #[cfg(unix)]
    #[test]
    fn quota_files_are_read_again_in_place_and_the_tightest_counts() {
        let dir = std::env::temp_dir();
        let paths: Vec<_> = (0..2)
            .map(|i| dir.join(format!("tidepool-cpu-max-{}-{i}", std::process::id())))
            .collect();
        std::fs::write(&paths[0], "300000 100000\n").unwrap();
        std::fs::write(&paths[1], "max 100000\n").unwrap();
        let cpus = Cpus { quotas: paths.iter().map(|p| std::fs::File::open(p).unwrap()).collect() };
        assert_eq!(cpus.quota(), Some(3));
        // Written anew under the open files, as the kernel's cgroup files
        // show new values.
        std::fs::write(&paths[0], "max 100000\n").unwrap();
        assert_eq!(cpus.quota(), None);
        std::fs::write(&paths[1], "150000 100000\n").unwrap();
        assert_eq!(cpus.quota(), Some(2));
        std::fs::write(&paths[0], "50000 100000\n").unwrap();
        assert_eq!(cpus.quota(), Some(1));
        for p in &paths {
            std::fs::remove_file(p).unwrap();
        }
    }

    #[test]
    fn this_process_may_use_at_least_one_cpu_and_no_more_than_it_sees() {
        let n = Cpus::open().allowed();
        assert!(n >= 1 && n <= affinity());
    }
}
