//! The directory that holds a tree's journals, and whose it must be: a
//! batch writes its journal there (journal.rs) and a recovery reads the
//! journals of dead batches from it (recover.rs) only when this user alone
//! owns it; it goes when its last journal does.

use std::{ffi::OsStr, os::fd::OwnedFd, path::Path};

use natives_core::{Error, ErrorKind, Result};
use nix::{
    fcntl::{OFlag, openat},
    sys::stat::{Mode, fstat},
    unistd::{UnlinkatFlags, geteuid, unlinkat},
};

use crate::sys::errno_error;

/// The directory that holds the journals of the batches running below its
/// parent.
pub const JOURNAL_DIR: &str = ".natives-changes";

/// Open the directory `name` in `parent` for journals: it must be this
/// user's and no one else's (mode 0700), and not a link.
pub(super) fn open_own_dir(parent: &OwnedFd, name: &OsStr, path: &Path) -> Result<OwnedFd> {
    let dir = openat(
        parent,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| errno_error(path, errno))?;
    let stat = fstat(&dir).map_err(|errno| errno_error(path, errno))?;
    if stat.st_uid != geteuid().as_raw() || stat.st_mode & 0o077 != 0 {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "{}: belongs to another user or is open to others",
                path.display()
            ),
        ));
    }
    Ok(dir)
}

/// Remove the journal directory `dir` when it holds nothing more.
pub(super) fn remove_dir_if_empty(dir: &OwnedFd) {
    // Through `..` and the name: rmdir takes no handle. The parent was reached through this handle.
    if let Ok(parent) = openat(
        dir,
        "..",
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        let _ = unlinkat(&parent, JOURNAL_DIR, UnlinkatFlags::RemoveDir);
    }
}
