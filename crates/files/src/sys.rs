//! Small translations between the system's answers and the crate's errors.

use std::{io, path::Path};

use natives_core::Error;
use nix::{
    errno::Errno,
    sys::stat::{FileStat, SFlag},
};

/// `errno` from an operation on `path`, as the shared error type.
pub(crate) fn errno_error(path: &Path, errno: Errno) -> Error {
    Error::io(path, io::Error::from_raw_os_error(errno as i32))
}

/// The file-type bits of a status.
pub(crate) fn file_kind(stat: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits())
}

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
