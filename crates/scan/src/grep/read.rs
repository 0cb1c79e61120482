//! Opening and reading the files a grep searches, at the lowest per-file
//! cost that keeps the safety promises.
//!
//! A search over many small files spends most of its time in the kernel,
//! not in the regex: resolving each path on `open`, then reading. So:
//! - A file is opened relative to a handle on its directory (`openat`), so
//!   the kernel resolves one name instead of every component of an
//!   absolute path. Candidates come in path order, so siblings follow one
//!   another and each worker keeps the handle of the directory it used
//!   last.
//! - Opening never blocks (`O_NONBLOCK`, in case a FIFO replaced the file
//!   since the scan), and the `fstat` that follows refuses anything but a
//!   regular file before a byte is read.
//! - A file the scan found is opened without following a symlink at any
//!   component (`O_NOFOLLOW` on the name, `RESOLVE_NO_SYMLINKS` on its
//!   directory): the scan listed a regular file under the root, and a
//!   cached list may be up to a TTL old, so a file or directory replaced by
//!   a link since then must not lead the search out of the root. Only a
//!   file the caller named is opened through links, as the caller meant.
//! - A confined search (see `crate::beneath`) holds a root opened without
//!   following a link, and opens each file with one `openat2` from it
//!   (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, `O_NOFOLLOW`) rather than
//!   from a directory handle kept since: a kept handle stays with its
//!   directory wherever it is moved, and the root is where the caller's
//!   check was made. A named file is then opened without links too.
//! - A file no larger than [`SLICE_MAX`] is read whole into a buffer the
//!   worker reuses and searched as a slice. Its size comes from that same
//!   `fstat`, so no further `read` is spent meeting the end of the file; a
//!   file that grows meanwhile is searched up to the size it had when
//!   opened, as with a memory map. Larger files, and files reporting size 0
//!   (pseudo-files whose size says nothing), are streamed instead.

use std::{
    fs::{File, Metadata},
    io::{self, Read},
    path::{Path, PathBuf},
};

#[cfg(unix)]
use crate::beneath::{open_dir_without_links, open_file_without_links};
use crate::content_index::identity::{Identity, nanos};

/// The largest file read whole: `grep-searcher`'s first block (64 KiB).
/// Binary detection on a slice looks at its first block only, and a
/// streamed search looks at each block it reads; for a file of at most one
/// block both see the whole file, so the two searches report the same.
pub(super) const SLICE_MAX: usize = 64 * 1024;

/// The directory candidate paths are relative to, held open.
pub(super) struct Root {
    path: PathBuf,
    /// Whether every file is opened beneath it without links (see the
    /// module docs).
    confined: bool,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

impl Root {
    /// The root at `path`; a `confined` one is opened without following a
    /// link at any component (`OutsideRoot` when one is on the way).
    pub(super) fn open(path: &Path, confined: bool) -> crate::error::Result<Root> {
        #[cfg(unix)]
        let fd = match confined {
            true => crate::beneath::open_root(path)
                .map_err(|err| crate::beneath::root_error(path, err))?,
            false => open_dir(None, path.as_os_str())
                .map_err(|err| crate::error::Error::io(path, err))?,
        };
        Ok(Root {
            path: path.to_path_buf(),
            confined,
            #[cfg(unix)]
            fd,
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The root's device when it is on a local filesystem: one whose `stat`
    /// answers come from the kernel's own inodes, never from a cache of a
    /// remote server's attributes.
    #[cfg(target_os = "linux")]
    pub(super) fn local_device(&self) -> Option<u64> {
        /// `statfs` magic numbers (linux/magic.h): ext2/3/4, XFS, Btrfs,
        /// tmpfs, ramfs, overlayfs, F2FS, bcachefs, ZFS.
        const LOCAL: [u64; 9] = [
            0xEF53,
            0x5846_5342,
            0x9123_683E,
            0x0102_1994,
            0x8584_58F6,
            0x794C_7630,
            0xF2F5_2010,
            0xCA45_1A4E,
            0x2FC1_2FC1,
        ];
        let fs = nix::sys::statfs::fstatfs(&self.fd).ok()?;
        let local = LOCAL.contains(&(fs.filesystem_type().0 as u64));
        local.then(|| nix::sys::stat::fstat(&self.fd).ok().map(|stat| stat.st_dev))?
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn local_device(&self) -> Option<u64> {
        None
    }
}

fn not_a_file() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// One worker's way into the tree: the root, the directory it used last,
/// and the buffer small files are read into.
pub(super) struct Opener<'a> {
    root: &'a Root,
    /// Whether a symlink may be followed: only for a file the caller named.
    follows_links: bool,
    #[cfg(unix)]
    parent_path: Vec<u8>,
    #[cfg(unix)]
    parent_fd: Option<std::os::fd::OwnedFd>,
    buffer: Vec<u8>,
    /// How much of `buffer` the last read filled.
    filled: usize,
}

impl<'a> Opener<'a> {
    /// An opener into `root`; `explicit` for a file the caller named, which
    /// is opened through links unless the root is confined (see the module
    /// docs).
    pub(super) fn new(root: &'a Root, explicit: bool) -> Opener<'a> {
        Opener {
            root,
            follows_links: explicit && !root.confined,
            #[cfg(unix)]
            parent_path: Vec::new(),
            #[cfg(unix)]
            parent_fd: None,
            buffer: Vec::new(),
            filled: 0,
        }
    }

    /// The full path of `relative`, for error messages.
    pub(super) fn path_of(&self, relative: &[u8]) -> PathBuf {
        self.root.path.join(crate::entries::bytes_to_path(relative))
    }

    /// For a confined root, what reaching `relative` beneath it finds now,
    /// after it failed to open: whether it is there to be named, gone (a
    /// listing led out may have named it), or blocked by what to name
    /// instead; `None` for a root that is not confined.
    #[cfg(unix)]
    pub(super) fn reach(&self, relative: &[u8]) -> Option<crate::beneath::Reach> {
        self.root
            .confined
            .then(|| crate::beneath::trace(&self.root.fd, relative))
    }

    #[cfg(not(unix))]
    pub(super) fn reach(&self, _: &[u8]) -> Option<crate::beneath::Reach> {
        None
    }

    /// Open `relative` for reading if it is (still) a regular file; returns
    /// the file and what `fstat` said of it.
    pub(super) fn open(&mut self, relative: &[u8]) -> io::Result<(File, Metadata)> {
        let file = self.open_any(relative)?;
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(not_a_file());
        }
        Ok((file, metadata))
    }

    /// The identity of `relative` if it is (still) a regular file, and its
    /// number of hard links, from one `fstatat` that follows no link (see
    /// `content_index`).
    #[cfg(unix)]
    pub(super) fn identity(&mut self, relative: &[u8]) -> io::Result<(Identity, u64)> {
        use nix::{fcntl::AtFlags, sys::stat::SFlag};
        let (dir, name) = self.dir_and_name(relative)?;
        let stat = nix::sys::stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)?;
        if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
            return Err(not_a_file());
        }
        let identity = Identity {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size as u64,
            mtime: nanos(stat.st_mtime, stat.st_mtime_nsec),
            ctime: nanos(stat.st_ctime, stat.st_ctime_nsec),
        };
        // `nlink_t` is 32 bits on some targets.
        #[allow(clippy::useless_conversion)]
        let links = u64::from(stat.st_nlink);
        Ok((identity, links))
    }

    #[cfg(not(unix))]
    pub(super) fn identity(&mut self, relative: &[u8]) -> io::Result<(Identity, u64)> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no file identities",
        ))
    }

    #[cfg(unix)]
    fn open_any(&mut self, relative: &[u8]) -> io::Result<File> {
        use nix::{fcntl::OFlag, sys::stat::Mode};
        if self.root.confined {
            return open_file_without_links(&self.root.fd, relative);
        }
        let follows_links = self.follows_links;
        let (dir, name) = self.dir_and_name(relative)?;
        let mut flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        if !follows_links {
            flags |= OFlag::O_NOFOLLOW;
        }
        Ok(File::from(nix::fcntl::openat(
            dir,
            name,
            flags,
            Mode::empty(),
        )?))
    }

    #[cfg(not(unix))]
    fn open_any(&mut self, relative: &[u8]) -> io::Result<File> {
        File::open(self.path_of(relative))
    }

    /// A handle on the directory holding `relative`, and its name there.
    #[cfg(unix)]
    fn dir_and_name<'p>(
        &mut self,
        relative: &'p [u8],
    ) -> io::Result<(std::os::fd::BorrowedFd<'_>, &'p [u8])> {
        use std::os::fd::AsFd;
        Ok(match memchr::memrchr(b'/', relative) {
            Some(slash) => (self.parent(&relative[..slash])?, &relative[slash + 1..]),
            None => (self.root.fd.as_fd(), relative),
        })
    }

    /// A handle on the directory `parent` (relative to the root), reused
    /// while the same directory is asked for.
    #[cfg(unix)]
    fn parent(&mut self, parent: &[u8]) -> io::Result<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        let fd = match self.parent_fd.take() {
            Some(fd) if self.parent_path == parent => fd,
            _ => {
                let fd = match self.follows_links {
                    true => open_dir(Some(&self.root.fd), parent)?,
                    false => open_dir_without_links(&self.root.fd, parent)?,
                };
                self.parent_path.clear();
                self.parent_path.extend_from_slice(parent);
                fd
            }
        };
        let fd: &std::os::fd::OwnedFd = self.parent_fd.insert(fd);
        Ok(fd.as_fd())
    }

    /// Read `file` (of `size` bytes) whole into the buffer when it is small
    /// enough to be searched as a slice (see [`Opener::content`]); `false`
    /// when it must be streamed instead.
    pub(super) fn read_small(&mut self, file: &mut File, size: u64) -> io::Result<bool> {
        let len = match usize::try_from(size) {
            Ok(len) if (1..=SLICE_MAX).contains(&len) => len,
            _ => return Ok(false),
        };
        if self.buffer.len() < SLICE_MAX {
            self.buffer.resize(SLICE_MAX, 0);
        }
        self.filled = 0;
        while self.filled < len {
            match file.read(&mut self.buffer[self.filled..len]) {
                Ok(0) => break,
                Ok(read) => self.filled += read,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(true)
    }

    /// What the last [`Opener::read_small`] read.
    pub(super) fn content(&self) -> &[u8] {
        &self.buffer[..self.filled]
    }
}

/// An `O_PATH` handle on a directory: `path` relative to `at`, or absolute.
#[cfg(unix)]
fn open_dir<P: nix::NixPath + ?Sized>(
    at: Option<&std::os::fd::OwnedFd>,
    path: &P,
) -> io::Result<std::os::fd::OwnedFd> {
    use nix::{fcntl::OFlag, sys::stat::Mode};
    use std::os::fd::AsFd;
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let fd = match at {
        Some(at) => nix::fcntl::openat(at.as_fd(), path, flags, Mode::empty())?,
        None => nix::fcntl::open(path, flags, Mode::empty())?,
    };
    Ok(fd)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Content signatures are only for filesystems on the local list: a
    /// pseudo-filesystem (as a network one) gets none.
    #[cfg(target_os = "linux")]
    #[test]
    fn only_local_filesystems_have_a_local_device() {
        assert_eq!(
            Root::open(Path::new("/proc"), false)
                .unwrap()
                .local_device(),
            None
        );
        let dir = tempfile::tempdir().unwrap();
        let stat = nix::sys::stat::stat(dir.path()).unwrap();
        if let Some(device) = Root::open(dir.path(), false).unwrap().local_device() {
            assert_eq!(device, stat.st_dev);
        }
    }

    /// A confined root is opened without following a link: one on the way
    /// (swapped in since the search's start was checked) is `EXDEV`.
    #[test]
    fn a_confined_root_through_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(real.join("d")).unwrap();
        std::os::unix::fs::symlink(real.join("d"), real.join("link")).unwrap();
        assert!(Root::open(&real.join("d"), true).is_ok());
        for through in [real.join("link"), real.join("link/.")] {
            let err = Root::open(&through, true).err().unwrap();
            assert_eq!(err.code(), "EXDEV", "{through:?}: {err}");
            assert!(Root::open(&through, false).is_ok());
        }
    }
}
