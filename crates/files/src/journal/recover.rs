//! Finding the journals of batches that died, and finishing or rolling
//! them back as their records say.
//!
//! A journal directory is honoured only when it is this user's and no one
//! else's (owner and mode 0700), and a journal only when this user owns it,
//! its lock can be taken (its batch is over) and every path it names lies
//! below the directory that holds it: a journal planted by someone else
//! cannot make a recovery move or remove anything.

use std::{
    collections::HashSet,
    ffi::{OsStr, OsString},
    fs::File,
    io::Read,
    os::{fd::OwnedFd, unix::ffi::OsStrExt},
    path::{Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result};
use nix::{
    dir::Dir,
    errno::Errno,
    fcntl::{Flock, FlockArg, OFlag, open, openat},
    sys::stat::{Mode, SFlag, fstat},
    unistd::{UnlinkatFlags, geteuid, unlinkat},
};

use super::{
    dir::{JOURNAL_DIR, open_own_dir, remove_dir_if_empty},
    record::{Record, Replay},
    steps,
};
use crate::sys::errno_error;
use natives_system::crash;

/// What a recovery did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Batches that had not committed, rolled back.
    pub rolled_back: usize,
    /// Batches that had committed, finished.
    pub finished: usize,
    /// What could not be resolved (each left as it is, its journal kept).
    pub unresolved: Vec<String>,
}

/// Recover every batch that died with its journal in `dir` or one of its
/// ancestors: those that had committed are finished, the others rolled
/// back. Journals of running batches are left alone.
pub fn recover(dir: &Path) -> Result<Recovery> {
    let real = std::fs::canonicalize(dir).map_err(|err| Error::io(dir, err))?;
    let mut recovery = Recovery::default();
    recover_near(&[real], Path::new("/"), &mut recovery);
    Ok(recovery)
}

/// [`recover`] for the directories a batch is about to change, looking no
/// higher than `top` (the confining root, or `/`); each directory is looked
/// at once.
pub(crate) fn recover_near(dirs: &[PathBuf], top: &Path, recovery: &mut Recovery) {
    let mut seen = HashSet::new();
    for dir in dirs {
        for ancestor in dir.ancestors() {
            if !ancestor.starts_with(top) || !seen.insert(ancestor.to_path_buf()) {
                break;
            }
            recover_dir(ancestor, recovery);
        }
    }
}

/// Recover the journals in `<holder>/JOURNAL_DIR`, if there is one of ours.
fn recover_dir(holder: &Path, recovery: &mut Recovery) {
    let path = holder.join(JOURNAL_DIR);
    let Ok(root) = open(
        holder,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(dir) = open_own_dir(&root, OsStr::new(JOURNAL_DIR), &path) else {
        return;
    };
    for name in journal_names(&dir) {
        match recover_journal(&dir, &name, holder) {
            Ok(Some(true)) => recovery.finished += 1,
            Ok(Some(false)) => recovery.rolled_back += 1,
            Ok(None) => {}
            Err(err) => recovery.unresolved.push(err.to_string()),
        }
    }
    remove_dir_if_empty(&dir);
}

/// The journals in `dir`, and the files of batches that died before their
/// journal was named.
fn journal_names(dir: &OwnedFd) -> Vec<OsString> {
    let Ok(mut listing) = Dir::openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    listing
        .iter()
        .filter_map(|entry| entry.ok())
        .map(|entry| OsStr::from_bytes(entry.file_name().to_bytes()).to_os_string())
        .filter(|name| name.as_bytes().ends_with(b".journal") || name.as_bytes().ends_with(b".new"))
        .collect()
}

/// Recover one journal: `Some(committed)` when it was resolved and
/// removed, `None` when its batch still runs.
fn recover_journal(dir: &OwnedFd, name: &OsStr, holder: &Path) -> Result<Option<bool>> {
    let path = holder.join(JOURNAL_DIR).join(name);
    let fd = match openat(
        dir,
        name,
        OFlag::O_RDWR | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(None),
        Err(errno) => return Err(errno_error(&path, errno)),
    };
    let mut file = match Flock::lock(File::from(fd), FlockArg::LockExclusiveNonblock) {
        Ok(locked) => locked,
        Err((_, Errno::EWOULDBLOCK)) => return Ok(None),
        Err((_, errno)) => return Err(errno_error(&path, errno)),
    };
    let stat = fstat(&*file).map_err(|errno| errno_error(&path, errno))?;
    if stat.st_nlink == 0 {
        // Its batch ended and removed it while this waited.
        return Ok(None);
    }
    if stat.st_uid != geteuid().as_raw()
        || SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG
    {
        return Err(refused(&path, "is not a regular file of this user's"));
    }
    let replay = read_journal(&mut file, &path)?;
    if let Some(outside) = steps::paths(&replay.steps)
        .into_iter()
        .find(|p| !p.starts_with(holder))
    {
        return Err(refused(
            &path,
            &format!("names {}, outside {}", outside.display(), holder.display()),
        ));
    }
    let committed = replay.committed;
    let failures = match committed {
        true => steps::finish_all(&replay.steps),
        false => steps::undo_all(&replay.steps),
    };
    if !failures.is_empty() {
        return Err(refused(&path, &failures.join("; ")));
    }
    unlinkat(dir, name, UnlinkatFlags::NoRemoveDir).map_err(|errno| errno_error(&path, errno))?;
    crash::point("journal recovered");
    Ok(Some(committed))
}

/// The steps a journal file records; a last line cut short by the crash
/// is a step that was never taken.
fn read_journal(file: &mut File, path: &Path) -> Result<Replay> {
    let mut text = Vec::new();
    file.read_to_end(&mut text)
        .map_err(|err| Error::io(path, err))?;
    let mut replay = Replay::default();
    let mut lines = text.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let last = lines.peek().is_none();
        match serde_json::from_slice::<Record>(line) {
            Ok(record) => replay.take(record),
            Err(_) if last => {}
            Err(err) => {
                return Err(refused(
                    path,
                    &format!("holds a line that is not a record ({err})"),
                ));
            }
        }
    }
    Ok(replay)
}

fn refused(path: &Path, why: &str) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("journal {}: {why}; left as it is", path.display()),
    )
}
