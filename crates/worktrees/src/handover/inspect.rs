//! Finding the worktree that holds a branch, proving whose it is, and
//! reading its content: everything [`super::decide`] judges.

use std::path::{Path, PathBuf};

use natives_core::{CancelToken, Error, Result};
use natives_system::paths::dir_id;

use super::{
    holder::{Content, Foreign, Holder, Owner, Paths, RunSummary},
    takeover::Takeover,
    untracked::{Regenerable, untracked},
};
use crate::{
    git::{self, Dirs, Git, Worktree},
    own_history,
    registry::{Registry, RunRecord},
};

/// The worktree holding a branch, and the repository's main worktree.
pub(crate) struct Found {
    /// The holder, as `git worktree list` shows it.
    pub worktree: Worktree,
    /// Its path, canonical.
    pub path: PathBuf,
    /// The main worktree: where repository-wide commands run.
    pub main: PathBuf,
}

/// The worktree that holds `refs/heads/BRANCH` in `repo`'s repository,
/// as git counts it: checked out there, or being rebased or bisected there.
pub(crate) fn find_holder(
    git: &Git,
    repo: &Path,
    branch: &str,
    cancel: &CancelToken,
) -> Result<Option<Found>> {
    let reference = format!("refs/heads/{branch}");
    let worktrees = git.worktrees(repo, cancel)?;
    let Some(main) = worktrees.first().map(|main| main.path.clone()) else {
        return Ok(None);
    };
    for worktree in worktrees {
        if !holds(git, &worktree, &reference, cancel)? {
            continue;
        }
        return Ok(Some(Found {
            path: dir_id(&worktree.path)?,
            worktree,
            main,
        }));
    }
    Ok(None)
}

fn holds(git: &Git, worktree: &Worktree, reference: &str, cancel: &CancelToken) -> Result<bool> {
    if worktree.branch.as_deref() == Some(reference) {
        return Ok(true);
    }
    if !worktree.detached {
        return Ok(false);
    }
    let Some(dirs) = git.dirs(&worktree.path, cancel)? else {
        return Ok(false);
    };
    Ok(git::branch_in_operation(&dirs.git_dir)?.as_deref() == Some(reference))
}

/// Whose the worktree at `path` is, by the records.
#[derive(Clone, Debug)]
pub(crate) struct Proof {
    /// The verdict.
    pub owner: Owner,
    /// The record that names the worktree, when exactly one does.
    pub record: Option<RunRecord>,
    /// The candidate it names it as.
    pub candidate: Option<String>,
    /// The handover to the new run that already folded the candidate, when
    /// a release was cut short and is being finished.
    pub pending: Option<String>,
}

impl Proof {
    /// Not the new run's to take over, for `why`.
    fn foreign(why: Foreign, record: Option<&RunRecord>) -> Proof {
        Proof {
            owner: Owner::Foreign(why),
            record: record.cloned(),
            candidate: None,
            pending: None,
        }
    }

    /// The run's record and the candidate, when the worktree is proven
    /// natives' own.
    pub(crate) fn owned(&self) -> Option<(&RunRecord, &str)> {
        if matches!(self.owner, Owner::Foreign(_)) {
            return None;
        }
        Some((self.record.as_ref()?, self.candidate.as_deref()?))
    }

    /// The run the proof is about, if any.
    pub(crate) fn run_id(&self) -> Option<&str> {
        self.record.as_ref().map(|record| record.id.as_str())
    }
}

/// Where a handover of `branch` to `takeover`'s new run stands before
/// anything is judged: no worktree holds the branch, the new run's own
/// does, or another one does, with the proof of whose it is.
pub(crate) enum Located {
    NotHeld,
    HeldByNewRun,
    Held(Box<(Found, Proof)>),
}

/// The first step of a release and of its dry run alike: check the branch
/// name and that the new run is recorded (`ENOENT`: a worktree is never
/// handed to a run nobody recorded, a typo), find the worktree holding the
/// branch and prove whose it is.
pub(crate) fn locate(
    registry: &Registry,
    git: &Git,
    repo: &Path,
    branch: &str,
    takeover: &Takeover,
    cancel: &CancelToken,
) -> Result<Located> {
    check_branch(branch)?;
    registry.show(takeover.new_run())?;
    let Some(found) = find_holder(git, repo, branch, cancel)? else {
        return Ok(Located::NotHeld);
    };
    let proof = prove_owner(&registry.list(None)?, &found.path, takeover);
    if proof.run_id() == Some(takeover.new_run()) {
        return Ok(Located::HeldByNewRun);
    }
    Ok(Located::Held(Box::new((found, proof))))
}

/// Prove whose the worktree at canonical `path` is from `records`: a
/// candidate not folded (or folded by an unfinished handover to this very
/// new run) that exactly one run names, directly under that run's
/// worktree root. Paths are compared canonically.
pub(crate) fn prove_owner(records: &[RunRecord], path: &Path, takeover: &Takeover) -> Proof {
    let (claims, folded) = claims_on(records, path, takeover);
    let mut runs: Vec<&str> = claims
        .iter()
        .map(|claim| claim.record.id.as_str())
        .collect();
    runs.sort_unstable();
    runs.dedup();
    match (claims.as_slice(), runs.len()) {
        ([], _) => match folded {
            Some(record) => Proof::foreign(
                Foreign::Folded {
                    run: record.id.clone(),
                    released_to: record.released_to.clone(),
                },
                Some(record),
            ),
            None => Proof::foreign(Foreign::NoRecord, None),
        },
        ([claim, ..], 1) => claim.proof(path, takeover),
        _ => Proof::foreign(
            Foreign::SeveralRecords(runs.iter().map(|r| r.to_string()).collect()),
            None,
        ),
    }
}

/// A record naming the worktree as one of its candidates, not folded (or
/// folded by a handover to the new run that is being finished).
struct Claim<'a> {
    record: &'a RunRecord,
    candidate: String,
    pending: Option<String>,
}

impl Claim<'_> {
    /// The owner, when this is the only run claiming the worktree at `path`:
    /// its run, provided the worktree is directly under the run's root.
    fn proof(&self, path: &Path, takeover: &Takeover) -> Proof {
        let record = self.record;
        let root = dir_id(&record.worktree_root).unwrap_or_else(|_| record.worktree_root.clone());
        if path.parent() != Some(root.as_path()) {
            let why = Foreign::NotUnderRoot {
                run: record.id.clone(),
                root,
            };
            return Proof::foreign(why, Some(record));
        }
        let run = record.id.clone();
        let owner = if takeover.is_earlier_attempt(&run) {
            Owner::EarlierAttempt { run }
        } else {
            Owner::OwnRun { run }
        };
        Proof {
            owner,
            record: Some(record.clone()),
            candidate: Some(self.candidate.clone()),
            pending: self.pending.clone(),
        }
    }
}

/// Every claim on the worktree at `path`, and the first record naming it
/// as a folded candidate.
fn claims_on<'a>(
    records: &'a [RunRecord],
    path: &Path,
    takeover: &Takeover,
) -> (Vec<Claim<'a>>, Option<&'a RunRecord>) {
    let mut claims = Vec::new();
    let mut folded = None;
    for record in records {
        for candidate in &record.candidates {
            if dir_id(&candidate.path).ok().as_deref() != Some(path) {
                continue;
            }
            let pending = pending_handover(record, &candidate.name, takeover);
            if !candidate.folded || pending.is_some() {
                let candidate = candidate.name.clone();
                claims.push(Claim {
                    record,
                    candidate,
                    pending,
                });
            } else {
                folded.get_or_insert(record);
            }
        }
    }
    (claims, folded)
}

/// The handover that folded `record`'s candidate `name` for `takeover`'s
/// new run and may still be unfinished.
fn pending_handover(record: &RunRecord, name: &str, takeover: &Takeover) -> Option<String> {
    let candidate = record.candidate(name)?;
    let handover = candidate.handover.as_ref().filter(|_| candidate.folded)?;
    (record.released_to.as_deref() == Some(takeover.new_run())).then(|| handover.clone())
}

/// Everything known about the worktree `found` and the run `proof` names,
/// `regenerable` letting untracked paths go.
pub(crate) fn inspect(
    git: &Git,
    registry: &Registry,
    found: &Found,
    branch: &str,
    proof: &Proof,
    regenerable: &Regenerable,
    cancel: &CancelToken,
) -> Result<Holder> {
    let tip = git.resolve(
        &found.main,
        &format!("refs/heads/{branch}^{{commit}}"),
        cancel,
    )?;
    let run = proof.record.as_ref().map(RunSummary::of);
    let driver = run.as_ref().map(|run| registry.driver_liveness(&run.id));
    let mut content = content(git, &found.path, regenerable, cancel)?;
    // The main worktree has no administration of its own (git never
    // removes it anyway).
    let only_here = match git.dirs(&found.path, cancel)? {
        Some(dirs) if dirs.git_dir != dirs.common_dir => {
            history(git, found, &dirs, &mut content, cancel)?
        }
        _ => Paths::default(),
    };
    Ok(Holder {
        branch: branch.to_owned(),
        path: found.path.clone(),
        owner: proof.owner.clone(),
        run,
        driver,
        head: found.worktree.head.clone(),
        tip,
        locked: found.worktree.locked.clone(),
        content,
        only_here,
    })
}

impl RunSummary {
    /// What a holder says of the run `record` describes.
    pub(crate) fn of(record: &RunRecord) -> RunSummary {
        RunSummary {
            id: record.id.clone(),
            task: record.task.clone(),
            status: record.status,
            awaiting_driver: record.awaiting_driver(),
        }
    }
}

/// What the linked worktree `dirs` alone remembers (see [`own_history`]):
/// its own refs, and each commit its `HEAD` reflog or `ORIG_HEAD` names
/// that nothing staying names (the repository's refs and their reflogs,
/// the main worktree's `HEAD` and reflog, the other worktrees' `HEAD`s).
/// History that cannot be read is noted in `content` as unsupported.
fn history(
    git: &Git,
    found: &Found,
    dirs: &Dirs,
    content: &mut Content,
    cancel: &CancelToken,
) -> Result<Paths> {
    let mut only_here = own_history::own_refs(&dirs.git_dir)?;
    let object_format = git.object_format(dirs, cancel)?;
    let Some(id_len) = git::id_len(&object_format) else {
        let why = format!("object format {object_format:?}, which natives cannot read");
        content.unsupported.push(why);
        return Ok(Paths::of(only_here));
    };
    let remembered = match own_history::remembered(dirs, id_len)? {
        Ok(remembered) => remembered,
        Err(unreadable) => {
            content.unsupported.push(unreadable.to_string());
            return Ok(Paths::of(only_here));
        }
    };
    let others: Vec<String> = git
        .worktrees(&found.main, cancel)?
        .into_iter()
        .filter(|w| dir_id(&w.path).ok().as_deref() != Some(found.path.as_path()))
        .filter_map(|w| w.head)
        .collect();
    let ids: Vec<&str> = remembered.iter().map(|r| r.id.as_str()).collect();
    let lost = git.named_by_nothing_else(&found.main, &ids, &others, cancel)?;
    let mut seen = Vec::new();
    for r in remembered.iter().filter(|r| lost.contains(&r.id)) {
        if !seen.contains(&r.id) {
            seen.push(r.id.clone());
            only_here.push(format!("{} ({})", &r.id[..r.id.len().min(12)], r.seen_as));
        }
    }
    Ok(Paths::of(only_here))
}

/// What the worktree at `path` holds beyond `HEAD`. The content proof: a
/// fresh private index's tree equals `HEAD^{tree}` (every tracked file's
/// bytes and mode on disk are `HEAD`'s), no entry `HEAD` does not hold but
/// caches and what `regenerable` matches (ignore rules count for nothing:
/// see [`super::untracked`]), the real index equals `HEAD` (nothing staged
/// only), no operation stopped half way, nothing git would transform.
pub(crate) fn content(
    git: &Git,
    path: &Path,
    regenerable: &Regenerable,
    cancel: &CancelToken,
) -> Result<Content> {
    let Some(dirs) = git.dirs(path, cancel)? else {
        return Ok(Content::default());
    };
    let head_tree = git
        .resolve(&dirs.top, "HEAD^{tree}", cancel)?
        .unwrap_or_default();
    let fresh_tree = git.fresh_tree(&dirs, cancel)?;
    let mut dirty = Vec::new();
    if fresh_tree != head_tree {
        let changes = git.diff_trees(&dirs, &head_tree, &fresh_tree, cancel)?;
        dirty.extend(changes.into_iter().map(|change| change.path));
    }
    let untracked = untracked(git, &dirs, regenerable, cancel)?;
    dirty.extend(untracked.kept);
    let staged = git.staged(&dirs, cancel)?;
    Ok(Content {
        inspectable: true,
        dirty: Paths::of(dirty),
        let_go: Paths::of(untracked.let_go),
        caches: untracked.caches,
        staged: Paths::of(staged.into_iter().map(|change| change.path)),
        operations: git::operations_in_progress(&dirs.git_dir)?
            .into_iter()
            .map(str::to_owned)
            .collect(),
        unsupported: git.unsupported(&dirs, cancel)?,
    })
}

/// A branch is named as `git branch` shows it: not empty, no NUL, not an
/// option, not a full reference.
fn check_branch(branch: &str) -> Result<()> {
    if branch.is_empty()
        || branch.contains('\0')
        || branch.starts_with('-')
        || branch.starts_with("refs/")
    {
        return Err(Error::invalid(format!(
            "{branch:?} is not a branch name (give it as `git branch` shows it)"
        )));
    }
    Ok(())
}
