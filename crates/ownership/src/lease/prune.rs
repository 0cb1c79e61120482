//! Pruning a cache to a size, only while holding it.
//!
//! A prune that raced a live build would delete files a compile in flight
//! still needs, so it runs only under the maintenance lease (the cache lease
//! and the output lease together). It deletes the least recently modified
//! files first until the cache fits, then the directories it emptied. Lease
//! files live under the natives home, never in the cache, so no prune can
//! reach one.

use std::{
    fs, io,
    path::{Path, PathBuf},
    time::SystemTime,
};

use natives_core::{Error, Result};

use super::{
    AcquireOutcome, Leases,
    record::{Busy, Owner},
};

/// What a prune did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PruneReport {
    /// Bytes of regular files before.
    pub bytes_before: u64,
    /// Bytes of regular files after.
    pub bytes_after: u64,
    /// Files deleted.
    pub files_removed: u64,
}

struct CacheFile {
    modified: SystemTime,
    bytes: u64,
    path: PathBuf,
}

impl Leases {
    /// Prune `cache_dir` to at most `limit` bytes, oldest files first, while
    /// holding its maintenance lease as `owner`. `Ok(None)` when the cache is
    /// in use: not an error, the next pass catches it once it is free.
    pub fn maintenance_prune(
        &self,
        cache_dir: &Path,
        limit: u64,
        owner: &Owner,
    ) -> Result<Option<PruneReport>> {
        Ok(self
            .maintenance_prune_or_busy(cache_dir, limit, owner)?
            .ok())
    }

    /// [`Leases::maintenance_prune`], telling who kept it out when busy.
    pub fn maintenance_prune_or_busy(
        &self,
        cache_dir: &Path,
        limit: u64,
        owner: &Owner,
    ) -> Result<Result<PruneReport, Busy>> {
        let guard = match self.try_acquire_maintenance(cache_dir, owner)? {
            AcquireOutcome::Acquired(guard) => guard,
            AcquireOutcome::Busy(busy) => return Ok(Err(busy)),
        };
        let report = prune_to(guard.dir(), limit)?;
        guard.release()?;
        Ok(Ok(report))
    }
}

fn prune_to(dir: &Path, limit: u64) -> Result<PruneReport> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    list(dir, &mut files, &mut dirs)?;
    files.sort_by(|a, b| {
        a.modified
            .cmp(&b.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    let bytes_before: u64 = files.iter().map(|f| f.bytes).sum();
    let mut report = PruneReport {
        bytes_before,
        bytes_after: bytes_before,
        files_removed: 0,
    };
    for file in files {
        if report.bytes_after <= limit {
            break;
        }
        match fs::remove_file(&file.path) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(Error::io(&file.path, err)),
        }
        report.bytes_after -= file.bytes;
        report.files_removed += 1;
    }
    // Deepest first, so a directory emptied of subdirectories goes too;
    // a directory that still has entries simply stays.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for emptied in dirs {
        let _ = fs::remove_dir(emptied);
    }
    Ok(report)
}

/// Every regular file (and every directory below `dir`), not following links.
fn list(dir: &Path, files: &mut Vec<CacheFile>, dirs: &mut Vec<PathBuf>) -> Result<()> {
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(Error::io(dir, err)),
    };
    for item in listing {
        let item = item.map_err(|err| Error::io(dir, err))?;
        let path = item.path();
        let meta = item.metadata().map_err(|err| Error::io(&path, err))?;
        if meta.is_dir() {
            list(&path, files, dirs)?;
            dirs.push(path);
        } else if meta.is_file() {
            files.push(CacheFile {
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                bytes: meta.len(),
                path,
            });
        }
    }
    Ok(())
}
