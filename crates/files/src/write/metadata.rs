//! The metadata a written file leaves with: the old file's owner, group,
//! mode and extended attributes, which a replacement by rename would lose,
//! or the execute bits the caller asked for. Both the write and the copy
//! of the old file kept for undoing it (`place.rs`) take them from here.

use std::{fs::File, os::fd::AsFd, path::Path};

use natives_core::{Result, resolve::Location};
use nix::{
    fcntl::{OFlag, openat},
    sys::stat::{FileStat, Mode, fchmod, fstat},
    unistd::{Gid, Uid, fchown},
};
use xattr::FileExt;

use crate::sys::errno_error;

/// Give the new file the old one's owner, group, mode and extended
/// attributes. Owner, group and attributes are kept where permitted (an
/// unprivileged process cannot give a file away); the mode always is.
pub(super) fn copy_metadata(
    location: &Location,
    old: &FileStat,
    new: &File,
    given: &Path,
) -> Result<()> {
    // Ownership first: changing it clears the set-id bits the mode restores.
    if fchown(
        new,
        Some(Uid::from_raw(old.st_uid)),
        Some(Gid::from_raw(old.st_gid)),
    )
    .is_err()
    {
        let _ = fchown(new, None, Some(Gid::from_raw(old.st_gid)));
    }
    fchmod(new, Mode::from_bits_truncate(old.st_mode & 0o7777))
        .map_err(|errno| errno_error(given, errno))?;
    if let Some(old_file) = open_for_attributes(location) {
        copy_xattrs(&old_file, new);
    }
    Ok(())
}

/// Give `file` execute permission wherever it has read permission (as
/// `chmod +x` does under a umask), or take execute permission away.
pub(super) fn set_executable(file: &File, executable: bool, given: &Path) -> Result<()> {
    let mode = fstat(file.as_fd())
        .map_err(|errno| errno_error(given, errno))?
        .st_mode
        & 0o7777;
    let new = if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    fchmod(file, Mode::from_bits_truncate(new)).map_err(|errno| errno_error(given, errno))
}

/// The old file opened for reading its attributes; `None` when it cannot be
/// (an unreadable file keeps no attributes across the replace).
fn open_for_attributes(location: &Location) -> Option<File> {
    let dir = location.dir()?;
    openat(
        dir,
        location.name(),
        OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .ok()
    .map(File::from)
}

fn copy_xattrs(old: &File, new: &File) {
    let Ok(names) = old.list_xattr() else {
        return;
    };
    for name in names {
        if let Ok(Some(value)) = old.get_xattr(&name) {
            // Some namespaces (security.*, trusted.*) need privileges: skipped without them.
            let _ = new.set_xattr(&name, &value);
        }
    }
}
