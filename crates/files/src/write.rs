//! Writing one file atomically, in the directory resolution checked, keeping
//! what the old file carried.
//!
//! The new contents go to a temporary file created next to the target with
//! `O_CREAT | O_EXCL | O_NOFOLLOW` (so no planted link can redirect it),
//! synced, then renamed over the target: a reader sees the old file or the
//! new one, never a mix, and a crash leaves at most a stray temporary file.
//!
//! Replacing a file by rename gives the name a new inode, so:
//! - owner, group, mode (set-id bits included) and extended attributes (ACLs,
//!   labels) are copied from the old file, each where the process is
//!   permitted to set it;
//! - a file with more than one hard link is refused (`HardLinked`): a rename
//!   would leave the other names holding the old contents, and updating it in
//!   place would change files elsewhere (package stores hard-link one file
//!   into many projects) and give up atomicity;
//! - a file nobody may write (no `w` bit), or that this process may not
//!   write, is refused (`ReadOnly`) even where the directory would allow the
//!   rename: the mode says it is not to be changed.

use std::{
    os::fd::AsFd,
    path::{Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result, resolve::Location};
use nix::{
    errno::Errno,
    fcntl::AtFlags,
    sys::stat::{FileStat, fstat},
    unistd::{AccessFlags, faccessat},
};

use self::metadata::{copy_metadata, set_executable};
use crate::{
    journal::{Ident, Journal, Name, Record},
    read::{Stamp, require_regular},
    sys::{errno_error, sync_dir},
};
use natives_system::{crash, durable::NewFile};

mod hidden;
mod metadata;
mod place;

pub(crate) use hidden::hidden_name;
#[cfg(test)]
pub(crate) use place::NO_SWAP;

#[cfg(test)]
mod link_tests;
#[cfg(test)]
mod tests;

/// What the file must be when the write lands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expect {
    /// Whatever is there (or nothing) is replaced. The default.
    #[default]
    Any,
    /// Nothing may be there: the write creates the file.
    Absent,
    /// The version that was read (refused as `Changed` if it was replaced,
    /// resized, modified or deleted since).
    Unchanged(Stamp),
}

/// What a write did.
#[derive(Debug)]
pub struct Written {
    /// The real path written.
    pub path: PathBuf,
    /// The file did not exist before.
    pub created: bool,
    /// Directories created on the way, outermost first.
    pub created_dirs: Vec<PathBuf>,
    /// The new file's version.
    pub stamp: Stamp,
}

/// What to write and how.
pub(crate) struct NewContents<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) expect: Expect,
    /// Make the file executable or not (`None`: an existing file keeps its
    /// mode; a new one is not executable).
    pub(crate) executable: Option<bool>,
}

/// Write `contents` to `location`, creating missing parent directories,
/// each step announced in `journal` first. `given` names the path in
/// errors. On failure the journal undoes what was made.
pub(crate) fn write_at(
    journal: &mut Journal,
    location: &mut Location,
    given: &Path,
    contents: &NewContents<'_>,
) -> Result<Written> {
    let old = location.stat()?;
    check_expectation(old.as_ref(), contents.expect, given)?;
    if let Some(old) = &old {
        check_replaceable(location, old, given)?;
    }
    let created_dirs = make_dirs(journal, location)?;
    let stamp = write_file(journal, location, given, contents, old.as_ref())?;
    Ok(Written {
        path: location.real_path(),
        created: old.is_none(),
        created_dirs,
        stamp,
    })
}

/// Create the directories missing on the way to `location`, each announced
/// in the journal first; their real paths, outermost first.
pub(crate) fn make_dirs(journal: &mut Journal, location: &mut Location) -> Result<Vec<PathBuf>> {
    for dir in location.missing_dirs() {
        journal.note(Record::Mkdir { path: Name(dir) })?;
    }
    location.create_missing_dirs(|_| crash::point("directory created"))
}

fn write_file(
    journal: &mut Journal,
    location: &Location,
    given: &Path,
    contents: &NewContents<'_>,
    old: Option<&FileStat>,
) -> Result<Stamp> {
    let dir = location
        .dir()
        .ok_or_else(|| crate::read::not_found(given))?;
    let target = location.real_path();
    let names = place::Names::beside(location.name());
    journal.note(Record::Write {
        target: Name(target.clone()),
        temp: Name(target.with_file_name(&names.temp)),
        copy: Name(target.with_file_name(&names.copy)),
        old: old.map(Ident::of),
    })?;
    let executable = old.is_none() && contents.executable == Some(true);
    let mut temp = NewFile::create(
        dir.as_fd(),
        names.temp.clone(),
        if executable { 0o777 } else { 0o666 },
    )
    .map_err(|errno| errno_error(given, errno))?;
    fill(&temp, location, given, contents, old)?;
    check_unchanged_since(location, old, given)?;
    place::put_in_place(journal, &mut temp, location, &names, old, given)?;
    crash::point("file put in place");
    sync_dir(dir);
    crash::point("directory synced");
    // Stamped once in place: the rename itself moves the status-change time.
    Ok(Stamp::of(
        &fstat(temp.file().as_fd()).map_err(|errno| errno_error(given, errno))?,
    ))
}

/// Write the new contents into the temporary file, give it the old
/// file's metadata (or the asked-for execute bits), and sync it.
fn fill(
    temp: &NewFile<'_>,
    location: &Location,
    given: &Path,
    contents: &NewContents<'_>,
    old: Option<&FileStat>,
) -> Result<()> {
    temp.write(contents.data)
        .map_err(|err| Error::io(given, err))?;
    if let Some(old) = old {
        copy_metadata(location, old, temp.file(), given)?;
    }
    if let Some(executable) = contents.executable {
        set_executable(temp.file(), executable, given)?;
    }
    temp.sync().map_err(|err| Error::io(given, err))
}

/// Refuse when the entry is not what the caller expects.
pub(crate) fn check_expectation(
    current: Option<&FileStat>,
    expect: Expect,
    given: &Path,
) -> Result<()> {
    let changed = |what: &str| {
        Err(Error::new(
            ErrorKind::Changed,
            format!("{}: {what}", given.display()),
        ))
    };
    match (expect, current) {
        (Expect::Any, _) | (Expect::Absent, None) => Ok(()),
        (Expect::Absent, Some(_)) => Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("{}: already exists", given.display()),
        )),
        (Expect::Unchanged(_), None) => changed("was deleted since it was read"),
        (Expect::Unchanged(stamp), Some(stat)) if stamp != Stamp::of(stat) => {
            changed("changed since it was read")
        }
        (Expect::Unchanged(_), Some(_)) => Ok(()),
    }
}

/// Refuse to replace anything but a writable regular file with one link.
pub(crate) fn check_replaceable(location: &Location, stat: &FileStat, given: &Path) -> Result<()> {
    require_regular(stat, given)?;
    if stat.st_nlink > 1 {
        return Err(Error::new(
            ErrorKind::HardLinked,
            format!(
                "{}: has {} hard links; replacing it would leave the other names with the old contents",
                given.display(),
                stat.st_nlink
            ),
        ));
    }
    let mode = stat.st_mode & 0o7777;
    if mode & 0o222 == 0 {
        return Err(read_only(given, &format!("is read-only (mode {mode:04o})")));
    }
    let dir = location
        .dir()
        .ok_or_else(|| crate::read::not_found(given))?;
    match faccessat(dir, location.name(), AccessFlags::W_OK, AtFlags::AT_EACCESS) {
        Ok(()) => Ok(()),
        Err(Errno::EACCES | Errno::EPERM) => Err(read_only(
            given,
            &format!(
                "is not writable by this process (mode {mode:04o}, owner uid {})",
                stat.st_uid
            ),
        )),
        Err(Errno::EROFS) => Err(read_only(given, "is on a read-only filesystem")),
        Err(errno) => Err(errno_error(given, errno)),
    }
}

fn read_only(given: &Path, why: &str) -> Error {
    Error::new(
        ErrorKind::ReadOnly,
        format!("{}: {why}; it was not changed", given.display()),
    )
}

/// Refuse when the entry was replaced (or appeared) while the new contents
/// were being written.
fn check_unchanged_since(location: &Location, old: Option<&FileStat>, given: &Path) -> Result<()> {
    let now = location.stat()?;
    let same = match (old, &now) {
        (None, None) => true,
        (Some(old), Some(now)) => Stamp::of(old) == Stamp::of(now),
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Changed,
            format!(
                "{}: changed while it was being written; it was not replaced",
                given.display()
            ),
        ))
    }
}
