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

/// The CPUs this process may use now.
pub fn allowed() -> usize {
    affinity().min(quota().unwrap_or(usize::MAX)).max(1)
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

/// The tightest `cpu.max` on the way from this process's cgroup to the root.
#[cfg(target_os = "linux")]
fn quota() -> Option<usize> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut dir = std::path::PathBuf::from("/sys/fs/cgroup");
    dir.push(cgroup_path(&own)?.trim_start_matches('/'));
    let mut tightest: Option<usize> = None;
    loop {
        if let Ok(line) = std::fs::read_to_string(dir.join("cpu.max")) {
            if let Some(n) = quota_cpus(&line) {
                tightest = Some(tightest.map_or(n, |t| t.min(n)));
            }
        }
        if dir.as_os_str() == "/sys/fs/cgroup" || !dir.pop() {
            return tightest;
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn quota() -> Option<usize> {
    None
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

    #[test]
    fn this_process_may_use_at_least_one_cpu_and_no_more_than_it_sees() {
        let n = allowed();
        assert!(n >= 1 && n <= affinity());
    }
}
