//! Kernel locks: the authority on whether an owner is alive.
//!
//! An exclusive `flock` on a sidecar file is held for as long as the owner
//! borrows the directory; the kernel drops it when the owner dies, however it
//! dies (a SIGKILLed holder's lock was free again within milliseconds here),
//! and it cannot be fooled by a reused pid. `flock` is used rather than
//! `fcntl` locks, which vanish when the holder closes *any* descriptor of the
//! file. Lock files are never deleted: unlinking one while it is held would
//! let a second process lock a fresh file under the same name.
//!
//! On network filesystems `flock` may be emulated per client or hang, so
//! [`trust`] tells callers when to fall back to record identity instead.

use std::{
    fs::{File, OpenOptions},
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    sync::Once,
};

use natives_core::{Error, Result};
use nix::{
    errno::Errno,
    fcntl::{Flock, FlockArg},
    sys::statfs,
};

use crate::durable::FILE_MODE;

/// A held exclusive lock; dropping it releases the lock.
#[derive(Debug)]
pub struct HeldLock {
    _lock: Flock<File>,
    path: PathBuf,
}

impl HeldLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Take the exclusive lock on `path` (created if missing) without waiting:
/// `None` if another open file description holds it.
pub fn try_exclusive(path: &Path) -> Result<Option<HeldLock>> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|err| Error::io(path, err))?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(HeldLock {
            _lock: lock,
            path: path.to_owned(),
        })),
        Err((_, Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, errno)) => Err(Error::io(path, errno.into())),
    }
}

/// Whether anyone holds the lock on `path` right now (a missing file: no).
/// Probing takes the lock for an instant, so a probe can make a concurrent
/// `try_exclusive` fail once; callers that must acquire retry.
pub fn is_held(path: &Path) -> Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    try_exclusive(path).map(|held| held.is_none())
}

/// How far kernel locks can be trusted in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockTrust {
    /// A local filesystem: `flock` is the authority.
    Kernel,
    /// A network or user-space filesystem (named): locks may be per client
    /// or hang, so only records and process identity on this host count.
    RecordOnly(String),
}

/// Filesystems whose `flock` is not one lock shared by every process that
/// can see the file: network filesystems and user-space ones.
const UNTRUSTED_FILESYSTEMS: [(i64, &str); 9] = [
    (0x6969, "nfs"),
    (0x517b, "smb"),
    (0xff53_4d42, "cifs"),
    (0xfe53_4d42, "smb2"),
    (0x0102_1997, "9p"),
    (0x6573_5546, "fuse"),
    (0x5346_414f, "afs"),
    (0x0053_4f43, "lustre"),
    (0x7321_2021, "coda"),
];

/// How far `flock` can be trusted in `dir`, from its filesystem type. A
/// `statfs` failure is reported, not guessed at.
pub fn trust(dir: &Path) -> Result<LockTrust> {
    let stat = statfs::statfs(dir).map_err(|errno| Error::io(dir, errno.into()))?;
    let magic = stat.filesystem_type().0 as i64;
    Ok(
        match UNTRUSTED_FILESYSTEMS.iter().find(|(m, _)| *m == magic) {
            Some((_, name)) => {
                warn_once(dir, name);
                LockTrust::RecordOnly((*name).to_owned())
            }
            None => LockTrust::Kernel,
        },
    )
}

fn warn_once(dir: &Path, filesystem: &str) {
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        eprintln!(
            "natives: {} is on {filesystem}, where file locks cannot be trusted; \
             ownership falls back to process records and never reclaims another host's lease",
            dir.display()
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_exclusive_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        assert!(!is_held(&path).unwrap());
        let held = try_exclusive(&path).unwrap().expect("free lock");
        assert_eq!(held.path(), path);
        assert!(try_exclusive(&path).unwrap().is_none());
        assert!(is_held(&path).unwrap());
        drop(held);
        assert!(!is_held(&path).unwrap());
        assert!(path.exists(), "lock files are never deleted");
    }

    #[test]
    fn local_directories_are_trusted() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(trust(dir.path()).unwrap(), LockTrust::Kernel);
        assert_eq!(
            trust(Path::new("/nonexistent/dir")).unwrap_err().code(),
            "ENOENT"
        );
    }
}
