//! Putting a written file in place while keeping the old one for the
//! batch's way back.
//!
//! The old file is swapped into the temporary file's name in one atomic
//! step (`renameat2` with `RENAME_EXCHANGE`): readers see the old file or
//! the new one, and the old one is kept whole — inode, bytes, metadata — so
//! undoing the write is swapping back. A filesystem that cannot swap gets a
//! copy of the old file (bytes, metadata and times) beside it first, then
//! the usual rename over it.

use std::{
    ffi::{OsStr, OsString},
    fs::File,
    os::fd::AsFd,
    path::Path,
};

use natives_core::{Error, ErrorKind, Result, resolve::Location};
use nix::{
    errno::Errno,
    fcntl::{OFlag, RenameFlags, openat, renameat, renameat2},
    sys::{
        stat::{FileStat, Mode, fstat, futimens},
        time::TimeSpec,
    },
};

use super::{hidden::hidden_name, metadata::copy_metadata};
use crate::{
    journal::{Backup, Ident, Journal, Record},
    sys::{errno_error, rename_no_replace},
};
use natives_system::{crash, durable::NewFile};

/// The hidden names a write uses beside its target.
pub(crate) struct Names {
    /// Where the new contents are written.
    pub(crate) temp: OsString,
    /// Where a copy of the old file goes if the filesystem cannot swap.
    pub(crate) copy: OsString,
}

impl Names {
    pub(crate) fn beside(target: &OsStr) -> Names {
        Names {
            temp: hidden_name(target, "tmp"),
            copy: hidden_name(target, "orig"),
        }
    }
}

/// Put the complete temporary `file` at `location`, keeping `old` (what is
/// there) as the journal records.
pub(crate) fn put_in_place(
    journal: &mut Journal,
    temp: &mut NewFile<'_>,
    location: &Location,
    names: &Names,
    old: Option<&FileStat>,
    given: &Path,
) -> Result<()> {
    let dir = location
        .dir()
        .ok_or_else(|| crate::read::not_found(given))?;
    let new = Ident::of(&fstat(temp.file().as_fd()).map_err(|errno| errno_error(given, errno))?);
    let Some(old) = old else {
        journal.note(Record::Placing {
            new,
            backup: Backup::None,
        })?;
        rename_no_replace(dir, temp.name(), dir, location.name()).map_err(|errno| match errno {
            Errno::EEXIST => appeared(given),
            errno => errno_error(given, errno),
        })?;
        temp.keep();
        return Ok(());
    };
    journal.note(Record::Placing {
        new,
        backup: Backup::Swapped,
    })?;
    if swapped(temp, location, given)? {
        return Ok(());
    }
    let copy = copy_old(location, old, &names.copy, given)?;
    crash::point("old file copied");
    journal.note(Record::Placing {
        new,
        backup: Backup::Copied { ident: copy },
    })?;
    renameat(dir, temp.name(), dir, location.name()).map_err(|errno| errno_error(given, errno))?;
    temp.keep();
    Ok(())
}

/// Swap the temporary file with the old one at `location` in one step:
/// `false` where the filesystem cannot (or a test stands for one that
/// cannot), and nothing was done.
fn swapped(temp: &mut NewFile<'_>, location: &Location, given: &Path) -> Result<bool> {
    if !swap_supported() {
        return Ok(false);
    }
    let dir = location
        .dir()
        .ok_or_else(|| crate::read::not_found(given))?;
    match renameat2(
        dir,
        temp.name(),
        dir,
        location.name(),
        RenameFlags::RENAME_EXCHANGE,
    ) {
        Ok(()) => {
            temp.keep();
            Ok(true)
        }
        Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => Ok(false),
        Err(errno) => Err(errno_error(given, errno)),
    }
}

/// Copy the old file at `location` (still `old`) to `name` beside it:
/// bytes, metadata and times; what the copy is.
fn copy_old(location: &Location, old: &FileStat, name: &OsStr, given: &Path) -> Result<Ident> {
    let dir = location
        .dir()
        .ok_or_else(|| crate::read::not_found(given))?;
    let open = |name: &OsStr, flags: OFlag| {
        openat(
            dir,
            name,
            flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        )
        .map(File::from)
        .map_err(|errno| errno_error(given, errno))
    };
    let mut source = open(location.name(), OFlag::O_RDONLY | OFlag::O_NONBLOCK)?;
    if !Ident::of(old)
        .same_inode(&fstat(source.as_fd()).map_err(|errno| errno_error(given, errno))?)
    {
        return Err(Error::new(
            ErrorKind::Changed,
            format!(
                "{}: changed while it was being written; it was not replaced",
                given.display()
            ),
        ));
    }
    let mut copy = open(name, OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL)?;
    std::io::copy(&mut source, &mut copy).map_err(|err| Error::io(given, err))?;
    copy_metadata(location, old, &copy, given)?;
    let atime = TimeSpec::new(old.st_atime, old.st_atime_nsec);
    let mtime = TimeSpec::new(old.st_mtime, old.st_mtime_nsec);
    futimens(&copy, &atime, &mtime).map_err(|errno| errno_error(given, errno))?;
    copy.sync_all().map_err(|err| Error::io(given, err))?;
    Ok(Ident::of(
        &fstat(copy.as_fd()).map_err(|errno| errno_error(given, errno))?,
    ))
}

fn appeared(given: &Path) -> Error {
    Error::new(
        ErrorKind::Changed,
        format!(
            "{}: appeared while it was being written; it was not replaced",
            given.display()
        ),
    )
}

/// Whether to swap at all: always, except in tests of the copy path
/// (`NATIVES_FILES_NO_SWAP` set), which stand for filesystems that cannot.
fn swap_supported() -> bool {
    #[cfg(test)]
    if std::env::var_os(NO_SWAP).is_some() {
        return false;
    }
    true
}

/// The variable that makes a test process copy instead of swap.
#[cfg(test)]
pub(crate) const NO_SWAP: &str = "NATIVES_FILES_NO_SWAP";
