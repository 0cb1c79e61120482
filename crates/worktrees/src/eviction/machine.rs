//! One copy's eviction, step by durable step, and the recovery of one a
//! killed pass left half way.
//!
//! ```text
//! proven ─► pending recorded ─► evidence published + validated ─► output lease taken,
//!   borrowers read again, evidence validated again, proven again
//!   ─► `git worktree remove` (clean, not forced) ─► evicted recorded
//! ```
//!
//! The record comes first, so whatever a kill leaves, the next pass knows
//! what the copy was. Recovery (the caller holds the run's owner lock, which
//! every writer of the run's records and outputs takes) reads the copy and
//! its administration against the record:
//!
//! - both whole: prove everything again and carry on (capture is
//!   idempotent: the same archive is revalidated, not rewritten);
//! - the copy partly or wholly gone, the administration still there: a
//!   removal was cut short. Finish it only when the evidence validates,
//!   every remaining entry of the copy is one recorded, untouched, and the
//!   administration is byte for byte what was recorded; remove the known
//!   entries one by one (never a recursive delete), then the
//!   administration;
//! - both gone: done once the evidence validates;
//! - anything else (evidence missing or corrupt, an entry or file that was
//!   not recorded, a copy recreated after its eviction): a blocker, left
//!   as it is.
//!
//! Nothing is removed (by git, or entry by entry when finishing) unless
//! the pass holds the copy's exclusive output lease (the lease store's
//! output lease on the copy's own path: while it is held no build is
//! admitted with the copy as its cache, and no cleanup or maintenance
//! works in it) and, holding it, has read every lease and every run and
//! task record again: the pass's first reading is minutes old by then, and
//! a build that took a lease naming the copy, or a run that named it as
//! its source, since then keeps it.

use std::{
    ffi::OsStr,
    fs, io,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_ownership::lease::{AcquireOutcome, Guard, Leases, Owner};
use natives_system::{durable, process::now_ms};

use super::{
    blocker::{Blocker, BlockerKind},
    copy::{self, Proven, Source},
    ownership::Ownership,
    record::{self, EvictionRecord, Phase, RECORD_VERSION},
    report::Evicted,
    retention,
};
use crate::{
    evidence::{self, Archive, Bounds, Captured, EVIDENCE_DIR},
    git::Git,
    registry::{Liveness, Registry, RunRecord},
};
use natives_system::crash;

/// The node an eviction's output lease names (with its run and seat).
const LEASE_NODE: &str = "eviction";

/// What became of one copy.
pub(super) enum Outcome {
    /// Evicted (or, in a dry run, would be), with the evidence it added.
    Evicted(Evicted, retention::Growth),
    /// Left, and why.
    Retained(Vec<Blocker>),
    /// Evicted by an earlier pass: nothing to do.
    Gone,
}

/// What one copy's eviction works with.
pub(super) struct Step<'a> {
    pub git: &'a Git,
    pub registry: &'a Registry,
    pub home: &'a Path,
    pub run: &'a RunRecord,
    pub artifacts: &'a Path,
    pub source: &'a Source,
    pub quiet: std::time::Duration,
    pub bounds: Bounds,
    pub dry_run: bool,
}

impl Step<'_> {
    fn record_path(&self) -> PathBuf {
        record::path_of(self.artifacts, &self.source.seat)
    }

    /// Evict the copy, or finish (or refuse) what a pass before began.
    pub(super) fn run(&self, cancel: &CancelToken) -> Result<Outcome> {
        let path = self.record_path();
        match record::read(&path) {
            Ok(None) => self.fresh(cancel),
            Ok(Some(record)) if record.phase == Phase::Evicted => self.after_eviction(&record),
            Ok(Some(record)) => self.resume(record, cancel),
            Err(err) => Ok(retained(
                BlockerKind::UnreadableEvictionRecord,
                err.to_string(),
            )),
        }
    }

    fn fresh(&self, cancel: &CancelToken) -> Result<Outcome> {
        let proven = match copy::prove(self.git, self.run, self.source, self.quiet, cancel)? {
            Ok(proven) => proven,
            Err(blockers) => return Ok(Outcome::Retained(blockers)),
        };
        if self.dry_run {
            return Ok(self.would_evict(&proven.inventory, false));
        }
        let record = self.pending(&proven);
        record::write(&self.record_path(), &record)?;
        crash::point("pending recorded");
        self.archive_and_remove(record, false, cancel)
    }

    fn pending(&self, proven: &Proven) -> EvictionRecord {
        let archive = self
            .artifacts
            .join(EVIDENCE_DIR)
            .join(evidence::format::archive_name(&proven.head, &proven.base));
        EvictionRecord {
            version: RECORD_VERSION,
            phase: Phase::Pending,
            run: self.run.id.clone(),
            seat: self.source.seat.clone(),
            path: self.source.path.clone(),
            common_dir: proven.dirs.common_dir.clone(),
            admin_dir: proven.dirs.git_dir.clone(),
            head: proven.head.clone(),
            base: proven.base.clone(),
            archives: vec![archive],
            inventory: proven.inventory.clone(),
            dot_git: proven.dot_git.clone(),
            administration: proven.administration.clone(),
            admin_dirs: proven.admin_dirs.clone(),
            recorded_at_ms: now_ms(),
            evicted_at_ms: None,
        }
    }

    /// Capture (or revalidate) the evidence, prove the copy again and
    /// remove it.
    fn archive_and_remove(
        &self,
        record: EvictionRecord,
        resumed: bool,
        cancel: &CancelToken,
    ) -> Result<Outcome> {
        let (archive, growth) = match self.archive(&record, cancel)? {
            Ok(archived) => archived,
            Err(kept) => return Ok(kept),
        };
        crash::point("archived");
        if let Some(blocker) = mismatch(&record, &archive) {
            return Ok(Outcome::Retained(vec![blocker]));
        }
        let _lease = match self.exclusive()? {
            Ok(lease) => lease,
            Err(blockers) => return Ok(Outcome::Retained(blockers)),
        };
        match self.prove_again(&record, cancel)? {
            Ok(()) => {}
            Err(blockers) => return Ok(Outcome::Retained(blockers)),
        }
        crash::point("revalidated");
        crash::point("removing");
        self.git
            .remove_worktree(&record.common_dir, &record.path, cancel)?;
        crash::point("removed");
        self.finish(record, resumed, growth)
    }

    /// Capture the evidence of the copy `record` names, or revalidate the
    /// archive already published: it and the evidence it added, or why the
    /// copy stays.
    fn archive(
        &self,
        record: &EvictionRecord,
        cancel: &CancelToken,
    ) -> Result<std::result::Result<(Archive, retention::Growth), Outcome>> {
        let captured = evidence::capture(
            self.git,
            &record.path,
            &record.base,
            self.artifacts,
            &self.bounds,
            cancel,
        );
        match captured {
            Ok(Captured::Published(archive)) => {
                let growth = retention::Growth::of(archive.dir())?;
                Ok(Ok((archive, growth)))
            }
            Ok(Captured::Existing(archive)) => Ok(Ok((archive, retention::Growth::default()))),
            Ok(Captured::Refused(refusal)) => {
                durable::remove(&self.record_path())?;
                Ok(Err(retained(refusal_kind(&refusal), refusal.to_string())))
            }
            // An archive of this name that fails validation, or holds other
            // bytes than this copy's evidence: the record's evidence is not
            // to be trusted.
            Err(err) if matches!(err.kind(), ErrorKind::Corrupt | ErrorKind::AlreadyExists) => {
                Ok(Err(retained(BlockerKind::CorruptEvidence, err.to_string())))
            }
            Err(err) => Err(err),
        }
    }

    /// Right before removal (the output lease held): the evidence validates
    /// again and the copy is still exactly what was recorded.
    fn prove_again(
        &self,
        record: &EvictionRecord,
        cancel: &CancelToken,
    ) -> Result<std::result::Result<(), Vec<Blocker>>> {
        if let Some(blocker) = self.evidence_blocker(record, cancel)? {
            return Ok(Err(vec![blocker]));
        }
        let proven = match copy::prove(self.git, self.run, self.source, self.quiet, cancel)? {
            Ok(proven) => proven,
            Err(blockers) => return Ok(Err(blockers)),
        };
        let same = proven.head == record.head
            && proven.base == record.base
            && proven.inventory == record.inventory
            && proven.dot_git == record.dot_git
            && proven.administration == record.administration
            && proven.admin_dirs == record.admin_dirs
            && proven.dirs.git_dir == record.admin_dir;
        Ok(match same {
            true => Ok(()),
            false => Err(vec![changed(
                record,
                "the copy or its administration changed since it was recorded",
            )]),
        })
    }

    /// Take the copy's exclusive output lease, then read every lease and
    /// record again: the lease, held until the removal is over, or why the
    /// copy is wanted now.
    fn exclusive(&self) -> Result<std::result::Result<Guard, Vec<Blocker>>> {
        let owner = Owner::current(&self.run.id, LEASE_NODE, &self.source.seat);
        let taken = Leases::open(self.home)?.try_acquire_output(&self.source.path, &owner)?;
        let lease = match taken {
            AcquireOutcome::Acquired(lease) => lease,
            AcquireOutcome::Busy(busy) => {
                let detail = format!(
                    "{}: its output lease is {}",
                    self.source.path.display(),
                    busy.describe()
                );
                return Ok(Err(vec![Blocker::new(BlockerKind::OutputLease, detail)]));
            }
        };
        let borrowed = self.borrowers_now(lease.dir())?;
        Ok(match borrowed.is_empty() {
            true => Ok(lease),
            false => Err(borrowed),
        })
    }

    /// Who wants the copy now, every record and lease read afresh (`held`:
    /// the output lease this pass holds on it): a driver of its run, a
    /// lease naming it, another run's or a task's reference, authority
    /// granted since.
    fn borrowers_now(&self, held: &Path) -> Result<Vec<Blocker>> {
        let ownership = Ownership::read(self.registry, self.home, Some(held))?;
        let run = ownership.runs.iter().find(|run| run.id == self.run.id);
        let source = run.and_then(|run| {
            copy::sources_of(run)
                .into_iter()
                .find(|(source, ..)| {
                    source.seat == self.source.seat && source.path == self.source.path
                })
                .map(|(_, authority, extra)| (run, authority, extra))
        });
        let mut found = match source {
            Some((run, authority, extra)) => {
                ownership.blockers(run, &self.source.path, authority, extra)
            }
            None => {
                let detail = format!(
                    "run {}'s record no longer names {} at {}",
                    self.run.id,
                    self.source.seat,
                    self.source.path.display()
                );
                vec![Blocker::new(BlockerKind::ChangedSinceRecord, detail)]
            }
        };
        let liveness = self.registry.driver_liveness(&self.run.id);
        if liveness != Liveness::Dead {
            let detail = format!("run {}'s driver is {liveness}", self.run.id);
            found.push(Blocker::new(BlockerKind::LiveDriver, detail));
        }
        Ok(found)
    }

    /// Why the record's evidence cannot be trusted, if it cannot.
    fn evidence_blocker(
        &self,
        record: &EvictionRecord,
        cancel: &CancelToken,
    ) -> Result<Option<Blocker>> {
        let Some(dir) = record.archive() else {
            return Ok(Some(Blocker::new(
                BlockerKind::CorruptEvidence,
                "the record names no archive",
            )));
        };
        match Archive::open(self.git, dir, cancel) {
            Ok(archive) => Ok(mismatch(record, &archive)),
            Err(err) if err.kind() == natives_core::ErrorKind::Aborted => Err(err),
            Err(err) => Ok(Some(Blocker::new(
                BlockerKind::CorruptEvidence,
                err.to_string(),
            ))),
        }
    }

    /// The copy is gone: the record says so, durably.
    fn finish(
        &self,
        mut record: EvictionRecord,
        resumed: bool,
        growth: retention::Growth,
    ) -> Result<Outcome> {
        for gone in [&record.path, &record.admin_dir] {
            if exists(gone)? {
                return Ok(Outcome::Retained(vec![changed(
                    &record,
                    &format!("{} is still there after removal", gone.display()),
                )]));
            }
        }
        record.phase = Phase::Evicted;
        record.evicted_at_ms = Some(now_ms());
        record::write(&self.record_path(), &record)?;
        crash::point("evicted recorded");
        let mut evicted = self.evicted(&record.inventory, resumed);
        evicted.archive = record.archive().map(Path::to_owned);
        Ok(Outcome::Evicted(evicted, growth))
    }

    fn evicted(&self, inventory: &[record::Entry], resumed: bool) -> Evicted {
        let unlinked = retention::unlinked(inventory);
        Evicted {
            run: self.run.id.clone(),
            seat: self.source.seat.clone(),
            path: self.source.path.clone(),
            archive: None,
            logical_bytes: unlinked.logical,
            allocated_bytes: unlinked.allocated,
            resumed,
        }
    }

    fn would_evict(&self, inventory: &[record::Entry], resumed: bool) -> Outcome {
        Outcome::Evicted(
            self.evicted(inventory, resumed),
            retention::Growth::default(),
        )
    }

    /// An evicted copy's path is empty, or it was made again: never adopted.
    fn after_eviction(&self, record: &EvictionRecord) -> Result<Outcome> {
        match exists(&record.path)? {
            false => Ok(Outcome::Gone),
            true => Ok(Outcome::Retained(vec![changed(
                record,
                "a copy was made again where an evicted one was",
            )])),
        }
    }

    /// Carry on from a pending record.
    fn resume(&self, record: EvictionRecord, cancel: &CancelToken) -> Result<Outcome> {
        if record.path != self.source.path || record.run != self.run.id {
            return Ok(Outcome::Retained(vec![changed(
                &record,
                "the record names another copy",
            )]));
        }
        let Some(untouched) = self.untouched_entries(&record)? else {
            let why = "the copy holds an entry that was not recorded, or one that changed";
            return Ok(Outcome::Retained(vec![changed(&record, why)]));
        };
        let registered = exists(&record.admin_dir)?;
        let whole = registered
            && untouched == record.inventory.len()
            && copy::linked(self.git, &record.path, cancel)?
                .is_some_and(|dirs| dirs.git_dir == record.admin_dir);
        if whole {
            if self.dry_run {
                return Ok(self.would_evict(&record.inventory, true));
            }
            return self.archive_and_remove(record, true, cancel);
        }
        if let Some(blocker) = self.evidence_blocker(&record, cancel)? {
            return Ok(Outcome::Retained(vec![blocker]));
        }
        let copy_gone = !exists(&record.path)?;
        let changes = match registered {
            true => self.administration_changes(&record, copy_gone)?,
            false => Vec::new(),
        };
        if !changes.is_empty() {
            let why = format!(
                "its git administration is not what was recorded ({})",
                changes.join(", ")
            );
            return Ok(Outcome::Retained(vec![changed(&record, &why)]));
        }
        if self.dry_run {
            return Ok(self.would_evict(&record.inventory, true));
        }
        crash::point("finish proven");
        let _lease = match self.exclusive()? {
            Ok(lease) => lease,
            Err(blockers) => return Ok(Outcome::Retained(blockers)),
        };
        self.remove_remains(&record)?;
        self.finish(record, true, retention::Growth::default())
    }

    /// How many recorded entries remain, untouched, when everything left of
    /// the copy was recorded (its `.git` file with its recorded bytes);
    /// `None` when anything else is there or an entry changed.
    fn untouched_entries(&self, record: &EvictionRecord) -> Result<Option<usize>> {
        let root = &record.path;
        let meta = match fs::symlink_metadata(root) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Some(0)),
            Err(err) => return Err(Error::io(root, err)),
        };
        if !meta.is_dir() {
            return Ok(None);
        }
        let recorded: std::collections::HashMap<&[u8], &record::Entry> = record
            .inventory
            .iter()
            .map(|entry| (entry.path.0.as_slice(), entry))
            .collect();
        let mut count = 0;
        let mut pending = vec![Vec::new()];
        while let Some(rel) = pending.pop() {
            let dir = root.join(OsStr::from_bytes(&rel));
            for entry in fs::read_dir(&dir).map_err(|err| Error::io(&dir, err))? {
                let name = entry.map_err(|err| Error::io(&dir, err))?.file_name();
                let path = match rel.is_empty() {
                    true => name.as_bytes().to_vec(),
                    false => [rel.as_slice(), b"/", name.as_bytes()].concat(),
                };
                let full = root.join(OsStr::from_bytes(&path));
                let meta = fs::symlink_metadata(&full).map_err(|err| Error::io(&full, err))?;
                if path == b".git" {
                    if !same_dot_git(&full, &meta, &record.dot_git.0)? {
                        return Ok(None);
                    }
                    continue;
                }
                let Some(was) = recorded.get(path.as_slice()) else {
                    return Ok(None);
                };
                let now = copy::entry(&path, meta.is_dir(), &meta);
                if !untouched(was, &now, meta.is_file()) {
                    return Ok(None);
                }
                count += 1;
                if was.dir {
                    pending.push(path);
                }
            }
        }
        Ok(Some(count))
    }

    /// How the administration differs from the one recorded, file by file
    /// (byte for byte) and directory by directory: empty when it is the
    /// same. With `part_removed`, recorded files and directories may be
    /// missing (git removes the copy first, then the administration, one
    /// file at a time), but whatever remains must be as recorded.
    fn administration_changes(
        &self,
        record: &EvictionRecord,
        part_removed: bool,
    ) -> Result<Vec<String>> {
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        let mut pending = vec![PathBuf::new()];
        while let Some(rel) = pending.pop() {
            let dir = record.admin_dir.join(&rel);
            for entry in fs::read_dir(&dir).map_err(|err| Error::io(&dir, err))? {
                let name = rel.join(entry.map_err(|err| Error::io(&dir, err))?.file_name());
                let full = record.admin_dir.join(&name);
                let meta = fs::symlink_metadata(&full).map_err(|err| Error::io(&full, err))?;
                let key = record::Name(name.as_os_str().as_bytes().to_vec());
                if meta.is_dir() {
                    dirs.push(key);
                    pending.push(name);
                } else {
                    let bytes = match meta.is_file() {
                        true => fs::read(&full).map_err(|err| Error::io(&full, err))?,
                        false => b"(not a regular file)".to_vec(),
                    };
                    files.push((key, bytes));
                }
            }
        }
        let mut changes = Vec::new();
        let shown = |name: &record::Name| String::from_utf8_lossy(&name.0).into_owned();
        for (name, bytes) in &files {
            match record.administration.iter().find(|file| file.name == *name) {
                None => changes.push(format!("{} appeared", shown(name))),
                Some(file) if file.bytes.0 != *bytes => {
                    changes.push(format!("{} changed", shown(name)))
                }
                Some(_) => {}
            }
        }
        for file in record.administration.iter().filter(|_| !part_removed) {
            if !files.iter().any(|(name, _)| *name == file.name) {
                changes.push(format!("{} went", shown(&file.name)));
            }
        }
        for dir in &dirs {
            if !record.admin_dirs.contains(dir) {
                changes.push(format!("{}/ appeared", shown(dir)));
            }
        }
        Ok(changes)
    }

    /// Remove what a cut-short removal left: the copy's recorded entries,
    /// deepest first, then its administration's recorded files and
    /// directories. Never a recursive delete: `remove_dir` fails on
    /// anything that appeared meanwhile.
    fn remove_remains(&self, record: &EvictionRecord) -> Result<()> {
        let root = &record.path;
        if exists(root)? {
            remove_file_if_there(&root.join(".git"))?;
            for entry in record.inventory.iter().rev() {
                let path = root.join(OsStr::from_bytes(&entry.path.0));
                match entry.dir {
                    true => remove_dir_if_there(&path)?,
                    false => remove_file_if_there(&path)?,
                }
            }
            remove_dir_if_there(root)?;
        }
        crash::point("copy remains removed");
        let admin = &record.admin_dir;
        if exists(admin)? {
            for file in &record.administration {
                remove_file_if_there(&admin.join(OsStr::from_bytes(&file.name.0)))?;
            }
            for dir in record.admin_dirs.iter().rev() {
                remove_dir_if_there(&admin.join(OsStr::from_bytes(&dir.0)))?;
            }
            remove_dir_if_there(admin)?;
        }
        crash::point("administration removed");
        Ok(())
    }
}

/// The archive is not the one the record names.
fn mismatch(record: &EvictionRecord, archive: &Archive) -> Option<Blocker> {
    let manifest = archive.manifest();
    let same = manifest.head == record.head
        && manifest.base == record.base
        && Some(archive.dir()) == record.archive();
    (!same).then(|| {
        Blocker::new(
            BlockerKind::CorruptEvidence,
            format!(
                "{}: not the archive of {} over {}",
                archive.dir().display(),
                record.head,
                record.base
            ),
        )
    })
}

fn refusal_kind(refusal: &evidence::Refusal) -> BlockerKind {
    match refusal {
        evidence::Refusal::OverBound { .. } => BlockerKind::EvidenceBound,
        evidence::Refusal::NotClean(_) => BlockerKind::Dirty,
        evidence::Refusal::NotAWorktree(_) => BlockerKind::NotAWorktree,
        _ => BlockerKind::Unarchivable,
    }
}

fn retained(kind: BlockerKind, detail: String) -> Outcome {
    Outcome::Retained(vec![Blocker::new(kind, detail)])
}

fn changed(record: &EvictionRecord, why: &str) -> Blocker {
    Blocker::new(
        BlockerKind::ChangedSinceRecord,
        format!(
            "{} ({}): {why}; left as it is",
            record.path.display(),
            record.seat
        ),
    )
}

/// Whether anything (even a dangling symlink) is at `path`.
pub(super) fn exists(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io(path, err)),
    }
}

fn remove_file_if_there(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(Error::io(path, err)),
    }
}

fn remove_dir_if_there(path: &Path) -> Result<()> {
    match fs::remove_dir(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(Error::io(path, err)),
    }
}

/// Whether the `.git` file at `full` (of `meta`) still holds `recorded`.
fn same_dot_git(full: &Path, meta: &fs::Metadata, recorded: &[u8]) -> Result<bool> {
    let bytes = meta
        .is_file()
        .then(|| fs::read(full))
        .transpose()
        .map_err(|err| Error::io(full, err))?;
    Ok(bytes.as_deref() == Some(recorded))
}

/// Whether an entry found `now` (a regular file when `is_file`) is the one
/// recorded as `was`: a directory by inode and mode (its size and times
/// move with what is in it), a file by inode, size, mode and modification
/// time.
fn untouched(was: &record::Entry, now: &record::Entry, is_file: bool) -> bool {
    match was.dir {
        true => now.dir && now.ino == was.ino && now.mode == was.mode,
        false => {
            is_file
                && (now.ino, now.size, now.mode, now.mtime_ns)
                    == (was.ino, was.size, was.mode, was.mtime_ns)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dir: bool, ino: u64, size: u64, mode: u32, mtime_ns: i128) -> record::Entry {
        record::Entry {
            path: record::Name(b"a".to_vec()),
            dir,
            mode,
            size,
            blocks: 8,
            dev: 1,
            ino,
            nlink: 1,
            mtime_ns,
            ctime_ns: 5,
        }
    }

    /// What makes a recorded entry count as touched.
    #[test]
    fn an_entry_is_untouched_only_as_recorded() {
        let dir = entry(true, 7, 4096, 0o755, 1);
        let file = entry(false, 7, 10, 0o644, 1);
        let table = [
            (&dir, entry(true, 7, 8192, 0o755, 2), false, true),
            (&dir, entry(true, 8, 4096, 0o755, 1), false, false),
            (&dir, entry(true, 7, 4096, 0o700, 1), false, false),
            (&dir, entry(false, 7, 4096, 0o755, 1), true, false),
            (&file, entry(false, 7, 10, 0o644, 1), true, true),
            (&file, entry(false, 7, 10, 0o644, 1), false, false),
            (&file, entry(false, 8, 10, 0o644, 1), true, false),
            (&file, entry(false, 7, 11, 0o644, 1), true, false),
            (&file, entry(false, 7, 10, 0o600, 1), true, false),
            (&file, entry(false, 7, 10, 0o644, 2), true, false),
        ];
        for (n, (was, now, is_file, expected)) in table.into_iter().enumerate() {
            assert_eq!(untouched(was, &now, is_file), expected, "row {n}");
        }
    }
}
