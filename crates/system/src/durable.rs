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

use std::{
    fs::{self, File, OpenOptions},
    io::{self, Read, Write},
    os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt},
    path::{Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result};

use crate::process;

/// How every temporary record file's name ends.
pub const TEMP_SUFFIX: &str = ".tmp";

/// Records are private to their user: other users may not read who holds what.
pub(crate) const FILE_MODE: u32 = 0o600;

/// The steps of writing a record, in order, so tests can crash at each one.
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
    #[cfg(test)]
    pub(crate) const ALL: [Step; 6] = [
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
    replace_observed(path, bytes, &mut |_| {})
}

/// Publish `bytes` at `path` only if no record exists there: `Ok(false)` when
/// one does (it is left untouched).
pub fn publish(path: &Path, bytes: &[u8]) -> Result<bool> {
    publish_observed(path, bytes, &mut |_| {})
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
    match fs::metadata(path) {
        Ok(meta) => require_regular(path, &meta)?,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io(path, err)),
    }
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io(path, err)),
    };
    let meta = file.metadata().map_err(|err| Error::io(path, err))?;
    require_regular(path, &meta)?;
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
        Ok(()) => sync_dir(path).map(|()| true),
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

/// [`replace`], telling `observe` about each step as it completes.
pub fn replace_observed(path: &Path, bytes: &[u8], observe: &mut dyn FnMut(Step)) -> Result<()> {
    let temp = write_temp(path, bytes, observe)?;
    if let Err(err) = fs::rename(&temp, path) {
        let _ = fs::remove_file(&temp);
        return Err(Error::io(path, err));
    }
    observe(Step::Named);
    sync_dir(path)?;
    observe(Step::DirSynced);
    Ok(())
}

/// [`publish`], telling `observe` about each step as it completes
/// ([`Step::Named`]: the record is linked under its name).
pub fn publish_observed(path: &Path, bytes: &[u8], observe: &mut dyn FnMut(Step)) -> Result<bool> {
    let temp = write_temp(path, bytes, observe)?;
    let linked = fs::hard_link(&temp, path);
    if linked.is_ok() {
        observe(Step::Named);
    }
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            sync_dir(path)?;
            observe(Step::DirSynced);
            Ok(true)
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(Error::io(path, err)),
    }
}

/// A fully written and flushed temporary copy of the record, beside it.
fn write_temp(path: &Path, bytes: &[u8], observe: &mut dyn FnMut(Step)) -> Result<PathBuf> {
    let temp = temp_path(path)?;
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&temp)?;
        observe(Step::TempCreated);
        let (first, second) = bytes.split_at(bytes.len() / 2);
        file.write_all(first)?;
        observe(Step::HalfWritten);
        file.write_all(second)?;
        observe(Step::Written);
        file.sync_all()?;
        observe(Step::Synced);
        Ok::<(), io::Error>(())
    })();
    written.map(|()| temp.clone()).map_err(|err| {
        let _ = fs::remove_file(&temp);
        Error::io(path, err)
    })
}

fn temp_path(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a record path", path.display())))?;
    let temp = format!(
        ".{}.{}.{}{TEMP_SUFFIX}",
        name.to_string_lossy(),
        std::process::id(),
        process::nonce()
    );
    Ok(path.with_file_name(temp))
}

/// Flush `path`'s directory so a rename, link or unlink in it is durable.
fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|err| Error::io(dir, err))
}

#[cfg(test)]
mod tests;
