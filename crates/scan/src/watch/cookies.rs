//! The private directory a watching process makes its cookies in (see
//! "Draining before answering" in `crate::watch`).
//!
//! It is made in the temp directory, and a process-wide cache is never
//! dropped, so the directory outlives its process: every process that ever
//! watched would leave one behind. Each directory therefore holds an
//! `owner` file its process keeps a kernel lock on for as long as it lives,
//! and a process making its own first removes those whose owner is gone
//! (the kernel frees the lock of a process that dies, however it dies).

use std::{
    fs, io,
    os::unix::{ffi::OsStrExt, fs::MetadataExt},
    path::Path,
    time::{Duration, SystemTime},
};

use natives_system::lock::{self, HeldLock};

/// How every cookie directory's name starts.
const PREFIX: &str = "natives-watch-";

/// The file whose lock says the directory's process is alive.
const OWNER: &str = "owner";

/// A directory changed more recently than this is left alone: its process
/// may be between making it and locking its owner file.
const SWEEP_AFTER: Duration = Duration::from_secs(60);

/// A cookie directory, removed when dropped (a watcher that is dropped) or,
/// when its process ends, by the next process that makes one.
pub(super) struct CookieDir {
    dir: tempfile::TempDir,
    /// Held for the directory's life; `None` when the lock could not be
    /// had (the directory is then never swept).
    _owner: Option<HeldLock>,
}

impl CookieDir {
    /// A new cookie directory in the temp directory, after removing the
    /// directories there whose process is gone.
    pub(super) fn make() -> io::Result<CookieDir> {
        sweep(&std::env::temp_dir());
        let dir = tempfile::Builder::new().prefix(PREFIX).tempdir()?;
        let owner = lock::try_exclusive(&dir.path().join(OWNER)).ok().flatten();
        Ok(CookieDir { dir, _owner: owner })
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Remove the cookie directories in `temp` that belong to this user, were
/// not changed for [`SWEEP_AFTER`] and whose owner file no process holds.
/// A directory without an owner file (made by an older version, or by a
/// process that could not lock one) is never removed: nothing says whether
/// its process lives.
fn sweep(temp: &Path) {
    let Ok(entries) = fs::read_dir(temp) else {
        return;
    };
    let uid = nix::unistd::geteuid().as_raw();
    let now = SystemTime::now();
    for entry in entries.flatten() {
        if !entry.file_name().as_bytes().starts_with(PREFIX.as_bytes()) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let quiet = meta
            .modified()
            .ok()
            .and_then(|changed| now.duration_since(changed).ok())
            .is_some_and(|age| age >= SWEEP_AFTER);
        if !meta.is_dir() || meta.uid() != uid || !quiet {
            continue;
        }
        let owner = path.join(OWNER);
        if !fs::symlink_metadata(&owner).is_ok_and(|m| m.is_file()) {
            continue;
        }
        if let Ok(Some(_gone)) = lock::try_exclusive(&owner) {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory `name` in `temp` with an owner file (unless `owned` is
    /// false), last changed `age` ago.
    fn cookie_dir(temp: &Path, name: &str, owned: bool, age: Duration) -> std::path::PathBuf {
        let dir = temp.join(name);
        fs::create_dir(&dir).unwrap();
        if owned {
            fs::write(dir.join(OWNER), "").unwrap();
        }
        let then = SystemTime::now() - age;
        fs::File::open(&dir).unwrap().set_modified(then).unwrap();
        dir
    }

    /// Only a directory of this user whose owner is gone and that has been
    /// quiet for a minute is removed.
    #[test]
    fn only_a_quiet_directory_whose_owner_is_gone_is_swept() {
        let temp = tempfile::tempdir().unwrap();
        let old = Duration::from_secs(120);
        let gone = cookie_dir(temp.path(), "natives-watch-gone", true, old);
        let live = cookie_dir(temp.path(), "natives-watch-live", true, old);
        let _alive = lock::try_exclusive(&live.join(OWNER)).unwrap().unwrap();
        let young = cookie_dir(temp.path(), "natives-watch-young", true, Duration::ZERO);
        let legacy = cookie_dir(temp.path(), "natives-watch-legacy", false, old);
        let other = cookie_dir(temp.path(), "other-gone", true, old);
        sweep(temp.path());
        assert!(!gone.exists());
        for kept in [&live, &young, &legacy, &other] {
            assert!(kept.exists(), "{}", kept.display());
        }
    }

    /// A cookie directory made now holds its owner's lock: no sweep takes
    /// it while its process lives.
    #[test]
    fn a_directory_made_now_is_held() {
        let made = CookieDir::make().unwrap();
        assert!(lock::is_held(&made.path().join(OWNER)).unwrap());
    }
}
