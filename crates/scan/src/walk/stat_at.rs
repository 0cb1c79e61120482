//! `lstat` relative to open directory handles: the walk's per-entry type
//! and mtime at one kernel lookup instead of one per path component.

use std::path::Path;

use crate::entries::{FileType, path_to_bytes};

/// `lstat` relative to open handles on parent directories.
///
/// An `lstat` of a deep path costs one kernel lookup per component; a
/// `fstatat` on an open parent costs one. The walker visits a directory's
/// children interleaved with their subtrees, so each thread keeps the
/// handles of the directories it saw recently (bounded by
/// [`OPEN_PARENTS_MAX`]).
#[derive(Default)]
pub(super) struct StatAt {
    #[cfg(unix)]
    parents: std::collections::HashMap<Box<[u8]>, std::os::fd::OwnedFd>,
    /// The parent used last: siblings usually come in runs, so most lookups
    /// end at this comparison, without hashing.
    #[cfg(unix)]
    last: Option<(Box<[u8]>, std::os::fd::RawFd)>,
}

/// Directory handles one walker thread keeps open: deeper than any real
/// tree's working set, far below any descriptor limit.
#[cfg(unix)]
const OPEN_PARENTS_MAX: usize = 256;

impl StatAt {
    /// Type and mtime of `path`, or `None` when it vanished mid-walk.
    #[cfg(unix)]
    pub(super) fn lstat(&mut self, path: &Path) -> Option<(FileType, Option<i64>)> {
        use nix::{
            fcntl::AtFlags,
            sys::stat::{SFlag, fstatat},
        };
        // Split on the last `/` by hand: `Path::parent` parses components.
        let bytes = path_to_bytes(path);
        let slash = memchr::memrchr(b'/', &bytes)?;
        let (parent, name) = (&bytes[..slash.max(1)], &bytes[slash + 1..]);
        let fd = self.parent_fd(parent)?;
        // SAFETY: `fd` is owned by `self.parents` and stays open until the
        // next call to `parent_fd`, after this use.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let stat = fstatat(fd, name, AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        let file_type = match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
            SFlag::S_IFLNK => FileType::Symlink,
            SFlag::S_IFDIR => FileType::Dir,
            SFlag::S_IFREG => FileType::File,
            _ => FileType::Other,
        };
        let mtime_ms = stat
            .st_mtime
            .checked_mul(1000)?
            .checked_add(stat.st_mtime_nsec / 1_000_000);
        Some((file_type, mtime_ms))
    }

    /// An open `O_PATH` handle on `parent`, reused when possible.
    #[cfg(unix)]
    fn parent_fd(&mut self, parent: &[u8]) -> Option<std::os::fd::RawFd> {
        use nix::fcntl::{OFlag, open};
        use std::os::fd::AsRawFd;
        if let Some((last, fd)) = &self.last
            && **last == *parent
        {
            return Some(*fd);
        }
        let fd = match self.parents.get(parent) {
            Some(fd) => fd.as_raw_fd(),
            None => {
                if self.parents.len() >= OPEN_PARENTS_MAX {
                    self.parents.clear();
                }
                let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
                let owned = open(parent, flags, nix::sys::stat::Mode::empty()).ok()?;
                let fd = owned.as_raw_fd();
                self.parents.insert(parent.into(), owned);
                fd
            }
        };
        self.last = Some((parent.into(), fd));
        Some(fd)
    }

    #[cfg(not(unix))]
    pub(super) fn lstat(&mut self, path: &Path) -> Option<(FileType, Option<i64>)> {
        let metadata = fs::symlink_metadata(path).ok()?;
        let mtime_ms = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok());
        Some((FileType::from_std(metadata.file_type()), mtime_ms))
    }
}
