//! How many directories a process watches by default.
//!
//! inotify's limit is per user (`max_user_watches`), and every process of
//! the user draws on it: editors, file managers, build tools, other agents.
//! A fixed share of it is wrong both ways: a quarter of the limit left a
//! million-file tree (96 938 directories against a limit of 192 540)
//! unwatched while most of the limit lay unused, and it takes no account of
//! what others already hold. So the default is what the user's processes
//! leave free when watching starts, less a reserve of [`RESERVE_SHARE`] of
//! the limit for them to grow into, counted from `/proc` (each inotify
//! descriptor's `fdinfo` lists one line per watch). The kernel's refusal
//! stays the hard bound: a scan it refuses falls back to the TTL.

use std::{
    fs,
    os::unix::fs::MetadataExt,
    path::Path,
    time::{Duration, Instant},
};

/// The budget where there is no inotify limit to read (another kernel's
/// watcher, or no `/proc`): Linux's historical default `max_user_watches`.
const FALLBACK_BUDGET: usize = 8_192;

/// The share of the kernel's limit (one part in this many) left free for
/// the user's other processes, whatever this one takes.
const RESERVE_SHARE: usize = 4;

/// The longest the count of the user's watches may take (about 25 us per
/// process of the user was measured): past it, what others hold is not
/// known, and a quarter of the limit is taken, as when `/proc` cannot be
/// read. A process starting to watch pays the count once.
const COUNT_WITHIN: Duration = Duration::from_millis(100);

/// The most watches taken by default, however large the limit: a tree that
/// needs more is better served by raising `FS_SCAN_CACHE_WATCH_MAX` on
/// purpose than by a default that pins that much kernel memory.
const MAX_DEFAULT_BUDGET: usize = 131_072;

/// The default budget: what the user's processes leave free of the
/// kernel's limit now, less the reserve (see the module doc).
pub(crate) fn default_budget() -> usize {
    let limit = fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok());
    let deadline = Instant::now() + COUNT_WITHIN;
    budget_within(limit, held_by_user(Path::new("/proc"), deadline))
}

/// The budget for a kernel limit (`None`: unreadable) when the user's
/// processes hold `held` watches (`None`: not countable, taken as half the
/// limit, which leaves a quarter of it to this process).
fn budget_within(limit: Option<usize>, held: Option<usize>) -> usize {
    let Some(limit) = limit else {
        return FALLBACK_BUDGET;
    };
    let held = held.unwrap_or(limit / 2);
    limit
        .saturating_sub(held)
        .saturating_sub(limit / RESERVE_SHARE)
        .clamp(1, MAX_DEFAULT_BUDGET)
}

/// The inotify watches held by the processes under `proc` (a procfs mount)
/// whose effective user is this process's; `None` when `proc` cannot be
/// listed or the count is not done by `deadline`. A process that ends, or
/// whose descriptors cannot be read, while this counts is passed over.
fn held_by_user(proc: &Path, deadline: Instant) -> Option<usize> {
    let me = nix::unistd::geteuid().as_raw();
    let mut held = 0;
    for process in fs::read_dir(proc).ok()?.flatten() {
        let name = process.file_name();
        let is_process = name
            .as_encoded_bytes()
            .first()
            .is_some_and(u8::is_ascii_digit);
        if !is_process || !process.metadata().is_ok_and(|meta| meta.uid() == me) {
            continue;
        }
        if Instant::now() > deadline {
            return None;
        }
        held += watches_of_process(&process.path());
    }
    Some(held)
}

/// The watches held through the inotify descriptors of the process whose
/// `/proc` directory is `process`.
fn watches_of_process(process: &Path) -> usize {
    let Ok(descriptors) = fs::read_dir(process.join("fd")) else {
        return 0;
    };
    descriptors
        .flatten()
        .filter(|fd| fs::read_link(fd.path()).is_ok_and(|to| to == Path::new("anon_inode:inotify")))
        .filter_map(|fd| fs::read_to_string(process.join("fdinfo").join(fd.file_name())).ok())
        .map(|info| watches_in_fdinfo(&info))
        .sum()
}

/// The watches an inotify descriptor's `fdinfo` lists: one line each.
fn watches_in_fdinfo(info: &str) -> usize {
    info.lines()
        .filter(|line| line.starts_with("inotify wd:"))
        .count()
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use super::*;

    #[test]
    fn the_budget_is_what_others_leave_less_the_reserve() {
        const LIMIT: usize = 192_540;
        // (limit, held, budget)
        let table: &[(Option<usize>, Option<usize>, usize)] = &[
            // Nothing held: all but the reserve, within the cap.
            (Some(LIMIT), Some(0), 131_072),
            (Some(LIMIT), Some(3_000), 131_072),
            (Some(LIMIT), Some(20_000), 124_405),
            // A tree of 96 938 directories fits beside 40 000 held.
            (Some(LIMIT), Some(40_000), 104_405),
            // Others hold what leaves no more than the reserve: one watch,
            // so a scan falls back at once rather than taking the reserve.
            (Some(LIMIT), Some(150_000), 1),
            (Some(LIMIT), Some(LIMIT + 5), 1),
            // Not countable: a quarter of the limit.
            (Some(LIMIT), None, LIMIT / 4),
            // No limit to read: the historical default.
            (None, None, 8_192),
            (None, Some(0), 8_192),
            (Some(8_192), Some(1_000), 5_144),
        ];
        for &(limit, held, budget) in table {
            assert_eq!(
                budget_within(limit, held),
                budget,
                "limit {limit:?}, held {held:?}"
            );
        }
    }

    #[test]
    fn an_fdinfo_lists_one_line_per_watch() {
        let info = "pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\n\
            inotify wd:2 ino:1a sdev:800001 mask:fce ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:1a000000\n\
            inotify wd:1 ino:2 sdev:800001 mask:fce ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:02000000\n";
        assert_eq!(watches_in_fdinfo(info), 2);
        assert_eq!(watches_in_fdinfo("pos:\t0\nflags:\t02\n"), 0);
    }

    /// A descriptor of this process's with five watches is found and
    /// counted exactly, and the user's total includes them.
    #[test]
    fn the_watches_of_a_live_descriptor_are_counted() {
        let dirs: Vec<tempfile::TempDir> = (0..5).map(|_| tempfile::tempdir().unwrap()).collect();
        // SAFETY: inotify_init1 returns a new descriptor or -1.
        let raw = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(
            raw >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: `raw` is a descriptor this test just opened and owns.
        let inotify = unsafe { OwnedFd::from_raw_fd(raw) };
        for dir in &dirs {
            let path = std::ffi::CString::new(dir.path().as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a live descriptor and a NUL-terminated path.
            let wd = unsafe {
                libc::inotify_add_watch(inotify.as_raw_fd(), path.as_ptr(), libc::IN_CREATE)
            };
            assert!(
                wd >= 0,
                "inotify_add_watch: {}",
                std::io::Error::last_os_error()
            );
        }
        let info =
            fs::read_to_string(format!("/proc/self/fdinfo/{}", inotify.as_raw_fd())).unwrap();
        assert_eq!(watches_in_fdinfo(&info), 5);
        let mine = watches_of_process(Path::new("/proc/self"));
        assert!(
            mine >= 5,
            "this process holds at least these five, counted {mine}"
        );
        let later = Instant::now() + Duration::from_secs(60);
        let held = held_by_user(Path::new("/proc"), later).expect("/proc lists");
        assert!(
            held >= 5,
            "the user holds at least these five, counted {held}"
        );
        assert_eq!(held_by_user(Path::new("/nonexistent-proc"), later), None);
        // A count past its deadline knows nothing.
        assert_eq!(held_by_user(Path::new("/proc"), Instant::now()), None);
    }
}
