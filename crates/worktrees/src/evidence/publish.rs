//! Publishing an archive: whole or not at all, never replacing one.
//!
//! Under the run's evidence lock (a kernel lock on `source-evidence/.lock`,
//! so a crashed publisher's lock is free at once): staging left by an
//! interrupted publication is removed (only a lock holder creates one, so
//! any found is stale); an archive of the same name is compared byte for
//! byte (equal: nothing to do; different: refused, left unchanged); the
//! run's evidence with the new archive must fit the per-run bound; the
//! files are written in a private staging directory, each flushed, the
//! directories flushed, and the staging directory renamed to the archive's
//! name with `RENAME_NOREPLACE` (a plain rename would replace an empty
//! directory of that name); the parent is flushed last. The files, the
//! flushes and the rename are the durable writer's
//! ([`natives_system::durable`]).

use std::{
    collections::BTreeMap,
    ffi::OsString,
    fs::{self, File},
    io,
    os::{fd::AsFd, unix::fs::DirBuilderExt},
    path::{Path, PathBuf},
    time::Duration,
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_system::durable::{self, NewFile};
use natives_system::{lock, process};
use nix::errno::Errno;

use super::{
    bounds::{Bound, Bounds},
    format,
    refusal::Refusal,
};
use natives_system::crash;

/// Where a run's evidence lives, under its artifacts directory.
pub const EVIDENCE_DIR: &str = "source-evidence";

/// The lock publishers of one run take, in its evidence directory.
pub const LOCK_FILE: &str = ".lock";

/// How a staging directory's name starts.
pub const STAGING_PREFIX: &str = ".staging-";

/// How long a publisher waits for another one of the same run: publishing
/// is a few writes and a rename, so a lock held longer belongs to a stuck
/// process.
const LOCK_WAIT: Duration = Duration::from_secs(60);

/// Archives are private to their user, and read-only: they are never
/// changed once published.
const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o400;

/// What publication did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Placed {
    /// The archive was published.
    Published,
    /// An archive with the same bytes was there already.
    Existing,
    /// Not published, for this reason.
    Refused(Refusal),
}

/// The run's evidence directory under `artifacts`.
pub(super) fn evidence_dir(artifacts: &Path) -> PathBuf {
    artifacts.join(EVIDENCE_DIR)
}

/// Publish `files` as the archive `name` under `artifacts`, within
/// `bounds` (the run's whole evidence, and what this one may add).
pub(super) fn place(
    artifacts: &Path,
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Placed> {
    let evidence = evidence_dir(artifacts);
    make_dir(&evidence)?;
    let _held = lock::wait_exclusive(&evidence.join(LOCK_FILE), cancel, LOCK_WAIT)?;
    crash::point("locked");
    remove_staging(&evidence)?;
    let target = evidence.join(name);
    if exists(&target)? {
        return compare(&target, files).map(|()| Placed::Existing);
    }
    let used = usage(&evidence)?;
    let size: u64 = files.values().map(|bytes| bytes.len() as u64).sum();
    if size > bounds.new_bytes {
        return Ok(Placed::Refused(Refusal::OverBound {
            bound: Bound::NewBytes,
            limit: bounds.new_bytes,
            actual: size,
        }));
    }
    if used + size > bounds.run_bytes {
        return Ok(Placed::Refused(Refusal::OverBound {
            bound: Bound::RunBytes,
            limit: bounds.run_bytes,
            actual: used + size,
        }));
    }
    let staging = evidence.join(format!(
        "{STAGING_PREFIX}{name}-{}-{}",
        std::process::id(),
        process::nonce()
    ));
    let written = write_staging(&staging, files);
    if let Err(err) = written {
        let _ = fs::remove_dir_all(&staging);
        return Err(err);
    }
    rename_into_place(&evidence, &staging, &target, files)
}

/// Create `dir` and any missing parent, each new one flushed into its
/// parent.
fn make_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        make_dir(parent)?;
    }
    match fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
        Ok(()) => sync_parent(dir),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(err) => Err(Error::io(dir, err)),
    }
}

fn exists(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io(path, err)),
    }
}

/// Remove every staging directory in `evidence`: the caller holds the lock
/// only publishers take, so none is being written.
pub(super) fn remove_staging(evidence: &Path) -> Result<()> {
    let mut removed = false;
    for entry in fs::read_dir(evidence).map_err(|err| Error::io(evidence, err))? {
        let entry = entry.map_err(|err| Error::io(evidence, err))?;
        if !entry
            .file_name()
            .to_string_lossy()
            .starts_with(STAGING_PREFIX)
        {
            continue;
        }
        let path = entry.path();
        fs::remove_dir_all(&path).map_err(|err| Error::io(&path, err))?;
        removed = true;
    }
    if removed {
        sync_dir(evidence)?;
    }
    Ok(())
}

/// Every byte under `dir` (files' sizes, symlinks not followed), the lock
/// file aside: the run's evidence, published or not.
fn usage(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in fs::read_dir(dir).map_err(|err| Error::io(dir, err))? {
        let entry = entry.map_err(|err| Error::io(dir, err))?;
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).map_err(|err| Error::io(&path, err))?;
        total += match meta.is_dir() {
            true => usage(&path)?,
            false => meta.len(),
        };
    }
    Ok(total)
}

/// The existing archive at `target` holds exactly `files`, or an error
/// saying it does not (`EEXIST`; it is left as it is).
fn compare(target: &Path, files: &BTreeMap<String, Vec<u8>>) -> Result<()> {
    let differs = |detail: String| {
        Error::new(
            ErrorKind::AlreadyExists,
            format!(
                "{}: an archive of this name exists and the capture's bytes differ ({detail}); it is immutable and was left unchanged",
                target.display()
            ),
        )
    };
    let existing = match super::validate::read(target) {
        Ok(existing) => existing,
        Err(err) if err.kind() == ErrorKind::Corrupt => {
            return Err(differs(err.message().to_owned()));
        }
        Err(err) => return Err(err),
    };
    for name in existing.keys().chain(files.keys()) {
        match (existing.get(name), files.get(name)) {
            (Some(old), Some(new)) if old == new => {}
            (Some(_), Some(_)) => return Err(differs(format!("{name} differs"))),
            (Some(_), None) => return Err(differs(format!("{name} would not be archived"))),
            (None, _) => return Err(differs(format!("{name} is missing from it"))),
        }
    }
    Ok(())
}

/// Write `files` into the new directory `staging`, every file and
/// directory flushed.
fn write_staging(staging: &Path, files: &BTreeMap<String, Vec<u8>>) -> Result<()> {
    let builder = {
        let mut builder = fs::DirBuilder::new();
        builder.mode(DIR_MODE);
        builder
    };
    builder
        .create(staging)
        .map_err(|err| Error::io(staging, err))?;
    crash::point("staging created");
    let commits = staging.join(format::COMMITS);
    builder
        .create(&commits)
        .map_err(|err| Error::io(&commits, err))?;
    let dir = File::open(staging).map_err(|err| Error::io(staging, err))?;
    let half = files.len() / 2;
    for (n, (name, bytes)) in files.iter().enumerate() {
        if n == half {
            crash::point("half written");
        }
        write_file(&dir, name, bytes).map_err(|err| Error::io(&staging.join(name), err))?;
    }
    crash::point("written");
    sync_dir(&commits)?;
    sync_dir(staging)?;
    crash::point("synced");
    Ok(())
}

/// The file `name` (relative to `dir`) written afresh and flushed.
fn write_file(dir: &File, name: &str, bytes: &[u8]) -> io::Result<()> {
    let mut file = NewFile::create(dir.as_fd(), name.into(), FILE_MODE)?;
    file.write(bytes)?;
    file.sync()?;
    file.keep();
    Ok(())
}

/// Rename `staging` to `target` without replacing anything, and flush
/// their directory. When something took the name meanwhile (not a natives
/// publisher: they hold the lock), the staging goes and the archive there
/// is compared.
fn rename_into_place(
    evidence: &Path,
    staging: &Path,
    target: &Path,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<Placed> {
    let dir = File::open(evidence).map_err(|err| Error::io(evidence, err))?;
    let name = |path: &Path| path.file_name().map(OsString::from).unwrap_or_default();
    match durable::rename_no_replace(&dir, &name(staging), &dir, &name(target)) {
        Ok(()) => {}
        Err(Errno::EEXIST) => {
            remove_staging(evidence)?;
            return compare(target, files).map(|()| Placed::Existing);
        }
        Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => {
            remove_staging(evidence)?;
            let why = format!(
                "{}: the filesystem cannot rename without replacing (renameat2 RENAME_NOREPLACE), so an archive could not be published safely",
                evidence.display()
            );
            return Ok(Placed::Refused(Refusal::Unsupported(why)));
        }
        Err(errno) => {
            let _ = fs::remove_dir_all(staging);
            return Err(Error::io(target, errno.into()));
        }
    }
    crash::point("published");
    durable::sync_dir(&dir).map_err(|err| Error::io(evidence, err))?;
    crash::point("parent synced");
    Ok(Placed::Published)
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| durable::sync_dir(&d))
        .map_err(|err| Error::io(dir, err))
}

fn sync_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => sync_dir(parent),
        _ => sync_dir(Path::new(".")),
    }
}
