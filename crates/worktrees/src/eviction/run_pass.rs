//! One pass: which runs it visits, in what order, within which budgets,
//! and what it writes when it is done.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_system::{durable, lock, process::now_ms};
use serde::{Deserialize, Serialize};

use super::{
    blocker::{Blocker, BlockerKind},
    config::{Options, Settings, settings},
    copy::{Expect, Source, sources_of},
    machine::{Outcome, Step, exists},
    ownership::Ownership,
    record,
    report::{Evicted, Report, Retained},
    retention::{self, RETENTION_FILE, Retention},
};
use crate::{
    evidence::Bounds,
    git::Git,
    registry::{Liveness, Registry, RunRecord, Status},
};

/// The file that says where the next pass starts, in the registry's
/// directory.
const CURSOR_FILE: &str = "housekeeping.json";

/// Held for a whole pass: one pass at a time per home.
pub(super) const PASS_LOCK: &str = "housekeeping.lock";

/// Run one housekeeping pass over the runs recorded under `home` (see the
/// module docs of [`super`]). A pass that is not enabled returns at once,
/// saying why. Errors: the configuration unreadable (`EINVAL`), another
/// pass running (`EBUSY`), `cancel` tripped (`ECANCELED`), the registry's
/// directory unusable. A failure on one copy is a blocker of that copy,
/// not an error of the pass.
pub fn pass(home: &Path, git: &Git, options: &Options, cancel: &CancelToken) -> Result<Report> {
    let settings = settings(home, options)?;
    let mut report = empty_report(settings, options.dry_run);
    if report.disabled.is_some() {
        return Ok(report);
    }
    let registry = Registry::open(home);
    durable::create_private_dir(registry.root())?;
    let _pass = lock::try_exclusive(&registry.root().join(PASS_LOCK))?.ok_or_else(|| {
        Error::new(
            ErrorKind::Busy,
            format!("{}: another housekeeping pass is running", home.display()),
        )
    })?;
    let free_before = retention::free_bytes(home);
    let ownership = Ownership::read(&registry, home, None)?;
    report.blockers = ownership.general.clone();
    let mut pass = Pass {
        git,
        home,
        registry: &registry,
        ownership: &ownership,
        options,
        reclaim_bytes: settings.reclaim_bytes,
        retention: Retention::default(),
        report,
    };
    let visited = pass.order(read_cursor(registry.root())?.as_deref());
    for run in visited {
        cancel.check()?;
        pass.visit(run, cancel)?;
    }
    let mut report = pass.report;
    report.continue_after = report.visited.last().cloned();
    if !options.dry_run {
        write_cursor(registry.root(), report.continue_after.as_deref())?;
        let retention = record_retention(&registry, home, pass.retention, &report, free_before)?;
        report.retention = Some(retention);
    }
    Ok(report)
}

/// A report of nothing done yet, under `settings`.
fn empty_report(settings: Settings, dry_run: bool) -> Report {
    Report {
        settings,
        dry_run,
        disabled: settings.disabled(),
        visited: Vec::new(),
        continue_after: None,
        evicted: Vec::new(),
        retained: Vec::new(),
        empty_roots: Vec::new(),
        blockers: Vec::new(),
        retention: None,
    }
}

/// Complete what the pass retained with its time, the runs visited and the
/// free space before and after, and keep it durably beside the registry.
fn record_retention(
    registry: &Registry,
    home: &Path,
    mut retention: Retention,
    report: &Report,
    free_before: Option<u64>,
) -> Result<Retention> {
    retention.at_ms = now_ms();
    retention.runs_visited = report.visited.len() as u64;
    retention.observed_free_bytes_before = free_before;
    retention.observed_free_bytes_after = retention::free_bytes(home);
    let bytes = serde_json::to_vec_pretty(&retention).expect("retention serialises");
    durable::replace(&registry.root().join(RETENTION_FILE), &bytes)?;
    Ok(retention)
}

struct Pass<'a> {
    git: &'a Git,
    home: &'a Path,
    registry: &'a Registry,
    ownership: &'a Ownership,
    options: &'a Options,
    reclaim_bytes: u64,
    retention: Retention,
    report: Report,
}

impl<'a> Pass<'a> {
    /// The runs this pass visits: oldest first, starting after `after`
    /// (the run the last pass ended on) and wrapping around, at most
    /// [`super::Limits::runs`].
    fn order(&self, after: Option<&str>) -> Vec<&'a RunRecord> {
        let runs = &self.ownership.runs;
        let start = after
            .and_then(|after| runs.iter().position(|run| run.id == after))
            .map_or(0, |at| at + 1);
        runs.iter()
            .cycle()
            .skip(start)
            .take(runs.len().min(self.options.limits.runs))
            .collect()
    }

    fn visit(&mut self, run: &RunRecord, cancel: &CancelToken) -> Result<()> {
        self.report.visited.push(run.id.clone());
        let sources = sources_of(run);
        let mut run_blockers = Vec::new();
        if resumable(run.status) {
            let detail = format!("run {} is {}", run.id, run.status);
            run_blockers.push(Blocker::new(BlockerKind::ResumableRun, detail));
        }
        let liveness = self.registry.driver_liveness(&run.id);
        if liveness != Liveness::Dead {
            let detail = format!("run {}'s driver is {liveness}", run.id);
            run_blockers.push(Blocker::new(BlockerKind::LiveDriver, detail));
        }
        let held = self.registry.try_lock_run(&run.id)?;
        if held.is_none() {
            let detail = format!("run {}'s owner lock is held", run.id);
            run_blockers.push(Blocker::new(BlockerKind::LiveOwner, detail));
        }
        let artifacts = self.registry.artifacts(&run.id);
        for (source, authority, extra) in sources {
            cancel.check()?;
            if !exists(&source.path)? && !exists(&record::path_of(&artifacts, &source.seat))? {
                continue;
            }
            let mut blockers = run_blockers.clone();
            if matches!(source.expect, Expect::Candidate { .. }) && run.status != Status::Superseded
            {
                let detail = format!(
                    "run {} is {}: only superseded attempts are evicted",
                    run.id, run.status
                );
                blockers.push(Blocker::new(BlockerKind::ChangedCandidate, detail));
            }
            blockers.extend(self.ownership.blockers(run, &source.path, authority, extra));
            blockers.extend(self.budget_blockers());
            self.settle(run, &artifacts, &source, blockers, cancel)?;
        }
        if run_blockers.is_empty() {
            self.empty_root(run, cancel)?;
        }
        Ok(())
    }

    /// Reasons the pass's own budgets leave every further copy in place.
    fn budget_blockers(&self) -> Vec<Blocker> {
        let limits = &self.options.limits;
        let mut found = Vec::new();
        if self.report.evicted.len() >= limits.copies {
            let detail = format!("this pass evicted its most copies ({})", limits.copies);
            found.push(Blocker::new(BlockerKind::PassCopies, detail));
        }
        let unlinked: u64 = self.report.evicted.iter().map(|e| e.logical_bytes).sum();
        if unlinked >= self.reclaim_bytes {
            let detail = format!(
                "this pass unlinked {unlinked} bytes, its budget is {}",
                self.reclaim_bytes
            );
            found.push(Blocker::new(BlockerKind::ReclaimBudget, detail));
        }
        found
    }

    /// Evict one copy unless `blockers` keep it, and note what became of it.
    fn settle(
        &mut self,
        run: &RunRecord,
        artifacts: &Path,
        source: &Source,
        blockers: Vec<Blocker>,
        cancel: &CancelToken,
    ) -> Result<()> {
        let outcome = match blockers.is_empty() {
            false => Outcome::Retained(blockers),
            true => {
                let step = Step {
                    git: self.git,
                    registry: self.registry,
                    home: self.home,
                    run,
                    artifacts,
                    source,
                    quiet: self.options.quiet_period,
                    bounds: self.bounds(),
                    dry_run: self.options.dry_run,
                };
                match step.run(cancel) {
                    Ok(outcome) => outcome,
                    Err(err) if err.kind() == ErrorKind::Aborted => return Err(err),
                    Err(err) => Outcome::Retained(vec![Blocker::new(
                        BlockerKind::StepFailed,
                        err.to_string(),
                    )]),
                }
            }
        };
        match outcome {
            Outcome::Evicted(evicted, growth) => self.count_evicted(evicted, growth),
            Outcome::Retained(blockers) => self.count_retained(run, source, blockers),
            Outcome::Gone => {}
        }
        Ok(())
    }

    fn bounds(&self) -> Bounds {
        let published = self.retention.evidence_logical_bytes;
        Bounds {
            new_bytes: self.options.limits.evidence_bytes.saturating_sub(published),
            ..Bounds::default()
        }
    }

    fn count_evicted(&mut self, evicted: Evicted, growth: retention::Growth) {
        if !self.options.dry_run {
            self.retention
                .add_unlinked(evicted.logical_bytes, evicted.allocated_bytes);
            self.retention.add_growth(growth);
        }
        self.report.evicted.push(evicted);
    }

    fn count_retained(&mut self, run: &RunRecord, source: &Source, blockers: Vec<Blocker>) {
        let mut kinds: Vec<String> = blockers.iter().map(|b| b.kind.name()).collect();
        kinds.dedup();
        for kind in kinds {
            *self.retention.blockers.entry(kind).or_default() += 1;
        }
        self.report.retained.push(Retained {
            run: run.id.clone(),
            seat: source.seat.clone(),
            path: source.path.clone(),
            blockers,
        });
    }

    /// Remove `run`'s worktree root when it is an empty directory nobody
    /// names: `remove_dir`, which fails on anything that appeared since.
    /// An empty directory holds no one's work, and no git registration can
    /// be its checkout (a checkout has a `.git` file), so only the
    /// registrations natives knows the repository of are asked about.
    fn empty_root(&mut self, run: &RunRecord, cancel: &CancelToken) -> Result<()> {
        let root = &run.worktree_root;
        let empty = match fs::read_dir(root) {
            Ok(mut entries) => entries.next().is_none(),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(err) if err.kind() == io::ErrorKind::NotADirectory => return Ok(()),
            Err(err) => return Err(Error::io(root, err)),
        };
        if !empty
            || self.ownership.root_borrowed(run, root)
            || self.registered_under(run, root, cancel)?
        {
            return Ok(());
        }
        if !self.options.dry_run {
            match fs::remove_dir(root) {
                Ok(()) => self.retention.empty_roots_removed += 1,
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(_) => return Ok(()),
            }
        }
        self.report.empty_roots.push(root.clone());
        Ok(())
    }

    /// Whether a repository one of `run`'s eviction records names has a
    /// worktree registered in or at `root`.
    fn registered_under(&self, run: &RunRecord, root: &Path, cancel: &CancelToken) -> Result<bool> {
        let mut repos: Vec<PathBuf> = Vec::new();
        for (_, record) in record::all(&self.registry.artifacts(&run.id))? {
            match record {
                Ok(record) => repos.push(record.common_dir),
                Err(_) => return Ok(true),
            }
        }
        repos.sort();
        repos.dedup();
        for repo in repos.iter().filter(|repo| repo.is_dir()) {
            let worktrees = self.git.worktrees(repo, cancel)?;
            if worktrees.iter().any(|w| w.path.starts_with(root)) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Statuses a run may come back from: their copies stay materialised.
fn resumable(status: Status) -> bool {
    !matches!(status, Status::Failed | Status::Superseded | Status::Done)
}

#[derive(Serialize, Deserialize)]
struct Cursor {
    after: Option<String>,
}

fn read_cursor(root: &Path) -> Result<Option<String>> {
    let path = root.join(CURSOR_FILE);
    let Some(bytes) = durable::read_bounded(&path, 1 << 20)? else {
        return Ok(None);
    };
    Ok(serde_json::from_slice::<Cursor>(&bytes)
        .map(|cursor| cursor.after)
        .unwrap_or(None))
}

fn write_cursor(root: &Path, after: Option<&str>) -> Result<()> {
    let cursor = Cursor {
        after: after.map(str::to_owned),
    };
    let bytes = serde_json::to_vec(&cursor).expect("a cursor serialises");
    durable::replace(&root.join(CURSOR_FILE), &bytes)
}
