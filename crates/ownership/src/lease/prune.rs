//! Pruning a build cache to a size: only a proven build cache, only its
//! build output, only while holding it.
//!
//! A prune deletes files, so before anything else the directory must pass
//! [`guard`]: registered as a build cache under the natives home, laid out as
//! a cargo target directory, and not the root, a home directory, the natives
//! home, a repository or anything holding one of them. A refusal is `EINVAL`
//! naming the rule. Within the cache only build output is deleted (what
//! cargo makes in its profile directories, see [`output`]); files of unknown
//! purpose are never touched, and a git repository found at any depth is
//! kept whole. What is kept inside a profile is named in the plan and the
//! report, so nobody wonders why a prune left it.
//!
//! A prune that raced a live build would delete files a compile in flight
//! still needs, so deletion runs only under the maintenance lease (the cache
//! lease and the output lease together). The least recently modified files
//! go first until the output fits; then the directories the prune emptied
//! (never one that was empty before). Lease files live under the natives
//! home, never in the cache, so no prune can reach one.
//!
//! A plan ([`Leases::plan_prune`]) says what a prune would delete without
//! deleting or holding anything; [`Leases::prune_planned`] deletes exactly
//! that later (a file changed meanwhile is kept), so a person can be shown
//! what goes before it goes.

mod guard;
mod output;

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use natives_core::{Error, Result};

pub(crate) use output::repository_within;
pub use output::{Kept, KeptReason, OutputFile};

use super::{
    acquire::AcquireOutcome,
    record::{Busy, Owner},
    store::Leases,
};

/// What a prune did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PruneReport {
    /// Bytes of build output before.
    pub bytes_before: u64,
    /// Bytes of build output after.
    pub bytes_after: u64,
    /// Files deleted.
    pub files_removed: u64,
    /// What was kept inside the profiles whatever its age, and why.
    pub kept: Vec<Kept>,
}

/// What a prune would delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrunePlan {
    /// The cache directory, canonical.
    pub dir: PathBuf,
    /// Bytes of build output now.
    pub bytes_before: u64,
    /// Bytes of build output once the files below are deleted.
    pub bytes_after: u64,
    /// The files to delete, least recently modified first.
    pub files: Vec<OutputFile>,
    /// What is kept inside the profiles whatever its age, and why.
    pub kept: Vec<Kept>,
    /// Directories that held something: removed if the prune empties them.
    filled_dirs: Vec<PathBuf>,
}

impl Leases {
    /// Prune `cache_dir`'s build output to at most `limit` bytes, oldest
    /// files first, while holding its maintenance lease as `owner`.
    /// `Ok(None)` when the cache is in use: not an error, the next pass
    /// catches it once it is free. `EINVAL` for a directory that is not a
    /// build cache (see the module docs).
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
        let dir = guard::prunable(cache_dir, self.home())?;
        self.holding_maintenance(&dir, owner, || delete(&plan(&dir, limit)?))
    }

    /// What pruning `cache_dir` to `limit` bytes would delete, refused as
    /// [`Leases::maintenance_prune`] refuses; deletes nothing and takes no
    /// lease (a dry run).
    pub fn plan_prune(&self, cache_dir: &Path, limit: u64) -> Result<PrunePlan> {
        plan(&guard::prunable(cache_dir, self.home())?, limit)
    }

    /// Delete what `plan` lists, while holding the maintenance lease as
    /// `owner`; a file changed or replaced since the plan was made is kept.
    pub fn prune_planned(
        &self,
        plan: &PrunePlan,
        owner: &Owner,
    ) -> Result<Result<PruneReport, Busy>> {
        let dir = guard::prunable(&plan.dir, self.home())?;
        self.holding_maintenance(&dir, owner, || delete(plan))
    }

    /// The canonical path of `dir` if the prune guard lets anything delete
    /// from it (see the module docs), or why not.
    pub(crate) fn prunable(&self, dir: &Path) -> Result<PathBuf> {
        guard::prunable(dir, self.home())
    }

    fn holding_maintenance(
        &self,
        dir: &Path,
        owner: &Owner,
        prune: impl FnOnce() -> Result<PruneReport>,
    ) -> Result<Result<PruneReport, Busy>> {
        let guard = match self.try_acquire_maintenance(dir, owner)? {
            AcquireOutcome::Acquired(guard) => guard,
            AcquireOutcome::Busy(busy) => return Ok(Err(busy)),
        };
        let report = prune()?;
        guard.release()?;
        Ok(Ok(report))
    }
}

/// The oldest files of `dir`'s build output, until what is left fits `limit`.
fn plan(dir: &Path, limit: u64) -> Result<PrunePlan> {
    let mut listing = output::list(dir)?;
    listing.files.sort_by(|a, b| {
        a.modified
            .cmp(&b.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    let bytes_before: u64 = listing.files.iter().map(|f| f.bytes).sum();
    let mut bytes_after = bytes_before;
    let mut doomed = 0;
    for file in &listing.files {
        if bytes_after <= limit {
            break;
        }
        bytes_after -= file.bytes;
        doomed += 1;
    }
    listing.files.truncate(doomed);
    Ok(PrunePlan {
        dir: dir.to_owned(),
        bytes_before,
        bytes_after,
        files: listing.files,
        kept: listing.kept,
        filled_dirs: listing.filled_dirs,
    })
}

/// Delete the plan's files that are still as they were, then the
/// directories that held something and are empty now, deepest first.
fn delete(plan: &PrunePlan) -> Result<PruneReport> {
    let mut report = PruneReport {
        bytes_before: plan.bytes_before,
        bytes_after: plan.bytes_before,
        files_removed: 0,
        kept: plan.kept.clone(),
    };
    for file in plan.files.iter().filter(|file| file.unchanged()) {
        match fs::remove_file(&file.path) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(Error::io(&file.path, err)),
        }
        report.bytes_after -= file.bytes;
        report.files_removed += 1;
    }
    let mut dirs = plan.filled_dirs.clone();
    dirs.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
    for emptied in dirs {
        // Fails, as it should, for a directory that still holds anything.
        let _ = fs::remove_dir(emptied);
    }
    Ok(report)
}

#[cfg(test)]
mod tests;
