//! What is found about the worktree holding a branch: whose it is, what
//! git says of its content, its run. Inspection (`inspect.rs`) fills a
//! [`Holder`] in, the verdict (`verdict.rs`) judges it, and a release
//! (`release.rs`) records it; each takes it from here.

use std::{fmt, path::PathBuf};

use crate::registry::{Liveness, Status};

/// How many paths a refusal names; the rest are counted.
pub const PATHS_NAMED: usize = 5;

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
    /// [`Regenerable`](super::Regenerable) by the caller.
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
