//! Who may still want a copy: every run and task record and every
//! build-cache lease, read once per pass within bounds, and the blockers
//! they raise for one copy.
//!
//! A record that cannot be read, or that a newer natives wrote, may name
//! any copy, so it blocks every eviction of the pass (as does a listing
//! over the bounds); the pass still reports and removes empty roots. A
//! successor's `lineage` names a run, not a copy, and borrows nothing.
//!
//! Right before anything is removed, the eviction reads everything again
//! while it holds the copy's exclusive output lease (see
//! [`super::machine`]): a borrower that came after the pass began stops it.

use std::path::{Path, PathBuf};

use natives_core::{ErrorKind, Result};
use natives_ownership::lease::{EntryStatus, Leases};
use natives_system::durable;

use super::blocker::{Blocker, BlockerKind};
use crate::registry::{
    Authority, MAX_HISTORY, MAX_RECORD_BYTES, Registry, RunRecord, SCHEMA_VERSION, TaskRecord,
    bounded_listing, record,
};

/// The most bytes of one task's run records read (its run history).
pub const RUN_HISTORY_BYTES: u64 = 256 << 20;

/// The most bytes of task records read (the task history).
pub const TASK_HISTORY_BYTES: u64 = 64 << 20;

/// Every record and lease of the home, as one pass sees them.
pub(super) struct Ownership {
    /// Every run that could be read, oldest first.
    pub runs: Vec<RunRecord>,
    tasks: Vec<TaskRecord>,
    /// Reasons that hold for every copy.
    pub general: Vec<Blocker>,
    /// Paths a lease names, with who holds it.
    borrowed: Vec<(PathBuf, String)>,
}

impl Ownership {
    /// Read every record under `registry` and every lease under `home`.
    /// `held`: the directory (canonical) whose output lease the caller
    /// holds itself, which borrows nothing.
    pub(super) fn read(registry: &Registry, home: &Path, held: Option<&Path>) -> Result<Ownership> {
        let mut ownership = Ownership {
            runs: Vec::new(),
            tasks: Vec::new(),
            general: Vec::new(),
            borrowed: Vec::new(),
        };
        ownership.read_records(registry)?;
        ownership.read_leases(home, held);
        ownership
            .runs
            .sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        Ok(ownership)
    }

    fn read_records(&mut self, registry: &Registry) -> Result<()> {
        let task_dirs = match registry.task_dirs() {
            Ok(dirs) => dirs,
            Err(err) if err.kind() == ErrorKind::TooLarge => {
                self.general
                    .push(Blocker::new(BlockerKind::OwnershipBound, err.to_string()));
                return Ok(());
            }
            Err(err) => return Err(err),
        };
        let mut task_bytes = 0;
        for dir in task_dirs {
            let task = dir.join("task.json");
            match self.read_one(&task, &mut task_bytes, TASK_HISTORY_BYTES) {
                Some(bytes) => self.take_task(&task, &bytes),
                None if task_bytes > TASK_HISTORY_BYTES => return Ok(()),
                None => {}
            }
            self.read_runs(&dir.join("runs"));
        }
        Ok(())
    }

    fn read_runs(&mut self, dir: &Path) {
        let paths = match bounded_listing(dir, |name| {
            !name.starts_with('.') && name.ends_with(".json")
        }) {
            Ok(paths) => paths,
            Err(err) => {
                let kind = match err.kind() {
                    ErrorKind::TooLarge => BlockerKind::OwnershipBound,
                    _ => BlockerKind::UnknownRecord,
                };
                self.general.push(Blocker::new(kind, err.to_string()));
                return;
            }
        };
        let mut run_bytes = 0;
        for path in paths {
            match self.read_one(&path, &mut run_bytes, RUN_HISTORY_BYTES) {
                Some(bytes) => self.take_run(&path, &bytes),
                None if run_bytes > RUN_HISTORY_BYTES => return,
                None => {}
            }
        }
    }

    /// The bytes of the record at `path`, counted against `total` within
    /// `limit`; `None` (the reason noted) when it cannot be used.
    fn read_one(&mut self, path: &Path, total: &mut u64, limit: u64) -> Option<Vec<u8>> {
        match durable::read_bounded(path, MAX_RECORD_BYTES) {
            Ok(Some(bytes)) => {
                *total += bytes.len() as u64;
                if *total > limit {
                    self.general.push(Blocker::new(
                        BlockerKind::OwnershipBound,
                        format!(
                            "{}: the history it belongs to passes {limit} bytes (or {MAX_HISTORY} records); not read further",
                            path.display()
                        ),
                    ));
                    return None;
                }
                Some(bytes)
            }
            Ok(None) => {
                self.unknown(path, "listed but gone, or never written");
                None
            }
            Err(err) => {
                let kind = match err.kind() {
                    ErrorKind::TooLarge => BlockerKind::OwnershipBound,
                    _ => BlockerKind::UnknownRecord,
                };
                self.general.push(Blocker::new(kind, err.to_string()));
                None
            }
        }
    }

    fn take_task(&mut self, path: &Path, bytes: &[u8]) {
        match record::decode_task(bytes, path) {
            Ok(task) if task.version > SCHEMA_VERSION => self.newer(path, task.version),
            Ok(task) if !task.extra.is_empty() => {
                let fields = keys(&task.extra);
                self.unknown(
                    path,
                    &format!("fields this natives does not know: {fields}"),
                );
            }
            Ok(task) => self.tasks.push(task),
            Err(err) => self.unknown(path, &err.to_string()),
        }
    }

    fn take_run(&mut self, path: &Path, bytes: &[u8]) {
        match record::decode_run(bytes, path) {
            Ok(run) if run.version > SCHEMA_VERSION => self.newer(path, run.version),
            Ok(run) => self.runs.push(run),
            Err(err) => self.unknown(path, &err.to_string()),
        }
    }

    fn newer(&mut self, path: &Path, version: u32) {
        let why = format!(
            "written by a newer natives (schema {version}; this one reads {SCHEMA_VERSION})"
        );
        self.unknown(path, &why);
    }

    fn unknown(&mut self, path: &Path, why: &str) {
        self.general.push(Blocker::new(
            BlockerKind::UnknownRecord,
            format!("{}: {why}", path.display()),
        ));
    }

    fn borrowers(&self, path: &Path) -> Vec<Blocker> {
        self.borrowed
            .iter()
            .filter(|(borrowed, _)| overlaps(borrowed, path))
            .map(|(borrowed, holder)| {
                let detail = format!("{} is leased by {holder}", borrowed.display());
                Blocker::new(BlockerKind::OutputLease, detail)
            })
            .collect()
    }

    fn read_leases(&mut self, home: &Path, held: Option<&Path>) {
        let inventory = Leases::open(home).and_then(|leases| leases.inventory());
        let entries = match inventory {
            Ok(entries) => entries,
            Err(err) => {
                self.general.push(Blocker::new(
                    BlockerKind::UnreadableOwnership,
                    format!("the build-cache leases cannot be read: {err}"),
                ));
                return;
            }
        };
        for entry in entries {
            let holder = entry
                .owner
                .as_ref()
                .map(|owner| owner.describe())
                .unwrap_or_else(|| "an unknown holder".into());
            match &entry.status {
                EntryStatus::Unknown(why) => self.general.push(Blocker::new(
                    BlockerKind::UnreadableOwnership,
                    format!("lease {}: {why}", entry.slug),
                )),
                EntryStatus::Free if !entry.outputs_held => {}
                EntryStatus::Free if held.is_some() && entry.dir.as_deref() == held => {}
                _ => {
                    let worktree = entry.owner.as_ref().and_then(|o| o.worktree.clone());
                    for path in entry.dir.iter().chain(worktree.iter()) {
                        self.borrowed.push((path.clone(), holder.clone()));
                    }
                }
            }
        }
    }

    /// Why the copy at `path` of `run` (its own entry granted `authority`,
    /// carrying `extra` unknown fields) is wanted by a record or a lease.
    pub(super) fn blockers(
        &self,
        run: &RunRecord,
        path: &Path,
        authority: &Authority,
        extra_fields: &serde_json::Map<String, serde_json::Value>,
    ) -> Vec<Blocker> {
        let mut found = self.general.clone();
        found.extend(authority_blockers(authority));
        for (what, fields) in [
            ("the run record", &run.extra),
            ("the copy's entry", extra_fields),
            ("the copy's authority", &authority.extra),
        ] {
            if !fields.is_empty() {
                let detail = format!(
                    "{what} has fields this natives does not know: {}",
                    keys(fields)
                );
                found.push(Blocker::new(BlockerKind::UnknownField, detail));
            }
        }
        found.extend(self.references(run, path));
        found.extend(self.borrowers(path));
        found
    }

    fn references(&self, run: &RunRecord, path: &Path) -> Vec<Blocker> {
        let by_runs = self.runs.iter().flat_map(|other| named_by_run(other, run));
        let by_tasks = self.tasks.iter().flat_map(named_by_task);
        by_runs
            .chain(by_tasks)
            .filter(|(_, named, _)| overlaps(named, path))
            .map(|(kind, named, by)| Blocker::new(kind, format!("{by} names {}", named.display())))
            .collect()
    }

    /// Whether a lease or another run's record names a path in or around
    /// `root`: what keeps an empty root in place.
    pub(super) fn root_borrowed(&self, run: &RunRecord, root: &Path) -> bool {
        !self.references(run, root).is_empty()
            || self.borrowed.iter().any(|(path, _)| overlaps(path, root))
    }
}

fn authority_blockers(authority: &Authority) -> Vec<Blocker> {
    [
        (
            authority.public,
            BlockerKind::PublicAuthority,
            "its work was made public",
        ),
        (
            authority.selected_recovery,
            BlockerKind::RecoveryAuthority,
            "it was selected to recover the task from",
        ),
        (
            authority.approved,
            BlockerKind::ApprovalAuthority,
            "its work was approved",
        ),
        (
            authority.retain,
            BlockerKind::RetentionAuthority,
            "its source is to be kept",
        ),
    ]
    .into_iter()
    .filter(|(granted, _, _)| *granted)
    .map(|(_, kind, detail)| Blocker::new(kind, detail))
    .collect()
}

/// One path is the other, or inside it.
pub(super) fn overlaps(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn keys(fields: &serde_json::Map<String, serde_json::Value>) -> String {
    fields.keys().cloned().collect::<Vec<_>>().join(", ")
}

/// A path a record names, why it matters and who names it.
type Named<'a> = (BlockerKind, &'a Path, String);

/// The paths `other` names that keep a copy of `run`'s: its recovery
/// selection and sources, and (for another run) its candidates and seats.
fn named_by_run<'a>(other: &'a RunRecord, run: &RunRecord) -> Vec<Named<'a>> {
    let mut named: Vec<Named<'a>> = Vec::new();
    if let Some(recovery) = &other.recovery {
        let by = format!("run {}'s recovery", other.id);
        named.push((BlockerKind::RecoverySelection, recovery, by));
    }
    for source in &other.source_paths {
        let by = format!("run {}'s sources", other.id);
        named.push((BlockerKind::PathReference, source, by));
    }
    if other.id == run.id {
        return named;
    }
    for candidate in &other.candidates {
        let by = format!("run {}'s candidate {}", other.id, candidate.name);
        named.push((BlockerKind::PathReference, &candidate.path, by));
    }
    for seat in &other.seats {
        let (kind, number) = (seat.kind.name(), seat.number);
        let by = format!("run {}'s seat {kind} {number}", other.id);
        named.push((BlockerKind::PathReference, &seat.path, by));
    }
    named
}

/// The paths a task's record pins or names as replacements.
fn named_by_task(task: &TaskRecord) -> Vec<Named<'_>> {
    let pins = task.pins.iter().map(|pin| {
        let by = format!("task {}'s pins", task.task);
        (BlockerKind::TaskPin, pin.as_path(), by)
    });
    let replacements = task.replacements.iter().map(|replacement| {
        let by = format!("task {}'s replacements", task.task);
        (BlockerKind::TaskReplacement, replacement.as_path(), by)
    });
    pins.chain(replacements).collect()
}
