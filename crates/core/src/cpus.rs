//! How many CPUs this process may use, one answer for the pool's default
//! `maxThreads` and the machine budget's capacity alike: the CPUs its
//! affinity mask allows (a cgroup cpuset narrows it), capped by the CPU
//! quotas of its cgroup and every ancestor, rounded up: cgroup v2's
//! `cpu.max`, or v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us` (a host
//! still on v1, as some container platforms are). The budget reads it
//! again periodically ([`Cpus`]), since a container's limits may change
//! while it runs.

use std::path::PathBuf;

/// The CPUs this process may use now (see the module's comment), at
/// least 1.
pub fn available_parallelism() -> usize {
    Cpus::open().allowed()
}

/// What `std` says, where this module reads nothing itself: `std` reads
/// the affinity mask and quotas where it can; `num_cpus` is the fallback
/// where it cannot tell.
fn std_parallelism() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or_else(|_| num_cpus::get()).max(1)
}

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

/// The CPUs a cgroup v1 quota allows (`cpu.cfs_quota_us`, -1 for none,
/// over `cpu.cfs_period_us`), rounded up as [`quota_cpus`]'s.
pub fn v1_quota_cpus(quota_us: &str, period_us: &str) -> Option<usize> {
    let quota: i64 = quota_us.trim().parse().ok()?;
    let period: u64 = period_us.trim().parse().ok()?;
    if quota <= 0 || period == 0 {
        return None;
    }
    Some((quota as u64).div_ceil(period).max(1) as usize)
}

/// The cgroup v2 path of this process from `/proc/self/cgroup`'s `0::` line.
pub fn cgroup_path(proc_self_cgroup: &str) -> Option<&str> {
    proc_self_cgroup.lines().find_map(|line| line.strip_prefix("0::"))
}

/// The directory of this process's cgroup v1 `cpu` controller, and the
/// controller's mount point (where the walk up to the root stops), from
/// `/proc/self/cgroup` (`<id>:cpu,cpuacct:/path`) and
/// `/proc/self/mountinfo` (the `cgroup` mount whose options name `cpu`;
/// inside a container its root is the container's cgroup, which the path
/// then starts with).
pub fn v1_cpu_dir(proc_self_cgroup: &str, mountinfo: &str) -> Option<(PathBuf, PathBuf)> {
    let path = proc_self_cgroup.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers.split(',').any(|c| c == "cpu").then_some(path)
    })?;
    mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        let mut fs = fs.split_whitespace();
        let (kind, _source, options) = (fs.next()?, fs.next()?, fs.next()?);
        if kind != "cgroup" || !options.split(',').any(|o| o == "cpu") {
            return None;
        }
        let mut fields = mount.split_whitespace();
        let (root, point) = (fields.nth(3)?, fields.next()?);
        let inner = if root == "/" { path } else { path.strip_prefix(root)? };
        let point = PathBuf::from(point);
        let mut dir = point.clone();
        dir.push(inner.trim_start_matches('/'));
        Some((dir, point))
    })
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
    quotas: Vec<Quota>,
}

/// One cgroup's quota file(s), open.
#[derive(Debug)]
enum Quota {
    /// v2's `cpu.max`.
    Max(std::fs::File),
    /// v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us`.
    Cfs(std::fs::File, std::fs::File),
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

fn read_quota(quota: &Quota) -> Option<usize> {
    match quota {
        Quota::Max(file) => quota_cpus(&read_line(file)?),
        Quota::Cfs(quota, period) => v1_quota_cpus(&read_line(quota)?, &read_line(period)?),
    }
}

/// A cgroup file's short line, read in place.
#[cfg(unix)]
fn read_line(file: &std::fs::File) -> Option<String> {
    use std::os::unix::fs::FileExt;
    // "<quota> <period>\n": two u64s at most.
    let mut line = [0u8; 64];
    let n = file.read_at(&mut line, 0).ok()?;
    std::str::from_utf8(&line[..n]).ok().map(str::to_owned)
}

#[cfg(not(unix))]
fn read_line(_: &std::fs::File) -> Option<String> {
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
    std_parallelism()
}

#[cfg(not(target_os = "linux"))]
fn affinity() -> usize {
    std_parallelism()
}

/// The quota files from this process's cgroup up to the root: v2's, or
/// where there is no v2 hierarchy for it, v1's `cpu` controller's.
#[cfg(target_os = "linux")]
fn quota_files() -> Vec<Quota> {
    let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") else { return Vec::new() };
    if let Some(path) = cgroup_path(&own) {
        let mut dir = PathBuf::from("/sys/fs/cgroup");
        dir.push(path.trim_start_matches('/'));
        let files = walk_up(dir, "/sys/fs/cgroup".as_ref(), |dir| {
            std::fs::File::open(dir.join("cpu.max")).ok().map(Quota::Max)
        });
        if !files.is_empty() {
            return files;
        }
    }
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mountinfo") else { return Vec::new() };
    let Some((dir, point)) = v1_cpu_dir(&own, &mounts) else { return Vec::new() };
    walk_up(dir, &point, |dir| {
        let quota = std::fs::File::open(dir.join("cpu.cfs_quota_us")).ok()?;
        let period = std::fs::File::open(dir.join("cpu.cfs_period_us")).ok()?;
        Some(Quota::Cfs(quota, period))
    })
}

/// What `open` finds in `dir` and each of its parents up to `root`.
#[cfg(target_os = "linux")]
fn walk_up(
    mut dir: PathBuf,
    root: &std::path::Path,
    open: impl Fn(&std::path::Path) -> Option<Quota>,
) -> Vec<Quota> {
    let mut files = Vec::new();
    loop {
        files.extend(open(&dir));
        if dir == root || !dir.pop() || !dir.starts_with(root) {
            return files;
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn quota_files() -> Vec<Quota> {
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
        let cpus = Cpus {
            quotas: paths.iter().map(|p| Quota::Max(std::fs::File::open(p).unwrap())).collect(),
        };
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
    fn v1_quotas_round_up_and_minus_one_means_none() {
        assert_eq!(v1_quota_cpus("50000\n", "100000\n"), Some(1), "half a CPU");
        assert_eq!(v1_quota_cpus("150000", "100000"), Some(2));
        assert_eq!(v1_quota_cpus("-1\n", "100000\n"), None);
        assert_eq!(v1_quota_cpus("100000", "0"), None);
        assert_eq!(v1_quota_cpus("x", "100000"), None);
    }

    #[test]
    fn the_v1_cpu_controller_is_found_on_the_host_and_in_a_container() {
        let cgroup = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/x\n";
        let host = "30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:12 - cgroup cgroup rw,cpu,cpuacct\n";
        assert_eq!(
            v1_cpu_dir(cgroup, host),
            Some((
                PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/docker/abc"),
                PathBuf::from("/sys/fs/cgroup/cpu,cpuacct")
            ))
        );
        // Inside the container the mount's root is its own cgroup.
        let inside =
            "40 35 0:27 /docker/abc /sys/fs/cgroup/cpu ro,nosuid - cgroup cgroup rw,cpuacct,cpu\n";
        assert_eq!(
            v1_cpu_dir(cgroup, inside),
            Some((PathBuf::from("/sys/fs/cgroup/cpu"), PathBuf::from("/sys/fs/cgroup/cpu")))
        );
        // A cpuset-only mount, or no cpu line: none.
        let cpuset = "31 25 0:28 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n";
        assert_eq!(v1_cpu_dir(cgroup, cpuset), None);
        assert_eq!(v1_cpu_dir("0::/user.slice\n", host), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn v1_quota_files_are_read_in_each_cgroup_up_to_the_mount() {
        let root = std::env::temp_dir().join(format!("tidepool-v1-{}", std::process::id()));
        let leaf = root.join("docker/abc");
        std::fs::create_dir_all(&leaf).unwrap();
        for (dir, quota) in [(&root, "-1"), (&leaf, "50000")] {
            std::fs::write(dir.join("cpu.cfs_quota_us"), format!("{quota}\n")).unwrap();
            std::fs::write(dir.join("cpu.cfs_period_us"), "100000\n").unwrap();
        }
        let quotas = walk_up(leaf.clone(), &root, |dir| {
            let quota = std::fs::File::open(dir.join("cpu.cfs_quota_us")).ok()?;
            let period = std::fs::File::open(dir.join("cpu.cfs_period_us")).ok()?;
            Some(Quota::Cfs(quota, period))
        });
        assert_eq!(quotas.len(), 2, "the leaf and the mount's root; docker/ has none");
        let cpus = Cpus { quotas };
        assert_eq!(cpus.quota(), Some(1), "0.5 CPU is one thread");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn this_process_may_use_at_least_one_cpu_and_no_more_than_it_sees() {
        let n = Cpus::open().allowed();
        assert!(n >= 1 && n <= affinity());
    }
}
