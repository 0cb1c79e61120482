//! Small translations between the system's answers and the crate's errors,
//! and the two directory operations every step of a change (the write, the
//! journal's undo) is made of: a rename that never replaces, and a flush.

use std::{ffi::OsStr, os::fd::OwnedFd};

pub(crate) use natives_core::resolve::{errno_error, file_kind};
use natives_system::durable;
use nix::{
    errno::Errno,
    fcntl::AtFlags,
    sys::stat::SFlag,
    unistd::{UnlinkatFlags, linkat, unlinkat},
};

/// What a file of this type is, for messages ("a FIFO (named pipe)").
pub(crate) fn kind_name(kind: SFlag) -> &'static str {
    match kind {
        SFlag::S_IFREG => "a regular file",
        SFlag::S_IFDIR => "a directory",
        SFlag::S_IFLNK => "a symlink",
        SFlag::S_IFIFO => "a FIFO (named pipe)",
        SFlag::S_IFSOCK => "a socket",
        SFlag::S_IFCHR => "a character device",
        SFlag::S_IFBLK => "a block device",
        _ => "a special file",
    }
}

/// Rename that fails with `EEXIST` instead of replacing an existing entry.
/// Where the filesystem lacks `RENAME_NOREPLACE`, a hard link (which never
/// replaces either) and an unlink do the same for anything but a directory.
pub(crate) fn rename_no_replace(
    from_dir: &OwnedFd,
    from: &OsStr,
    to_dir: &OwnedFd,
    to: &OsStr,
) -> nix::Result<()> {
    match durable::rename_no_replace(from_dir, from, to_dir, to) {
        Err(Errno::EINVAL) => {
            linkat(from_dir, from, to_dir, to, AtFlags::empty())?;
            unlinkat(from_dir, from, UnlinkatFlags::NoRemoveDir)
        }
        other => other,
    }
}

/// fsync a directory so a rename or unlink in it survives a crash (best
/// effort: some filesystems refuse to sync a directory).
pub(crate) fn sync_dir(dir: &OwnedFd) {
    let _ = durable::sync_dir(dir);
}
