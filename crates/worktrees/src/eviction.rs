//! The inactive-checkout eviction pass (seed 003, part 2): housekeeping
//! archives and removes a few source copies nobody will resume, and reports
//! why every other one stays.
//!
//! A run leaves working copies behind: its review, judge and advisor seats
//! (detached checkouts of recorded heads) and the candidate attempts it
//! gave up on. Most are never read again, and a large repository makes each
//! one expensive. The pass frees that disk without losing a byte: a copy
//! goes only once evidence that rebuilds it without its repository is
//! published and validated ([`crate::evidence`]), and only when nothing at
//! all says it may still be wanted. On any doubt the copy stays, and the
//! report names the doubt ([`BlockerKind`]).
//!
//! - [`settings`]: whether the pass runs at all (`disk.auto_fold` and a
//!   positive `disk.worktree_reclaim_bytes` in the home's `config.json`, or
//!   the caller's [`Options`]).
//! - [`pass`] visits at most [`Limits::runs`] runs, oldest first, from
//!   where the previous pass stopped; evicts at most [`Limits::copies`]
//!   copies; publishes at most [`Limits::evidence_bytes`] of new evidence;
//!   stops unlinking once the reclaim budget is spent (the copy that
//!   crosses it goes whole). A dry run touches nothing and says what it
//!   would evict.
//! - Per copy, a state machine that survives a kill at any instant: a
//!   durable `artifacts/eviction-<seat>.json` in phase `pending` (the
//!   copy's inventory and its raw git administration) → evidence published
//!   and validated → everything proven again → a clean `git worktree
//!   remove` → phase `evicted`. A later pass finishes or abandons what a
//!   killed one left, never adopting a copy that changed.
//! - `retention.json` accounts for each pass: bytes unlinked (logical, and
//!   allocated blocks with hard links discounted), evidence added, copies
//!   evicted, empty roots removed, blockers by kind. These are estimates:
//!   the volume's observed free-space change is reported apart.
//! - [`seats`]: every archived tip of a run's evicted copies, and
//!   rebuilding one of them in a new directory, without the original
//!   repository.
//!
//! Task history, run records, candidate branches and retention markers are
//! never touched: a pass removes checkouts (and empty run roots), nothing
//! else.

mod config;
mod copy;
mod machine;
mod ownership;
mod record;
mod retention;
mod run_pass;
pub mod seats;

use std::{fmt, path::PathBuf, time::Duration};

use serde::Serialize;

pub use config::{CONFIG_FILE, Settings, settings};
pub use record::{EvictionRecord, Phase};
pub use retention::{RETENTION_FILE, Retention};
pub use run_pass::pass;

/// The most runs one pass visits.
pub const PASS_RUNS: usize = 64;

/// The most copies one pass evicts: each needs its evidence captured and
/// validated twice, seconds of git work on a large tree.
pub const PASS_COPIES: usize = 5;

/// The most new evidence one pass publishes.
pub const PASS_EVIDENCE_BYTES: u64 = 64 << 20;

/// How long a copy must have been left alone: anything in it, its git
/// administration or its run's history touched more recently says someone
/// may come back to it.
pub const QUIET_PERIOD: Duration = Duration::from_secs(24 * 60 * 60);

/// The bounds of one pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Runs visited ([`PASS_RUNS`]).
    pub runs: usize,
    /// Copies evicted ([`PASS_COPIES`]).
    pub copies: usize,
    /// New evidence published, in bytes ([`PASS_EVIDENCE_BYTES`]).
    pub evidence_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            runs: PASS_RUNS,
            copies: PASS_COPIES,
            evidence_bytes: PASS_EVIDENCE_BYTES,
        }
    }
}

/// How a pass is asked for. Unset settings come from the home's
/// configuration ([`settings`]).
#[derive(Clone, Debug)]
pub struct Options {
    /// Whether folding runs automatically (`disk.auto_fold`); the pass runs
    /// only when it does. Default: the configuration's, else off.
    pub auto_fold: Option<bool>,
    /// The most source bytes one pass unlinks (`disk.worktree_reclaim_bytes`);
    /// zero turns the pass off. Default: the configuration's, else zero.
    pub reclaim_bytes: Option<u64>,
    /// Say what would be evicted and why the rest stays; touch nothing.
    /// Default: off.
    pub dry_run: bool,
    /// How long a copy must have been left alone. Default: [`QUIET_PERIOD`].
    pub quiet_period: Duration,
    /// The pass's bounds. Default: [`Limits::default`].
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            auto_fold: None,
            reclaim_bytes: None,
            dry_run: false,
            quiet_period: QUIET_PERIOD,
            limits: Limits::default(),
        }
    }
}

/// Why a copy stays (or why a pass evicts nothing).
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "kebab-case"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockerKind {
    /// Its run may be resumed (running, blocked, parked, stale, landing).
    ResumableRun,
    /// A candidate that is not an empty superseded attempt: its branch,
    /// `HEAD`, index or files moved from its base, or its run was not
    /// superseded.
    ChangedCandidate,
    /// A seat without a recorded base and review head.
    UnrecordedHeads,
    /// A seat's `HEAD` is not its recorded review head, detached.
    HeadMoved,
    /// Its work was made public.
    PublicAuthority,
    /// It was selected to recover the task from.
    RecoveryAuthority,
    /// Its work was approved.
    ApprovalAuthority,
    /// Someone asked for its source to be kept.
    RetentionAuthority,
    /// Another run names it as its recovery source.
    RecoverySelection,
    /// The task pins it.
    TaskPin,
    /// The task chose it as a replacement.
    TaskReplacement,
    /// Another run's record names a path at, in or around it.
    PathReference,
    /// A run or task record this natives cannot read or did not write
    /// (written by a newer version): it may name the copy.
    UnknownRecord,
    /// A field this natives does not know in the copy's run record, or in
    /// its source or authority entries.
    UnknownField,
    /// The run records are over the bounds ownership inspection reads.
    OwnershipBound,
    /// Someone drives its run, or that cannot be told.
    LiveDriver,
    /// Someone holds its run's owner lock right now.
    LiveOwner,
    /// A build-cache lease names it (its worktree, or a cache inside it).
    OutputLease,
    /// Lease records that cannot be read: they may hide a borrower.
    UnreadableOwnership,
    /// It, its git administration or its run changed within the quiet
    /// period.
    RecentActivity,
    /// A git operation stopped half way (merge, rebase, bisect, ...).
    OperationInProgress,
    /// Refs of its own (`refs/bisect`, `refs/worktree`, ...), which die
    /// with its administration.
    LocalRefs,
    /// Its registration is locked (`git worktree lock`).
    Locked,
    /// Files in its git administration this natives does not know.
    UnknownAdministration,
    /// Its history cannot be archived (a reflog entry's commit is gone, a
    /// format natives cannot read).
    Unarchivable,
    /// Files whose bytes or mode differ from `HEAD`.
    Dirty,
    /// Changes only the index holds.
    Staged,
    /// Index entries marked `assume-unchanged` or `skip-worktree`.
    IndexHidden,
    /// Content git transforms, or submodules.
    UnsupportedContent,
    /// Files git does not track and no `.gitignore` ignores.
    Untracked,
    /// Ignored files that are not build outputs.
    Ignored,
    /// Build outputs (`target/`, `node_modules/`, ...): never archived.
    BuildOutput,
    /// Symbolic links.
    Symlink,
    /// FIFOs, sockets, devices.
    SpecialFile,
    /// Directories holding no tracked file (empty ones included).
    UnknownDirectory,
    /// Not the top of a linked git worktree.
    NotAWorktree,
    /// Its evidence would pass a bound (this pass's, the run's, the
    /// archive's).
    EvidenceBound,
    /// An eviction record whose evidence is missing or fails validation.
    CorruptEvidence,
    /// An eviction record whose copy or administration is not what it
    /// recorded: changed, recreated, partly gone in a way removal does not
    /// explain.
    ChangedSinceRecord,
    /// An eviction record that cannot be read or was written by a newer
    /// natives.
    UnreadableEvictionRecord,
    /// A step of its eviction failed (git, the filesystem): the error.
    StepFailed,
    /// The pass evicted its most copies.
    PassCopies,
    /// The pass unlinked its reclaim budget.
    ReclaimBudget,
}

impl BlockerKind {
    /// The kind as reports name it (`resumable-run`, ...).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

impl fmt::Display for BlockerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// One reason a copy stays, with what was seen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocker {
    /// What kind of reason.
    pub kind: BlockerKind,
    /// What was seen, for a person.
    pub detail: String,
}

impl Blocker {
    /// A blocker of `kind` saying `detail`.
    pub fn new(kind: BlockerKind, detail: impl Into<String>) -> Blocker {
        Blocker {
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

/// A copy the pass evicted (or, in a dry run, would evict).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evicted {
    /// Its run.
    pub run: String,
    /// Its seat name (`review-1`, `candidate-A`).
    pub seat: String,
    /// Where it was.
    pub path: PathBuf,
    /// The archive that rebuilds it (none in a dry run).
    pub archive: Option<PathBuf>,
    /// Its regular files' bytes.
    pub logical_bytes: u64,
    /// Its regular files' allocated blocks, hard links discounted unless
    /// their last link was in it.
    pub allocated_bytes: u64,
    /// Whether a pass before this one had begun it.
    pub resumed: bool,
}

/// A copy the pass left, and every reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retained {
    /// Its run.
    pub run: String,
    /// Its seat name (`review-1`, `candidate-A`).
    pub seat: String,
    /// Where it is.
    pub path: PathBuf,
    /// Why it stays.
    pub blockers: Vec<Blocker>,
}

/// What one pass did.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The settings it ran with.
    pub settings: Settings,
    /// Whether it touched nothing.
    pub dry_run: bool,
    /// Why it did nothing at all, when it was not enabled.
    pub disabled: Option<String>,
    /// The runs it visited, in order.
    pub visited: Vec<String>,
    /// The run the next pass starts after.
    pub continue_after: Option<String>,
    /// Copies evicted (in a dry run: that would be).
    pub evicted: Vec<Evicted>,
    /// Copies left, with their reasons.
    pub retained: Vec<Retained>,
    /// Empty run roots removed (in a dry run: that would be).
    pub empty_roots: Vec<PathBuf>,
    /// Reasons that hold for the whole pass (also given with each copy).
    pub blockers: Vec<Blocker>,
    /// The accounting written to `retention.json` (none in a dry run).
    pub retention: Option<Retention>,
}

// Named so that `cargo test source_eviction` (seed 003's focused check)
// runs both.
#[cfg(test)]
mod source_eviction;

#[cfg(test)]
mod source_eviction_crashes;
