//! Durable records: a record on disk is the old version or the new one, never
//! a torn mix, never an empty file.
//!
//! Every record the crate keeps (leases, identities, the catalog, claims) is
//! written here and nowhere else. A new version goes to a temporary file in
//! the record's own directory, is flushed with `fsync`, and only then takes
//! the record's name with `rename` (atomic within one filesystem); the
//! directory is flushed last so the rename itself survives a power cut. A
//! crash at any step leaves at worst a stray temporary file, which readers
//! never look at (its name starts with `.` and ends with [`TEMP_SUFFIX`]).
//!
//! A record that must never be replaced once it exists is published with
//! [`publish`]: the same fully written temporary file, linked to the record's
//! name with `link`, which fails if the name is taken, on local and network
//! filesystems alike.
//!
//! The steps are natives' one fsync-and-publish mechanism, shared with the
//! writers that publish more than a record (a file an agent edits, with its
//! old metadata and a journal; an archive of checkout evidence): a
//! [`NewFile`] created afresh in its directory (never through a link, never
//! over an entry), written, flushed and removed again unless kept; then
//! [`rename_no_replace`] or a rename or link; then [`sync_dir`]. Each step
//! is a [`Step`], reached as a [`crash`] point (the one hook every crate's
//! steps report to), so tests kill a real process after each one.

use std::{
    ffi::{OsStr, OsString},
    fs::{self, File, OpenOptions},
    io::{self, Read, Write},
    os::{
        fd::{AsFd, BorrowedFd},
        unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt},
    },
    path::Path,
};

use natives_core::{Error, ErrorKind, Result};
use nix::{
    errno::Errno,
    fcntl::{AtFlags, OFlag, RenameFlags, openat, renameat, renameat2},
    sys::stat::Mode,
    unistd::{UnlinkatFlags, fsync, linkat, unlinkat},
};

use crate::{crash, process};

/// How every temporary record file's name ends.
pub const TEMP_SUFFIX: &str = ".tmp";

/// Records are private to their user: other users may not read who holds what.
pub(crate) const FILE_MODE: u32 = 0o600;

/// The steps of writing a file and publishing it, in order, so tests can
/// crash at each one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The temporary file exists, empty.
    TempCreated,
    /// Half the bytes are in the temporary file.
    HalfWritten,
    /// Every byte is in the temporary file.
    Written,
    /// The temporary file is flushed.
    Synced,
    /// The record has its name.
    Named,
    /// The directory is flushed: the name survives a power cut.
    DirSynced,
}

impl Step {
    /// The step's name as a [`crash`] point.
    pub fn name(self) -> &'static str {
        match self {
            Step::TempCreated => "temporary file created",
            Step::HalfWritten => "temporary file half written",
            Step::Written => "temporary file written",
            Step::Synced => "temporary file synced",
            Step::Named => "named",
            Step::DirSynced => "directory synced",
        }
    }

    /// Report this step as a [`crash`] point.
    pub fn reached(self) {
        crash::point(self.name());
    }

    /// Every step, in the order a write passes them.
    pub const ALL: [Step; 6] = [
        Step::TempCreated,
        Step::HalfWritten,
        Step::Written,
        Step::Synced,
        Step::Named,
        Step::DirSynced,
    ];
}

/// Write `bytes` as the record at `path`, replacing any previous version
/// atomically and durably.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent(path)?;
    let mut temp = write_temp(&dir, path, bytes)?;
    renameat(&dir, temp.name(), &dir, record_name(path)?).map_err(|errno| errno_io(path, errno))?;
    temp.keep();
    Step::Named.reached();
    sync_dir(&dir).map_err(|err| Error::io(dir_of(path), err))?;
    Step::DirSynced.reached();
    Ok(())
}

/// Publish `bytes` at `path` only if no record exists there: `Ok(false)` when
/// one does (it is left untouched). [`Step::Named`] is reached once the
/// record is linked under its name.
pub fn publish(path: &Path, bytes: &[u8]) -> Result<bool> {
    let dir = parent(path)?;
    let temp = write_temp(&dir, path, bytes)?;
    let linked = linkat(
        &dir,
        temp.name(),
        &dir,
        record_name(path)?,
        AtFlags::empty(),
    );
    if linked.is_ok() {
        Step::Named.reached();
    }
    drop(temp);
    match linked {
        Ok(()) => {
            sync_dir(&dir).map_err(|err| Error::io(dir_of(path), err))?;
            Step::DirSynced.reached();
            Ok(true)
        }
        Err(Errno::EEXIST) => Ok(false),
        Err(errno) => Err(errno_io(path, errno)),
    }
}

/// The largest record [`read`] takes: far above any record this crate or
/// the run registry writes, far below what would exhaust memory.
pub const MAX_RECORD_BYTES: u64 = 16 << 20;

/// The record at `path`, or `None` if there is none: [`read_bounded`] at
/// [`MAX_RECORD_BYTES`].
pub fn read(path: &Path) -> Result<Option<Vec<u8>>> {
    read_bounded(path, MAX_RECORD_BYTES)
}

/// The record at `path`, or `None` if there is none, refused before it is
/// read whole when it is larger than `limit` bytes (`EFBIG`) or not a
/// regular file (`EFTYPE`: opening a FIFO for reading could block forever,
/// and a device such as `/dev/zero` never ends). Every record natives keeps,
/// and every small file it reads beside them, is read here.
///
/// The type is judged before opening (a FIFO or device is never opened),
/// then again from the open file, which is opened without blocking and
/// without becoming a controlling terminal, in case the path was replaced
/// in between. The size is judged from the open file, and the read stops
/// one byte past `limit`, so a record growing meanwhile is refused too.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    read_checked(path, limit, 0, |_| Ok(()))
}

/// [`read_bounded`] for a record that only its user may have written: the
/// record's name is not followed when it is a link (`ELOOP`), and the file
/// must belong to the calling user and be writable by no one else
/// (`EPERM`, `NotOwner`), checked on the open file. Records that other
/// users could plant (a shared home, a home with loose permissions) are
/// refused rather than believed.
pub fn read_private(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    read_checked(path, limit, libc::O_NOFOLLOW, |meta| {
        let euid = nix::unistd::geteuid().as_raw();
        if meta.uid() == euid && meta.mode() & 0o022 == 0 {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::NotOwner,
            format!(
                "{}: owned by uid {} with mode {:o}, not private to uid {euid}; not read",
                path.display(),
                meta.uid(),
                meta.mode() & 0o7777
            ),
        ))
    })
}

/// The reading of [`read_bounded`], opened with `extra_flags` too, with
/// `check` judging the open file's metadata before a byte is read.
fn read_checked(
    path: &Path,
    limit: u64,
    extra_flags: i32,
    check: impl Fn(&fs::Metadata) -> Result<()>,
) -> Result<Option<Vec<u8>>> {
    let no_follow = extra_flags & libc::O_NOFOLLOW != 0;
    if no_follow && fs::symlink_metadata(path).is_ok_and(|meta| meta.is_symlink()) {
        return Err(Error::new(
            ErrorKind::NotARegularFile,
            format!(
                "{}: a symbolic link, not a regular file; not read",
                path.display()
            ),
        ));
    }
    match fs::metadata(path) {
        Ok(meta) => require_regular(path, &meta)?,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io(path, err)),
    }
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | extra_flags)
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io(path, err)),
    };
    let meta = file.metadata().map_err(|err| Error::io(path, err))?;
    require_regular(path, &meta)?;
    check(&meta)?;
    let too_large = |size: u64| {
        Error::new(
            ErrorKind::TooLarge,
            format!(
                "{}: {size} bytes, over the limit of {limit}; not read",
                path.display()
            ),
        )
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io(path, err))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(Some(bytes))
}

/// `EFTYPE` naming `path` and what it is, unless `meta` is a regular file's.
pub(crate) fn require_regular(path: &Path, meta: &fs::Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::NotARegularFile,
        format!(
            "{}: {}, not a regular file; not read",
            path.display(),
            kind_of(&meta.file_type())
        ),
    ))
}

/// What a file that is not a regular file is, for a message.
fn kind_of(kind: &fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "a special file"
    }
}

/// Remove the record at `path` durably; `Ok(false)` if there was none.
pub fn remove(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => File::open(dir_of(path))
            .and_then(|dir| sync_dir(&dir))
            .map(|()| true)
            .map_err(|err| Error::io(dir_of(path), err)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io(path, err)),
    }
}

/// Create `dir` (and its parents) readable by its user only.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| Error::io(dir, err))
}

/// A fully written and flushed temporary copy of the record, beside it.
fn write_temp<'a>(dir: &'a File, path: &Path, bytes: &[u8]) -> Result<NewFile<'a>> {
    let temp = NewFile::create(dir.as_fd(), temp_name(path)?, FILE_MODE)
        .map_err(|errno| errno_io(path, errno))?;
    temp.write(bytes)
        .and_then(|()| temp.sync())
        .map_err(|err| Error::io(path, err))?;
    Ok(temp)
}

fn temp_name(path: &Path) -> Result<OsString> {
    Ok(format!(
        ".{}.{}.{}{TEMP_SUFFIX}",
        record_name(path)?.to_string_lossy(),
        std::process::id(),
        process::nonce()
    )
    .into())
}

fn record_name(path: &Path) -> Result<&OsStr> {
    path.file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a record path", path.display())))
}

/// The directory a record at `path` is in.
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// `path`'s directory, open (a missing one is an error naming `path`).
fn parent(path: &Path) -> Result<File> {
    File::open(dir_of(path)).map_err(|err| Error::io(path, err))
}

fn errno_io(path: &Path, errno: Errno) -> Error {
    Error::io(path, io::Error::from(errno))
}

/// A file written under a name of its own in the directory it is published
/// in: created afresh (`O_EXCL`: never over an existing entry;
/// `O_NOFOLLOW`: never through a link planted at the name), and removed
/// again when dropped unless [kept](NewFile::keep).
pub struct NewFile<'a> {
    dir: BorrowedFd<'a>,
    name: OsString,
    file: File,
    kept: bool,
}

impl<'a> NewFile<'a> {
    /// Create `name` in `dir`, with `mode` less the umask ([`Step::TempCreated`]).
    pub fn create(dir: BorrowedFd<'a>, name: OsString, mode: u32) -> nix::Result<NewFile<'a>> {
        let fd = openat(
            dir,
            name.as_os_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        )?;
        Step::TempCreated.reached();
        Ok(NewFile {
            dir,
            name,
            file: File::from(fd),
            kept: false,
        })
    }

    /// Write all of `bytes`, in two halves ([`Step::HalfWritten`],
    /// [`Step::Written`]).
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let (first, second) = bytes.split_at(bytes.len() / 2);
        (&self.file).write_all(first)?;
        Step::HalfWritten.reached();
        (&self.file).write_all(second)?;
        Step::Written.reached();
        Ok(())
    }

    /// Flush the file's bytes and metadata ([`Step::Synced`]).
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()?;
        Step::Synced.reached();
        Ok(())
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Its name in its directory.
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// The name is no longer this file's alone (it was published, moved, or
    /// swapped for an old file): it is not removed on drop.
    pub fn keep(&mut self) {
        self.kept = true;
    }
}

impl Drop for NewFile<'_> {
    fn drop(&mut self) {
        if !self.kept {
            let _ = unlinkat(self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

/// Rename that fails with `EEXIST` instead of replacing an existing entry
/// (`renameat2` with `RENAME_NOREPLACE`; a plain rename replaces a file,
/// and an empty directory too). `EINVAL` where the filesystem cannot.
pub fn rename_no_replace(
    from_dir: impl AsFd,
    from: &OsStr,
    to_dir: impl AsFd,
    to: &OsStr,
) -> nix::Result<()> {
    renameat2(from_dir, from, to_dir, to, RenameFlags::RENAME_NOREPLACE)
}

/// Flush the directory `dir` so a rename, link or unlink in it survives a
/// power cut.
pub fn sync_dir(dir: impl AsFd) -> io::Result<()> {
    let this = openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    Ok(fsync(&this)?)
}

#[cfg(test)]
mod tests;
