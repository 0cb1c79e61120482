//! Small translations between the system's answers and the crate's errors.

pub(crate) use natives_core::resolve::{errno_error, file_kind};
use nix::sys::stat::SFlag;

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
