//! Handing a branch over from an earlier attempt (seed 002).
//!
//! A retried task reopens a branch that an earlier run still has checked
//! out in its own worktree. Git lets a branch be checked out in one worktree
//! at a time, so the new run cannot start until that worktree goes. This
//! module releases it, and only it, when natives can prove two things:
//!
//! - **whose it is** ([`Owner`]): the worktree's path is a candidate
//!   worktree, not folded, that exactly one run's record names, laid
//!   directly under that record's worktree root (paths compared
//!   canonically). That run is an earlier attempt at the new run's task, or
//!   at least a run natives recorded; anything else is foreign;
//! - **that nothing would be lost** ([`decide`]): nobody drives the run (and
//!   that can be told: see below), it is not landing, the worktree holds no
//!   byte `HEAD` does not (see [`Content`]; only caches and what the caller
//!   declared [`Regenerable`] may go with it), stages nothing, is in the
//!   middle of no operation, is not locked, its `HEAD` is the branch tip,
//!   and its administration remembers no ref of its own and no commit that
//!   nothing else names (the rule the eviction pass shares: see
//!   `own_history.rs`).
//!
//! The branch, every commit and any pull request stay exactly where they
//! were: only the worktree goes, through a non-forced `git worktree remove`.
//!
//! **When nobody drives a run.** A driver holds the run's driver lock, and
//! taking it records a `driven` event. A run recorded as `running` is being
//! started: the orchestrator recorded it and its driver is on the way. So
//! "nobody drives it" is said of a `running` run only when its driver lock
//! is free *and* a driver took the run since it was last set running (its
//! driver started, then stopped or died); until then it is refused as
//! [`Reason::DriverNotStarted`]. A run in any other status is not driven
//! when its driver lock is free.
//!
//! [`decide`] is pure: it judges a [`Holder`], what was found about the
//! worktree, and collects every reason to refuse at once. [`release`] is
//! the only function that touches git or disk, in this order (each durable
//! step survives a kill; see its docs): find the holder, prove the owner,
//! take the run's owner lock, reload and prove again, **write the old run's
//! record first** (candidate folded, released to the new run, the branch,
//! an event), inspect and decide again from the record on disk, mark the
//! removal, remove. Any failure rolls the record back with an `undone`
//! event. [`Released::restore`] puts a released worktree back when the run
//! that took the branch over never started, unless ownership changed since.
//! [`plan`] is the dry run: the same first look and decision, nothing
//! written; [`Request`] is a handover as the fronts ask for it (a task's
//! retry or a hand-run review, released or only planned).
//!
//! Every refusal is a value ([`Outcome::Refused`], [`Restore::Refused`])
//! whose text says why; errors are for what went wrong (git missing, a
//! record unreadable).

pub(crate) mod inspect;
mod plan;
mod release;
mod restore;
mod untracked;

use std::{fmt, path::PathBuf};

use natives_core::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::registry::{Liveness, Registry, Status};

pub use plan::{Answer, Plan, Request, plan};
pub use release::release;
pub use restore::{Restore, RestoreRefusal};
pub use untracked::{CACHEDIR_SIGNATURE, CACHEDIR_TAG, Regenerable};

/// How many paths a refusal names; the rest are counted.
pub const PATHS_NAMED: usize = 5;

/// The terms a new run takes a branch over on: the earlier attempts at its
/// task it may take it from, and what it declares regenerable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Takeover {
    new_run: String,
    earlier_attempts: Vec<String>,
    regenerable: Regenerable,
}

impl Takeover {
    /// `new_run` may take over from these runs (never itself).
    pub fn new(new_run: &str, earlier_attempts: Vec<String>) -> Takeover {
        let earlier_attempts = earlier_attempts
            .into_iter()
            .filter(|run| run != new_run)
            .collect();
        Takeover {
            new_run: new_run.to_owned(),
            earlier_attempts,
            regenerable: Regenerable::default(),
        }
    }

    /// The same takeover, letting untracked paths `regenerable` matches go
    /// with the worktree (recorded in the release). Default: none.
    pub fn with_regenerable(mut self, regenerable: Regenerable) -> Takeover {
        self.regenerable = regenerable;
        self
    }

    /// What the new run declares regenerable.
    pub fn regenerable(&self) -> &Regenerable {
        &self.regenerable
    }

    /// `new_run` of `task` may take over from every other run recorded for
    /// the task ([`Registry::earlier_attempts`]).
    pub fn for_task(registry: &Registry, task: &str, new_run: &str) -> Result<Takeover> {
        let attempts = registry.earlier_attempts(task)?;
        Ok(Takeover::new(
            new_run,
            attempts.into_iter().map(|run| run.id).collect(),
        ))
    }

    /// A run with no task (a review started by hand): it has no earlier
    /// attempts, so it can only take a branch from a run natives recorded.
    pub fn hand_run(new_run: &str) -> Takeover {
        Takeover::new(new_run, Vec::new())
    }

    /// The run taking the branch over.
    pub fn new_run(&self) -> &str {
        &self.new_run
    }

    /// The runs it may take over from as earlier attempts.
    pub fn earlier_attempts(&self) -> &[String] {
        &self.earlier_attempts
    }

    fn is_earlier_attempt(&self, run: &str) -> bool {
        self.earlier_attempts.iter().any(|attempt| attempt == run)
    }
}

/// Whose worktree holds the branch, as far as natives can prove.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// An earlier attempt at the new run's task recorded it.
    EarlierAttempt {
        /// The run.
        run: String,
    },
    /// A run natives recorded, not an earlier attempt at the task.
    OwnRun {
        /// The run.
        run: String,
    },
    /// natives cannot prove it made this worktree.
    Foreign(Foreign),
}

/// Why a worktree is not provably natives' own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// No run records it as a candidate worktree.
    NoRecord,
    /// Several runs record it: none can be told to be the owner.
    SeveralRecords(Vec<String>),
    /// The run recording it did not lay it directly under its worktree root.
    NotUnderRoot {
        /// The run.
        run: String,
        /// Its worktree root.
        root: PathBuf,
    },
    /// The run recording it released it already.
    Folded {
        /// The run.
        run: String,
        /// To whom, if to a run.
        released_to: Option<String>,
    },
}

impl fmt::Display for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Foreign::NoRecord => f.write_str("no run records it as a candidate worktree"),
            Foreign::SeveralRecords(runs) => {
                write!(f, "several runs record it ({})", runs.join(", "))
            }
            Foreign::NotUnderRoot { run, root } => write!(
                f,
                "it is not directly under run {run}'s worktree root {}",
                root.display()
            ),
            Foreign::Folded { run, released_to } => match released_to {
                Some(to) => write!(f, "run {run} released it already, to run {to}"),
                None => write!(f, "run {run} released it already"),
            },
        }
    }
}

/// Some paths, named up to [`PATHS_NAMED`], all counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paths {
    /// The first few.
    pub named: Vec<String>,
    /// How many there are.
    pub total: usize,
}

impl Paths {
    /// `paths`, named up to [`PATHS_NAMED`].
    pub fn of(paths: impl IntoIterator<Item = String>) -> Paths {
        let mut named = Vec::new();
        let mut total = 0;
        for path in paths {
            if named.len() < PATHS_NAMED {
                named.push(path);
            }
            total += 1;
        }
        Paths { named, total }
    }

    /// No paths.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl fmt::Display for Paths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.named.join(", "))?;
        match self.total - self.named.len() {
            0 => Ok(()),
            more => write!(f, " and {more} more"),
        }
    }
}

/// What git says about the worktree's content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Content {
    /// The directory is the top of a worktree git can inspect (not missing,
    /// its `.git` file intact).
    pub inspectable: bool,
    /// Files whose bytes or mode differ from `HEAD` (hidden bits such as
    /// `assume-unchanged` and `skip-worktree` ignored), and every entry
    /// `HEAD` does not hold, ignored or not (empty directories and symlinks
    /// too; a directory's name ends in `/`), except what may go.
    pub dirty: Paths,
    /// Untracked entries that may go with the worktree: inside a directory
    /// that declares itself a cache (`CACHEDIR.TAG`), or declared
    /// [`Regenerable`] by the caller.
    pub let_go: Paths,
    /// Of those, every one let go as a cache, as an anchored gitignore
    /// pattern (`/target/`): what a removal cut short goes on letting go.
    pub caches: Vec<String>,
    /// Paths the real index holds differently from `HEAD` (staged only,
    /// unmerged).
    pub staged: Paths,
    /// Operations stopped half way (`rebase-merge`, `MERGE_HEAD`, ...).
    pub operations: Vec<String>,
    /// What the proof cannot vouch for: submodules, content-transforming
    /// attributes (filters, LFS, end-of-line conversion).
    pub unsupported: Vec<String>,
}

impl Content {
    /// Nothing in it that `HEAD` does not hold.
    pub fn is_clean(&self) -> bool {
        self.inspectable && self.dirty.is_empty() && self.staged.is_empty()
    }
}

/// The run a worktree's record belongs to, as the record says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary {
    /// Its id.
    pub id: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: Status,
    /// Recorded as running, and no driver took it since
    /// ([`crate::registry::RunRecord::awaiting_driver`]).
    pub awaiting_driver: bool,
}

/// What is known about the run and worktree holding the branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The branch (short name).
    pub branch: String,
    /// The worktree holding it (canonical).
    pub path: PathBuf,
    /// Whose it is.
    pub owner: Owner,
    /// The run whose record names the worktree, if one does.
    pub run: Option<RunSummary>,
    /// Whether that run is driven (`None` without a run).
    pub driver: Option<Liveness>,
    /// The commit the worktree has checked out.
    pub head: Option<String>,
    /// The commit the branch points at.
    pub tip: Option<String>,
    /// `git worktree lock`'s reason, when locked.
    pub locked: Option<String>,
    /// Its content.
    pub content: Content,
    /// What its administration alone remembers, and would lose with it:
    /// refs of its own (`refs/worktree/keep`), and commits its `HEAD`
    /// reflog or `ORIG_HEAD` name that no ref (or reflog entry of one)
    /// that stays names (`1f3a9c02d4e7 (HEAD@{1})`).
    pub only_here: Paths,
}

/// One reason not to release a worktree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Someone drives the run.
    DriverLive,
    /// Whether someone drives the run cannot be told (why).
    LivenessUnknown(String),
    /// The run is recorded as running and no driver took it since: its
    /// driver may be starting.
    DriverNotStarted,
    /// The run is landing.
    Landing,
    /// Uncommitted work on disk.
    Dirty(Paths),
    /// The worktree's `HEAD` is not the branch tip.
    HeadNotAtTip,
    /// natives did not make this worktree.
    NotMadeByUs(Foreign),
    /// Changes staged in the real index only.
    StagedOnly(Paths),
    /// History the worktree's administration alone remembers.
    OnlyHere(Paths),
    /// An operation stopped half way.
    OperationInProgress(Vec<String>),
    /// The worktree is locked (the reason given).
    Locked(String),
    /// Content the proof cannot vouch for.
    Unsupported(Vec<String>),
    /// The worktree cannot be inspected.
    NotInspectable,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::DriverLive => f.write_str("the run is being driven"),
            Reason::LivenessUnknown(why) => {
                write!(f, "whether the run is being driven cannot be told ({why})")
            }
            Reason::Landing => f.write_str("the run is landing"),
            Reason::Dirty(paths) => write!(f, "uncommitted changes: {paths}"),
            Reason::HeadNotAtTip => f.write_str("HEAD is not at the branch tip"),
            Reason::NotMadeByUs(why) => write!(f, "natives did not make this worktree: {why}"),
            Reason::DriverNotStarted => f.write_str(
                "the run is recorded as running and no driver has taken it since: its driver may be starting",
            ),
            Reason::StagedOnly(paths) => write!(f, "changes staged, not committed: {paths}"),
            Reason::OnlyHere(what) => write!(
                f,
                "history only this worktree's administration keeps (it would be lost): {what}"
            ),
            Reason::OperationInProgress(markers) => {
                write!(f, "an operation is in progress ({})", markers.join(", "))
            }
            Reason::Locked(why) if why.is_empty() => f.write_str("the worktree is locked"),
            Reason::Locked(why) => write!(f, "the worktree is locked ({why})"),
            Reason::Unsupported(what) => {
                write!(f, "content the proof cannot vouch for: {}", what.join(", "))
            }
            Reason::NotInspectable => f.write_str(
                "the worktree cannot be inspected (its directory or its .git file is missing)",
            ),
        }
    }
}

/// The verdict of [`decide`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The worktree may be released.
    Release,
    /// It may not, for every one of these reasons.
    Refuse(Vec<Reason>),
}

/// Whether `holder`'s worktree may be released to a new run: every reason
/// not to, at once, or none. Pure.
pub fn decide(holder: &Holder) -> Decision {
    let mut reasons = driver_reasons(holder);
    if holder
        .run
        .as_ref()
        .is_some_and(|run| run.status == Status::Landing)
    {
        reasons.push(Reason::Landing);
    }
    let content = &holder.content;
    if !content.dirty.is_empty() {
        reasons.push(Reason::Dirty(content.dirty.clone()));
    }
    if holder.head.is_none() || holder.head != holder.tip {
        reasons.push(Reason::HeadNotAtTip);
    }
    if let Owner::Foreign(why) = &holder.owner {
        reasons.push(Reason::NotMadeByUs(why.clone()));
    }
    if !content.staged.is_empty() {
        reasons.push(Reason::StagedOnly(content.staged.clone()));
    }
    if !holder.only_here.is_empty() {
        reasons.push(Reason::OnlyHere(holder.only_here.clone()));
    }
    if !content.operations.is_empty() {
        reasons.push(Reason::OperationInProgress(content.operations.clone()));
    }
    if let Some(why) = &holder.locked {
        reasons.push(Reason::Locked(why.clone()));
    }
    if !content.unsupported.is_empty() {
        reasons.push(Reason::Unsupported(content.unsupported.clone()));
    }
    if !content.inspectable {
        reasons.push(Reason::NotInspectable);
    }
    if reasons.is_empty() {
        Decision::Release
    } else {
        Decision::Refuse(reasons)
    }
}

/// Whether someone drives the run, or may be about to (see the module
/// docs): a live or unknown driver, or a `running` run no driver took yet.
fn driver_reasons(holder: &Holder) -> Vec<Reason> {
    let awaiting = holder.run.as_ref().is_some_and(|run| run.awaiting_driver);
    match &holder.driver {
        Some(Liveness::Live) => vec![Reason::DriverLive],
        Some(Liveness::Unknown(why)) => vec![Reason::LivenessUnknown(why.clone())],
        Some(Liveness::Dead) if awaiting => vec![Reason::DriverNotStarted],
        Some(Liveness::Dead) | None => Vec::new(),
    }
}

/// The operator has to decide: the takeover was refused, and the text says
/// why.
#[derive(Debug)]
pub enum Refused {
    /// natives cannot prove the worktree is its own.
    Foreign {
        /// What was found.
        holder: Box<Holder>,
        /// Every reason.
        reasons: Vec<Reason>,
    },
    /// The worktree is natives' own, but releasing it now could lose work.
    Unsafe {
        /// What was found.
        holder: Box<Holder>,
        /// Every reason.
        reasons: Vec<Reason>,
    },
    /// The release was attempted and failed; the record was rolled back
    /// when the worktree was found whole (`undone`), and otherwise left
    /// released, for a second call to finish the removal.
    ReleaseFailed {
        /// What was found.
        holder: Box<Holder>,
        /// What failed.
        error: Error,
        /// The record was rolled back.
        undone: bool,
    },
}

impl Refused {
    fn from_decision(holder: Holder, reasons: Vec<Reason>) -> Refused {
        let holder = Box::new(holder);
        if matches!(holder.owner, Owner::Foreign(_)) {
            Refused::Foreign { holder, reasons }
        } else {
            Refused::Unsafe { holder, reasons }
        }
    }

    /// What was found about the worktree.
    pub fn holder(&self) -> &Holder {
        match self {
            Refused::Foreign { holder, .. }
            | Refused::Unsafe { holder, .. }
            | Refused::ReleaseFailed { holder, .. } => holder,
        }
    }

    /// Every reason for the refusal (none for a failed release: see its
    /// error).
    pub fn reasons(&self) -> &[Reason] {
        match self {
            Refused::Foreign { reasons, .. } | Refused::Unsafe { reasons, .. } => reasons,
            Refused::ReleaseFailed { .. } => &[],
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let holder = self.holder();
        write!(f, "{holder}: ")?;
        match self {
            Refused::Foreign { reasons, .. } | Refused::Unsafe { reasons, .. } => {
                let reasons: Vec<String> = reasons.iter().map(Reason::to_string).collect();
                write!(f, "refused: {}", reasons.join("; "))
            }
            Refused::ReleaseFailed { error, undone, .. } => {
                let record = if *undone {
                    "the record was rolled back"
                } else {
                    "the record stays released; run the handover again to finish"
                };
                write!(f, "the release failed ({record}): {error}")
            }
        }
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "branch {} is checked out at {} by ",
            self.branch,
            self.path.display()
        )?;
        match (&self.owner, &self.run) {
            (Owner::EarlierAttempt { run }, Some(summary)) => write!(
                f,
                "run {run} ({}, an earlier attempt at this task)",
                summary.status
            )?,
            (_, Some(summary)) => write!(
                f,
                "run {} ({}, a run of task {})",
                summary.id, summary.status, summary.task
            )?,
            (_, None) => f.write_str("no run natives recorded")?,
        }
        let content = match (&self.content, self.content.is_clean()) {
            (content, _) if !content.inspectable => "not inspectable",
            (_, true) => "clean",
            (_, false) => "dirty",
        };
        write!(
            f,
            ", {content}, HEAD {} and branch tip {}",
            short(self.head.as_deref()),
            short(self.tip.as_deref())
        )
    }
}

/// A commit's first 12 hex digits, or `none`.
fn short(commit: Option<&str>) -> &str {
    commit.map_or("none", |c| &c[..c.len().min(12)])
}

/// What a [`release`] did.
#[derive(Debug)]
pub enum Outcome {
    /// No worktree holds the branch: nothing needed to happen.
    NotHeld,
    /// The new run's own worktree holds it: nothing needed to happen.
    HeldByNewRun,
    /// The worktree was released.
    Released(Released),
    /// Nothing was released, and the text says why.
    Refused(Refused),
}

/// A worktree that was released, with what is needed to put it back if the
/// review that took the branch over never starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Released {
    /// The run whose worktree it was.
    pub run: String,
    /// That run's task.
    pub task: String,
    /// Its candidate.
    pub candidate: String,
    /// The branch handed over.
    pub branch: String,
    /// Where the worktree was.
    pub path: PathBuf,
    /// The commit the branch pointed at when it was released.
    pub tip: String,
    /// The repository's main worktree (where git is run to put it back).
    pub repo: PathBuf,
    /// The run it was released to.
    pub released_to: String,
    /// This handover's id: a later handover of the same worktree has
    /// another, so a stale restore can tell.
    pub handover: String,
}

#[cfg(test)]
mod crash_tests;
#[cfg(test)]
mod lossless_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod decide_tests {
    use super::*;

    /// A worktree that may go: an earlier attempt's, parked, not driven,
    /// clean, at its tip.
    fn releasable() -> Holder {
        Holder {
            branch: "run/t1/A".into(),
            path: "/runs/r1/A".into(),
            owner: Owner::EarlierAttempt { run: "r1".into() },
            run: Some(RunSummary {
                id: "r1".into(),
                task: "t1".into(),
                status: Status::Parked,
                awaiting_driver: false,
            }),
            driver: Some(Liveness::Dead),
            head: Some("0123456789abcdef".into()),
            tip: Some("0123456789abcdef".into()),
            locked: None,
            content: Content {
                inspectable: true,
                ..Content::default()
            },
            only_here: Paths::default(),
        }
    }

    fn paths(names: &[&str]) -> Paths {
        Paths::of(names.iter().map(|n| n.to_string()))
    }

    /// One change to a releasable holder, and the one reason it must give.
    type Case = (&'static str, fn(&mut Holder), Reason);

    /// Cases that change the same fact, so they cannot hold together: the
    /// driver is live, unknown or not started yet, `HEAD` differs from the
    /// tip or is none.
    const EXCLUSIVE: [&[&str]; 2] = [
        &["driver live", "liveness unknown", "driver not started"],
        &["HEAD not at the tip", "no HEAD"],
    ];

    fn exclusive(a: &str, b: &str) -> bool {
        EXCLUSIVE
            .iter()
            .any(|group| group.contains(&a) && group.contains(&b))
    }

    fn cases() -> Vec<Case> {
        vec![
            (
                "driver live",
                |h| h.driver = Some(Liveness::Live),
                Reason::DriverLive,
            ),
            (
                "liveness unknown",
                |h| h.driver = Some(Liveness::Unknown("nfs".into())),
                Reason::LivenessUnknown("nfs".into()),
            ),
            (
                "driver not started",
                |h| {
                    let run = h.run.as_mut().unwrap();
                    (run.status, run.awaiting_driver) = (Status::Running, true);
                },
                Reason::DriverNotStarted,
            ),
            (
                "landing",
                |h| h.run.as_mut().unwrap().status = Status::Landing,
                Reason::Landing,
            ),
            (
                "dirty",
                |h| h.content.dirty = paths(&["a", "b"]),
                Reason::Dirty(paths(&["a", "b"])),
            ),
            (
                "HEAD not at the tip",
                |h| h.tip = Some("fedcba".into()),
                Reason::HeadNotAtTip,
            ),
            (
                "no HEAD",
                |h| (h.head, h.tip) = (None, None),
                Reason::HeadNotAtTip,
            ),
            (
                "not made by us",
                |h| h.owner = Owner::Foreign(Foreign::NoRecord),
                Reason::NotMadeByUs(Foreign::NoRecord),
            ),
            (
                "staged only",
                |h| h.content.staged = paths(&["s"]),
                Reason::StagedOnly(paths(&["s"])),
            ),
            (
                "only here",
                |h| h.only_here = paths(&["refs/worktree/keep"]),
                Reason::OnlyHere(paths(&["refs/worktree/keep"])),
            ),
            (
                "operation in progress",
                |h| h.content.operations = vec!["rebase-merge".into()],
                Reason::OperationInProgress(vec!["rebase-merge".into()]),
            ),
            (
                "locked",
                |h| h.locked = Some("on a usb disk".into()),
                Reason::Locked("on a usb disk".into()),
            ),
            (
                "unsupported",
                |h| h.content.unsupported = vec!["a.bin: filter=lfs".into()],
                Reason::Unsupported(vec!["a.bin: filter=lfs".into()]),
            ),
            (
                "not inspectable",
                |h| h.content.inspectable = false,
                Reason::NotInspectable,
            ),
        ]
    }

    #[test]
    fn a_releasable_holder_is_released_whatever_its_other_status() {
        assert_eq!(decide(&releasable()), Decision::Release);
        for status in Status::ALL.into_iter().filter(|s| *s != Status::Landing) {
            let mut holder = releasable();
            holder.run.as_mut().unwrap().status = status;
            assert_eq!(decide(&holder), Decision::Release, "{status}");
        }
        let mut own = releasable();
        own.owner = Owner::OwnRun { run: "r1".into() };
        assert_eq!(decide(&own), Decision::Release, "a run natives recorded");
    }

    #[test]
    fn every_reason_alone() {
        for (case, change, reason) in cases() {
            let mut holder = releasable();
            change(&mut holder);
            assert_eq!(decide(&holder), Decision::Refuse(vec![reason]), "{case}");
        }
    }

    #[test]
    fn every_reason_at_once_in_order() {
        let mut holder = releasable();
        let mut expected = Vec::new();
        for (case, change, reason) in cases() {
            if ["driver live", "driver not started", "no HEAD"].contains(&case) {
                continue;
            }
            change(&mut holder);
            expected.push(reason);
        }
        assert_eq!(decide(&holder), Decision::Refuse(expected));
    }

    #[test]
    fn reasons_combine_pairwise() {
        let cases = cases();
        for (i, (first, change_first, reason_first)) in cases.iter().enumerate() {
            for (second, change_second, reason_second) in &cases[i + 1..] {
                if exclusive(first, second) {
                    continue;
                }
                let mut holder = releasable();
                change_first(&mut holder);
                change_second(&mut holder);
                let expected = vec![reason_first.clone(), reason_second.clone()];
                assert_eq!(
                    decide(&holder),
                    Decision::Refuse(expected),
                    "{first} + {second}"
                );
            }
        }
    }

    /// A foreign worktree with no run has no driver to ask about: only
    /// "not made by us" is said of it.
    #[test]
    fn a_worktree_of_no_run_is_refused_as_not_ours_only() {
        let mut holder = releasable();
        holder.owner = Owner::Foreign(Foreign::NoRecord);
        holder.run = None;
        holder.driver = None;
        assert_eq!(
            decide(&holder),
            Decision::Refuse(vec![Reason::NotMadeByUs(Foreign::NoRecord)])
        );
    }

    #[test]
    fn paths_are_named_up_to_five_and_counted() {
        let many = paths(&["a", "b", "c", "d", "e", "f", "g"]);
        assert_eq!(many.named, ["a", "b", "c", "d", "e"]);
        assert_eq!(many.total, 7);
        assert_eq!(many.to_string(), "a, b, c, d, e and 2 more");
        assert_eq!(paths(&["a"]).to_string(), "a");
    }

    #[test]
    fn the_refusal_names_the_run_status_content_head_tip_and_relation() {
        let mut holder = releasable();
        holder.content.dirty = paths(&["notes.txt"]);
        holder.tip = Some("fedcba9876543210".into());
        let text = Refused::from_decision(holder.clone(), vec![Reason::HeadNotAtTip]).to_string();
        assert_eq!(
            text,
            "branch run/t1/A is checked out at /runs/r1/A by run r1 (parked, an earlier attempt \
             at this task), dirty, HEAD 0123456789ab and branch tip fedcba987654: refused: \
             HEAD is not at the branch tip"
        );
        holder.owner = Owner::OwnRun { run: "r1".into() };
        holder.content.dirty = Paths::default();
        holder.tip = holder.head.clone();
        let text = Refused::from_decision(holder.clone(), vec![Reason::DriverLive]).to_string();
        assert!(
            text.contains("by run r1 (parked, a run of task t1), clean, HEAD 0123456789ab and branch tip 0123456789ab"),
            "{text}"
        );
        holder.run = None;
        holder.owner = Owner::Foreign(Foreign::NoRecord);
        let refused = Refused::from_decision(holder, vec![Reason::NotMadeByUs(Foreign::NoRecord)]);
        assert!(matches!(refused, Refused::Foreign { .. }));
        assert!(
            refused.to_string().contains(
                "by no run natives recorded, clean, HEAD 0123456789ab and branch tip 0123456789ab: \
                 refused: natives did not make this worktree: no run records it as a candidate worktree"
            ),
            "{refused}"
        );
    }
}
