//! Kernel locks: the authority on whether an owner is alive.
//!
//! An exclusive lock on a sidecar file is held for as long as the owner
//! borrows the directory; the kernel drops it when the owner dies, however it
//! dies (a SIGKILLed holder's lock was free again within milliseconds here),
//! and it cannot be fooled by a reused pid.
//!
//! The lock is an open file description lock (`fcntl` `F_OFD_SETLK` on the
//! whole file): like `flock` it belongs to the open file, not the process,
//! so it is not lost when the holder closes some other descriptor of the
//! file (as classic `fcntl` locks are), and it is exclusive between two opens
//! in one process too. Unlike `flock` it can be *tested* without being taken
//! (`F_OFD_GETLK`), so asking whether a lease is held never makes a
//! concurrent acquisition fail.
//!
//! Lock files are never deleted: unlinking one while it is held would let a
//! second process lock a fresh file under the same name.
//!
//! On network filesystems locks may be emulated per client or hang, so
//! [`trust`] tells callers when to fall back to record identity instead.
//!
//! One lock here is not ours: cargo's own lock on a profile directory
//! (`<profile>/.cargo-lock`, taken with `flock(2)` by every cargo command
//! that writes there, which waits with "Blocking waiting for file lock").
//! [`try_cargo_lock`] takes it the same way, so a reader can copy a build
//! directory no cargo is writing, and keep one from starting meanwhile.

use std::{
    fs::{self, File, OpenOptions},
    io,
    os::unix::fs::{MetadataExt, OpenOptionsExt},
    path::{Path, PathBuf},
    sync::Once,
    thread,
    time::{Duration, Instant},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use nix::{
    errno::Errno,
    fcntl::{FcntlArg, Flock, FlockArg, fcntl},
    sys::statfs::{self, FsType},
};

use crate::durable::{FILE_MODE, require_regular};

/// A held exclusive lock; dropping it releases the lock.
#[derive(Debug)]
pub struct HeldLock {
    file: File,
    path: PathBuf,
}

impl HeldLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The locked file: handed to a child ([`crate::command::run_holding`]),
/// the lock stays held until the child has exited too.
impl std::os::fd::AsFd for HeldLock {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl Drop for HeldLock {
    /// Unlock before closing: a child spawned meanwhile shares the open
    /// file until it execs, and closing only this descriptor would leave the
    /// lock held through the child's copy.
    fn drop(&mut self) {
        let _ = fcntl(
            &self.file,
            FcntlArg::F_OFD_SETLK(&whole_file(libc::F_UNLCK)),
        );
    }
}

/// Take the exclusive lock on `path` (created if missing) without waiting:
/// `None` if another open file description holds it.
///
/// A lock is taken on an open file, a path only names one: after locking,
/// the path must still name the locked file, or a lock file deleted and
/// recreated in between would let this attempt and a locker of the new file
/// both hold. A replaced file is let go and the new one tried instead.
pub fn try_exclusive(path: &Path) -> Result<Option<HeldLock>> {
    try_exclusive_observed(path, &mut || {})
}

/// Take the shared lock on `path` (created if missing) without waiting, as
/// [`try_exclusive`] takes the exclusive one: `None` while another open
/// file description holds it exclusively. Shared holders do not exclude
/// each other, and [`try_exclusive`] fails while any holds it: readers of
/// something keep its remover away without waiting for each other.
pub fn try_shared(path: &Path) -> Result<Option<HeldLock>> {
    try_observed(path, libc::F_RDLCK, &mut || {})
}

/// How many times an attempt follows a lock file replaced under it before
/// it counts as busy (only a path replaced over and over gets that far).
const REPLACED_RETRIES: usize = 3;

/// [`try_exclusive`], calling `opened` between opening the file and locking
/// it (the window a replaced lock file slips into).
fn try_exclusive_observed(path: &Path, opened: &mut dyn FnMut()) -> Result<Option<HeldLock>> {
    try_observed(path, libc::F_WRLCK, opened)
}

/// A lock of `kind` (`F_WRLCK`, `F_RDLCK`) on `path` without waiting,
/// calling `opened` as [`try_exclusive_observed`] does.
fn try_observed(
    path: &Path,
    kind: libc::c_int,
    opened: &mut dyn FnMut(),
) -> Result<Option<HeldLock>> {
    for _ in 0..=REPLACED_RETRIES {
        let file = open_lock_file(path)?;
        opened();
        match fcntl(&file, FcntlArg::F_OFD_SETLK(&whole_file(kind))) {
            Ok(_) => {}
            Err(Errno::EAGAIN | Errno::EACCES) => return Ok(None),
            Err(errno) => return Err(Error::io(path, errno.into())),
        }
        if names(path, &file)? {
            return Ok(Some(HeldLock {
                file,
                path: path.to_owned(),
            }));
        }
    }
    Ok(None)
}

/// The lock file at `path`, created if missing. Opened without blocking and
/// refused (`EFTYPE`) unless it is a regular file: a FIFO put in its place
/// must not hang the caller, nor a device stand in for a lock.
fn open_lock_file(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|err| Error::io(path, err))?;
    regular(path, file)
}

/// `file`, opened from `path`, if it is a regular file; `EFTYPE` otherwise.
fn regular(path: &Path, file: File) -> Result<File> {
    let meta = file.metadata().map_err(|err| Error::io(path, err))?;
    require_regular(path, &meta).map(|()| file)
}

/// Whether `path` names `file` right now (not a file put in its place).
fn names(path: &Path, file: &File) -> Result<bool> {
    let locked = file.metadata().map_err(|err| Error::io(path, err))?;
    match fs::metadata(path) {
        Ok(named) => Ok((named.dev(), named.ino()) == (locked.dev(), locked.ino())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io(path, err)),
    }
}

/// How long a waiter sleeps between attempts on a lock held by another.
const WAIT_RETRY: Duration = Duration::from_millis(2);

/// Take the exclusive lock on `path`, retrying while another holds it,
/// until `cancel` stops (its error) or `limit` has passed (`EBUSY`, naming
/// the lock): locks waited for this way guard one short read-modify-write,
/// so one held that long belongs to a stuck process, and a caller without
/// a deadline must not wait on it forever.
pub fn wait_exclusive(path: &Path, cancel: &CancelToken, limit: Duration) -> Result<HeldLock> {
    let started = Instant::now();
    loop {
        if let Some(held) = try_exclusive(path)? {
            return Ok(held);
        }
        cancel.check()?;
        if started.elapsed() >= limit {
            return Err(Error::new(
                ErrorKind::Busy,
                format!(
                    "{}: still locked by another process after {} s (stuck?)",
                    path.display(),
                    limit.as_secs_f64()
                ),
            ));
        }
        thread::sleep(WAIT_RETRY);
    }
}

/// Whether anyone holds the lock on `path` right now (a missing file: no;
/// anything but a regular file: `EFTYPE`, never opened to block).
/// The lock is only tested, never taken, so a probe cannot make a
/// concurrent [`try_exclusive`] fail.
pub fn is_held(path: &Path) -> Result<bool> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let file = match opened {
        Ok(file) => regular(path, file)?,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(Error::io(path, err)),
    };
    let mut probe = whole_file(libc::F_WRLCK);
    fcntl(&file, FcntlArg::F_OFD_GETLK(&mut probe))
        .map_err(|errno| Error::io(path, errno.into()))?;
    Ok(i32::from(probe.l_type) != libc::F_UNLCK)
}

/// A lock of `kind` over the whole file, as `fcntl` takes it.
fn whole_file(kind: libc::c_int) -> libc::flock {
    libc::flock {
        l_type: kind as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        // Open file description locks require 0 here.
        l_pid: 0,
    }
}

/// Cargo's lock on one of its profile directories, held by this process.
/// Dropping it unlocks.
#[derive(Debug)]
pub struct CargoLock {
    _lock: Flock<File>,
    path: PathBuf,
}

impl CargoLock {
    /// The lock file (`<profile>/.cargo-lock`).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Take cargo's lock file `path` (`<profile>/.cargo-lock`) as cargo takes
/// it, with `flock(2)`: `exclusive` to change the directory (no cargo, no
/// reader meanwhile), shared to read it (no cargo meanwhile). `None` while
/// a cargo (or an exclusive holder) has it. Never waits and never creates
/// the file: a missing one is `ENOENT`.
pub fn try_cargo_lock(path: &Path, exclusive: bool) -> Result<Option<CargoLock>> {
    let file = File::open(path).map_err(|err| Error::io(path, err))?;
    let how = if exclusive {
        FlockArg::LockExclusiveNonblock
    } else {
        FlockArg::LockSharedNonblock
    };
    match Flock::lock(file, how) {
        Ok(lock) => Ok(Some(CargoLock {
            _lock: lock,
            path: path.to_owned(),
        })),
        Err((_, Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, errno)) => Err(Error::io(path, errno.into())),
    }
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
/// can see the file: network filesystems and user-space ones, by the magic
/// number `statfs` reports (Linux's `linux/magic.h`; from `nix` where it
/// names them, so they cannot be mistyped).
const UNTRUSTED_FILESYSTEMS: [(FsType, &str); 10] = [
    (statfs::NFS_SUPER_MAGIC, "nfs"),
    (statfs::SMB_SUPER_MAGIC, "smb"),
    (FsType(0xff53_4d42), "cifs"), // CIFS_SUPER_MAGIC
    (FsType(0xfe53_4d42), "smb2"), // SMB2_SUPER_MAGIC
    (FsType(0x0102_1997), "9p"),   // V9FS_MAGIC
    (statfs::FUSE_SUPER_MAGIC, "fuse"),
    (statfs::AFS_SUPER_MAGIC, "afs"),
    (FsType(0x6b41_4653), "afs"), // AFS_FS_MAGIC, the kernel's own AFS client
    (FsType(0x0bd0_0bd0), "lustre"), // LL_SUPER_MAGIC
    (statfs::CODA_SUPER_MAGIC, "coda"),
];

/// How far `flock` can be trusted in `dir`, from its filesystem type. A
/// `statfs` failure is reported, not guessed at.
pub fn trust(dir: &Path) -> Result<LockTrust> {
    let stat = statfs::statfs(dir).map_err(|errno| Error::io(dir, errno.into()))?;
    Ok(trust_of_type(dir, stat.filesystem_type()))
}

/// How far `flock` can be trusted in `dir`, on a filesystem of type `magic`.
fn trust_of_type(dir: &Path, magic: FsType) -> LockTrust {
    match UNTRUSTED_FILESYSTEMS.iter().find(|(m, _)| *m == magic) {
        Some((_, name)) => {
            warn_once(dir, name);
            LockTrust::RecordOnly((*name).to_owned())
        }
        None => LockTrust::Kernel,
    }
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
    use std::{fs, process::Command};

    use super::*;

    /// Shared holders share; an exclusive one excludes them and they it.
    #[test]
    fn shared_locks_keep_an_exclusive_one_away() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reading");
        let (first, second) = (try_shared(&path).unwrap(), try_shared(&path).unwrap());
        assert!(first.is_some() && second.is_some());
        assert!(try_exclusive(&path).unwrap().is_none());
        drop((first, second));
        let exclusive = try_exclusive(&path).unwrap();
        assert!(exclusive.is_some());
        assert!(try_shared(&path).unwrap().is_none());
    }

    /// Every filesystem whose `flock` is not shared by all who see the file,
    /// by the magic number Linux's `statfs` reports for it (`linux/magic.h`),
    /// from `libc` where it has them.
    const UNTRUSTED: [(libc::c_long, &str); 10] = [
        (libc::NFS_SUPER_MAGIC, "nfs"),
        (libc::SMB_SUPER_MAGIC, "smb"),
        (0xff53_4d42, "cifs"),
        (0xfe53_4d42, "smb2"),
        (0x0102_1997, "9p"),
        (libc::FUSE_SUPER_MAGIC, "fuse"),
        (libc::AFS_SUPER_MAGIC, "afs"),
        (0x6b41_4653, "afs"),
        (0x0bd0_0bd0, "lustre"),
        (libc::CODA_SUPER_MAGIC, "coda"),
    ];

    /// Local filesystems, where `flock` is the authority.
    const TRUSTED: [libc::c_long; 5] = [
        libc::EXT4_SUPER_MAGIC,
        libc::TMPFS_MAGIC,
        libc::BTRFS_SUPER_MAGIC,
        libc::XFS_SUPER_MAGIC,
        libc::OVERLAYFS_SUPER_MAGIC,
    ];

    /// The child of the warn-once test reads which directory to judge here.
    const WARN_DIR: &str = "NATIVES_TEST_WARN_DIR";

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

    /// A FIFO, a directory or a device where a lock file should be is
    /// refused at once, by a probe and by an attempt alike: opening a FIFO
    /// to read would wait for a writer forever.
    #[test]
    fn a_lock_file_that_is_not_a_regular_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.lock");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let zero = dir.path().join("zero.lock");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for path in [fifo, zero, dir.path().to_owned()] {
            let shown = path.display().to_string();
            let (probed, taken) = natives_testkit::within(&shown, Duration::from_secs(10), {
                let path = path.clone();
                move || {
                    (
                        is_held(&path).map_err(|e| e.code()),
                        try_exclusive(&path).map(|_| ()).map_err(|e| e.code()),
                    )
                }
            });
            assert_eq!(probed, Err("EFTYPE"), "{shown}");
            let expected = if path == dir.path() {
                "EISDIR"
            } else {
                "EFTYPE"
            };
            assert_eq!(taken, Err(expected), "{shown}");
        }
    }

    /// A child spawned while the lock is held shares its open file until the
    /// child execs (or for good, if it never does); letting the lock go must
    /// free it even so.
    #[test]
    fn a_released_lock_is_free_while_a_copy_of_its_descriptor_lives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = try_exclusive(&path).unwrap().expect("free lock");
        let inherited = held.file.try_clone().unwrap();
        drop(held);
        assert!(!is_held(&path).unwrap(), "a copy of the descriptor kept it");
        assert!(try_exclusive(&path).unwrap().is_some());
        drop(inherited);
    }

    /// The lock file is deleted and recreated, and the new one locked by
    /// another holder, after this attempt opened the old one: the attempt
    /// must not hold the old file's lock as a second holder.
    #[test]
    fn a_lock_file_replaced_while_locking_is_not_held_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let mut other = None;
        let ours = try_exclusive_observed(&path, &mut || {
            if other.is_none() {
                fs::remove_file(&path).unwrap();
                other = try_exclusive(&path).unwrap();
            }
        })
        .unwrap();
        assert!(other.is_some(), "the replacement was not locked");
        assert!(ours.is_none(), "two holders: one on the replaced file");
        drop(other);
        let mut removed = false;
        let ours = try_exclusive_observed(&path, &mut || {
            if !removed {
                fs::remove_file(&path).unwrap();
                removed = true;
            }
        })
        .unwrap();
        let held = ours.expect("a free replacement is taken");
        assert!(
            try_exclusive(&path).unwrap().is_none(),
            "the held lock is the one the path names"
        );
        drop(held);
    }

    #[test]
    fn a_waiter_takes_a_lock_let_go_meanwhile_and_gives_up_on_one_held_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = try_exclusive(&path).unwrap().unwrap();
        let started = Instant::now();
        let err =
            wait_exclusive(&path, &CancelToken::new(), Duration::from_millis(100)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert_eq!(err.code(), "EBUSY");
        assert!(err.message().contains(&path.display().to_string()), "{err}");
        let cancelled = CancelToken::new();
        cancelled.cancel();
        let err = wait_exclusive(&path, &cancelled, Duration::from_secs(60)).unwrap_err();
        assert_eq!(err.code(), "ABORT_ERR");
        let letting_go = thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            drop(held);
        });
        let taken = wait_exclusive(&path, &CancelToken::new(), Duration::from_secs(60)).unwrap();
        letting_go.join().unwrap();
        assert!(is_held(taken.path()).unwrap());
    }

    /// Cargo's lock: readers share it and a writer excludes them (that a
    /// real cargo waits for a reader is tested with cargo, in the pool's
    /// tests).
    #[test]
    fn cargo_locks_share_readers_and_exclude_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".cargo-lock");
        assert_eq!(try_cargo_lock(&path, false).unwrap_err().code(), "ENOENT");
        fs::write(&path, "").unwrap();
        let reader = try_cargo_lock(&path, false).unwrap().expect("free");
        let second = try_cargo_lock(&path, false).unwrap().expect("shared");
        assert!(try_cargo_lock(&path, true).unwrap().is_none());
        drop((reader, second));
        let writer = try_cargo_lock(&path, true).unwrap().expect("free again");
        assert_eq!(writer.path(), path);
        assert!(try_cargo_lock(&path, false).unwrap().is_none());
    }

    #[test]
    fn network_and_user_space_filesystems_fall_back_to_records() {
        let dir = Path::new("/srv/shared");
        let misjudged: Vec<String> = UNTRUSTED
            .iter()
            .map(|&(magic, name)| (magic, LockTrust::RecordOnly(name.to_owned())))
            .chain(TRUSTED.iter().map(|&magic| (magic, LockTrust::Kernel)))
            .filter_map(|(magic, expected)| {
                let judged = trust_of_type(dir, FsType(magic));
                (judged != expected).then(|| format!("{magic:#x}: {judged:?}, not {expected:?}"))
            })
            .collect();
        assert!(misjudged.is_empty(), "{misjudged:#?}");
    }

    /// A real process judges several directories, trusted and not: its
    /// standard error holds one warning, for the first untrusted one.
    #[test]
    fn an_untrusted_filesystem_is_warned_about_once_per_process() {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "lock::tests::warn_child",
                "--nocapture",
            ])
            .env(WARN_DIR, "/srv/shared")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr,
            "natives: /srv/shared/nfs is on nfs, where file locks cannot be trusted; \
             ownership falls back to process records and never reclaims another host's lease\n"
        );
    }

    /// The child of the warn-once test.
    #[test]
    #[ignore = "run by an_untrusted_filesystem_is_warned_about_once_per_process in a child process"]
    fn warn_child() {
        let Ok(dir) = std::env::var(WARN_DIR) else {
            return;
        };
        let dir = Path::new(&dir);
        assert_eq!(
            trust_of_type(&dir.join("ext4"), FsType(TRUSTED[0])),
            LockTrust::Kernel
        );
        for (magic, name) in UNTRUSTED {
            let judged = trust_of_type(&dir.join(name), FsType(magic));
            assert_eq!(judged, LockTrust::RecordOnly(name.to_owned()));
        }
        assert_eq!(
            trust_of_type(&dir.join("nfs"), FsType(UNTRUSTED[0].0)),
            LockTrust::RecordOnly("nfs".to_owned())
        );
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
