//! How much memory this process may use: the machine's, or less where a
//! control group limits it (a container, a systemd slice). Memory budgets
//! that scale with the machine read it, so a process in a container of
//! 2 GiB on a host of 256 GiB sizes itself by the 2 GiB.

use std::{fs, path::Path};

/// The bytes this process may use: the machine's memory (`MemTotal`), or
/// its control group's limit where that is lower (cgroup v2 `memory.max`,
/// v1 `memory.limit_in_bytes`, looked up at the group `/proc/self/cgroup`
/// names and at the mount's root, which is the group itself inside a
/// container). `None` when `/proc/meminfo` cannot be read.
pub fn usable_bytes() -> Option<u64> {
    let total = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text))?;
    let groups = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let limit = limit_files(&groups)
        .iter()
        .filter_map(|file| fs::read_to_string(Path::new(file)).ok())
        .filter_map(|text| limit_of(&text))
        .min();
    Some(limit.map_or(total, |limit| limit.min(total)))
}

/// `MemTotal` from `/proc/meminfo`'s text, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The files that may hold this process's memory limit, from
/// `/proc/self/cgroup`'s text: each group's file, then the mount root's.
fn limit_files(groups: &str) -> Vec<String> {
    let mut files = Vec::new();
    for line in groups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(group)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let group = group.trim_end_matches('/');
        if id == "0" && controllers.is_empty() {
            files.push(format!("/sys/fs/cgroup{group}/memory.max"));
            files.push("/sys/fs/cgroup/memory.max".to_owned());
        } else if controllers.split(',').any(|c| c == "memory") {
            files.push(format!(
                "/sys/fs/cgroup/memory{group}/memory.limit_in_bytes"
            ));
            files.push("/sys/fs/cgroup/memory/memory.limit_in_bytes".to_owned());
        }
    }
    files
}

/// A limit file's bytes; `None` for no limit (`max`) or unreadable text.
fn limit_of(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_total_is_read_in_bytes() {
        let table: &[(&str, Option<u64>)] = &[
            (
                "MemTotal:       24683784 kB\nMemFree: 1 kB\n",
                Some(24_683_784 * 1024),
            ),
            ("MemFree: 1 kB\nMemTotal: 2 kB\n", Some(2048)),
            ("MemFree: 1 kB\n", None),
            ("MemTotal: lots kB\n", None),
        ];
        for &(text, bytes) in table {
            assert_eq!(mem_total(text), bytes, "{text:?}");
        }
    }

    #[test]
    fn limit_files_follow_each_hierarchy() {
        let hybrid = "9:name=systemd:/\n4:memory:/slice/job\n0::/\n";
        assert_eq!(
            limit_files(hybrid),
            [
                "/sys/fs/cgroup/memory/slice/job/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory.max",
                "/sys/fs/cgroup/memory.max",
            ]
        );
        assert_eq!(
            limit_files("0::/user.slice/app.scope\n"),
            [
                "/sys/fs/cgroup/user.slice/app.scope/memory.max",
                "/sys/fs/cgroup/memory.max"
            ]
        );
        assert_eq!(
            limit_files("3:cpu,memory:/a\n"),
            [
                "/sys/fs/cgroup/memory/a/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            ]
        );
        assert!(limit_files("").is_empty());
        assert!(limit_files("garbage\n5:pids:/x\n").is_empty());
    }

    #[test]
    fn a_limit_is_bytes_or_none() {
        assert_eq!(limit_of("2147483648\n"), Some(2 << 30));
        assert_eq!(limit_of("max\n"), None);
        assert_eq!(
            limit_of("9223372036854771712\n"),
            Some(9_223_372_036_854_771_712)
        );
    }

    #[test]
    fn this_machine_s_usable_memory_is_at_most_its_total() {
        let usable = usable_bytes().expect("/proc/meminfo reads");
        let total = mem_total(&fs::read_to_string("/proc/meminfo").unwrap()).unwrap();
        assert!(usable > 0 && usable <= total, "{usable} of {total}");
    }
}
