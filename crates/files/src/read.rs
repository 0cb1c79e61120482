//! Reading regular files only, never more than asked for.
//!
//! Opening a FIFO for reading blocks until a writer appears, and reading one
//! (or `/dev/zero`, or a terminal) may never end; a blocked read also holds
//! one of the few worker threads a JS runtime has, so four of them freeze
//! every native call in the process. So a file is looked at before it is
//! opened (anything but a regular file is refused, naming its type), opened
//! non-blocking (a FIFO swapped in meanwhile cannot block the open), checked
//! again on the open handle, and read only up to a limit.

use std::{
    fs::File,
    io::Read,
    path::{Path, PathBuf},
};

use natives_core::{
    Error, ErrorKind, Result,
    resolve::{Last, Location, Scope},
};
use nix::{
    fcntl::{OFlag, openat},
    sys::stat::{FileStat, Mode, SFlag, fstat},
};

use crate::{
    lossy::{Doing, refuse_lossy_copy},
    sys::{errno_error, file_kind, kind_name},
};

#[cfg(test)]
mod tests;

/// The largest file read whole when no limit is given: an edit holds the
/// file as a JS string (two bytes per character) plus its edited copy, so
/// beyond this an edit costs hundreds of megabytes; such files want a
/// different tool.
pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// How much of a file to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The whole file, refusing (`TooLarge`) one of more bytes than this.
    Whole(u64),
    /// At most this many bytes from the start.
    Head(u64),
}

impl Default for Limit {
    /// The whole file, up to [`DEFAULT_MAX_BYTES`].
    fn default() -> Limit {
        Limit::Whole(DEFAULT_MAX_BYTES)
    }
}

/// What a caller asks of a read. Field docs give the defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Refuse (`OutsideRoot`) a path whose real location leaves the
    /// directory it is relative to (see [`Scope::new`]). Default: `false`.
    pub confine: bool,
    /// The most bytes read. Default: `None`, the whole file up to
    /// [`DEFAULT_MAX_BYTES`].
    pub max_bytes: Option<u64>,
    /// Read at most `max_bytes` from the start instead of refusing a larger
    /// file; it needs `max_bytes`. Default: `false`.
    pub head: bool,
}

impl ReadOptions {
    /// The [`Limit`] these options ask for; `EINVAL` for `head` without
    /// `max_bytes`.
    pub fn limit(&self) -> Result<Limit> {
        match (self.head, self.max_bytes) {
            (true, Some(max)) => Ok(Limit::Head(max)),
            (true, None) => Err(Error::invalid("head needs maxBytes")),
            (false, Some(max)) => Ok(Limit::Whole(max)),
            (false, None) => Ok(Limit::default()),
        }
    }
}

/// Which version of which file was read: a write that expects it refuses
/// when the file has since been replaced, resized or modified.
///
/// Size and mtime alone do not prove it: a writer that rewrites a file in
/// place and puts the mtime back (`cp -p`, `rsync --inplace -t`) leaves
/// both as they were. The status-change time cannot be set from user space
/// and moves with every write, so it is part of the stamp too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    pub(crate) fn of(stat: &FileStat) -> Stamp {
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size as u64,
            mtime_ns: nanoseconds(stat.st_mtime, stat.st_mtime_nsec),
            ctime_ns: nanoseconds(stat.st_ctime, stat.st_ctime_nsec),
        }
    }

    /// The same file (device and inode), whatever its contents.
    pub(crate) fn same_file(&self, stat: &FileStat) -> bool {
        self.dev == stat.st_dev && self.ino == stat.st_ino
    }

    /// An opaque text form, for callers that hand the stamp back later.
    pub fn token(&self) -> String {
        format!(
            "{:x}.{:x}.{:x}.{:x}.{:x}",
            self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns
        )
    }

    /// Parse [`Stamp::token`]'s form.
    pub fn parse(token: &str) -> Result<Stamp> {
        let bad = || Error::invalid(format!("`{token}` is not a file stamp"));
        let mut parts = token.split('.');
        let mut next = || parts.next().ok_or_else(bad);
        let stamp = Stamp {
            dev: u64::from_str_radix(next()?, 16).map_err(|_| bad())?,
            ino: u64::from_str_radix(next()?, 16).map_err(|_| bad())?,
            size: u64::from_str_radix(next()?, 16).map_err(|_| bad())?,
            mtime_ns: i128::from_str_radix(next()?, 16).map_err(|_| bad())?,
            ctime_ns: i128::from_str_radix(next()?, 16).map_err(|_| bad())?,
        };
        match parts.next() {
            None => Ok(stamp),
            Some(_) => Err(bad()),
        }
    }
}

fn nanoseconds(seconds: i64, nanoseconds: i64) -> i128 {
    i128::from(seconds) * 1_000_000_000 + i128::from(nanoseconds)
}

/// What was read.
#[derive(Debug)]
pub struct Contents {
    /// The file's real path.
    pub path: PathBuf,
    /// The bytes read: all of them, or the head a [`Limit::Head`] allowed.
    pub bytes: Vec<u8>,
    /// The file's size when it was opened.
    pub size: u64,
    /// Which version of the file this is.
    pub stamp: Stamp,
    /// `bytes` is the whole file.
    pub complete: bool,
}

/// Read the regular file at `path` (symlinks followed), up to `limit`.
///
/// Refuses, naming `path`: a missing file (`NotFound`; `LossyName` when
/// the path is a lossy copy of one that exists), a directory
/// (`IsADirectory`), a FIFO, socket or device (`NotARegularFile`), a file
/// larger than a [`Limit::Whole`] (`TooLarge`), a path that leaves a
/// confined scope (`OutsideRoot`).
pub fn read_file(scope: &Scope, path: &Path, limit: Limit) -> Result<Contents> {
    let location = scope.locate(path, Last::Follow)?;
    read_at(&location, path, limit)
}

/// [`read_file`] on a resolved location; `given` names it in errors.
pub(crate) fn read_at(location: &Location, given: &Path, limit: Limit) -> Result<Contents> {
    let Some(stat) = location.stat()? else {
        refuse_lossy_copy(location, given, Doing::Reading)?;
        return Err(not_found(given));
    };
    require_regular(&stat, given)?;
    let file = open_regular(location, given, &stat)?;
    if let Limit::Whole(max) = limit
        && stat.st_size as u64 > max
    {
        return Err(too_large(given, stat.st_size as u64, max));
    }
    let cap = match limit {
        Limit::Whole(max) | Limit::Head(max) => max,
    };
    let mut bytes = Vec::with_capacity(usize::try_from(cap.min(stat.st_size as u64)).unwrap_or(0));
    // One byte past the cap tells a file that grew since `fstat` from one that did not.
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io(given, err))?;
    let complete = bytes.len() as u64 <= cap;
    if !complete {
        if let Limit::Whole(max) = limit {
            return Err(too_large(given, bytes.len() as u64, max));
        }
        bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    }
    Ok(Contents {
        path: location.real_path(),
        bytes,
        size: stat.st_size as u64,
        stamp: Stamp::of(&stat),
        complete,
    })
}

/// Refuse anything but a regular file, naming what it is.
pub(crate) fn require_regular(stat: &FileStat, given: &Path) -> Result<()> {
    match file_kind(stat) {
        SFlag::S_IFREG => Ok(()),
        SFlag::S_IFDIR => Err(Error::new(
            ErrorKind::IsADirectory,
            format!("{}: is a directory, not a file", given.display()),
        )),
        kind => Err(Error::new(
            ErrorKind::NotARegularFile,
            format!(
                "{}: is {}, not a regular file",
                given.display(),
                kind_name(kind)
            ),
        )),
    }
}

/// Open the entry `stat` describes without blocking or following a link,
/// and make sure the handle is that same regular file.
fn open_regular(location: &Location, given: &Path, stat: &FileStat) -> Result<File> {
    let dir = location.dir().ok_or_else(|| not_found(given))?;
    let fd = openat(
        dir,
        location.name(),
        OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| errno_error(given, errno))?;
    let opened = fstat(&fd).map_err(|errno| errno_error(given, errno))?;
    require_regular(&opened, given)?;
    if !Stamp::of(stat).same_file(&opened) {
        return Err(Error::new(
            ErrorKind::Changed,
            format!(
                "{}: was replaced while it was being opened",
                given.display()
            ),
        ));
    }
    Ok(File::from(fd))
}

pub(crate) fn not_found(given: &Path) -> Error {
    Error::new(
        ErrorKind::NotFound,
        format!("{}: no such file", given.display()),
    )
}

fn too_large(given: &Path, size: u64, max: u64) -> Error {
    Error::new(
        ErrorKind::TooLarge,
        format!(
            "{}: is {size} bytes, more than the {max} bytes this reads",
            given.display()
        ),
    )
}
