//! Why a copy stays: every check of a pass (the copy's content, its
//! ownership, its eviction's steps, the pass's budgets) names its doubt as
//! a [`Blocker`] of a stable [`BlockerKind`], so the kinds live below all
//! of them.

use std::fmt;

use serde::Serialize;

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
