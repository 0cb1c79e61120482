//! Putting a released worktree back when the run that took its branch over
//! never started.
//!
//! A restore undoes one handover and nothing later: it refuses unless the
//! record still shows that very handover in force (a later handover of the
//! same worktree carries another id), the worktree was released to the same
//! run, the old run was not superseded, nobody drives it, and neither the
//! branch nor the path is taken. Then it moves the branch back to the tip
//! recorded at release if it moved (compare-and-swap; the reflog keeps where
//! it was), re-adds the worktree with `git worktree add`, and unfolds the
//! candidate. The worktree is added before the record is written: a kill in
//! between leaves the worktree back and the record still released, which
//! a second call recognises and finishes.
//!
//! A handover is restored from the [`Released`] its release answered, or,
//! when the process that asked for it is gone, from its id alone
//! ([`Released::find`]): the release event keeps everything a restore
//! needs (the branch, the path, the tip, the repository, the new run).

use std::{fmt, fs, io, path::PathBuf};

use natives_core::{CancelToken, Error, ErrorKind, Result};

use super::{inspect::find_holder, release::Released};
use crate::{
    git::Git,
    registry::{Event, EventKind, Liveness, Registry, RunRecord, Status},
};
use natives_system::crash;

/// What [`Released::restore`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restore {
    /// The worktree is back at the recorded tip and the candidate unfolded.
    Restored,
    /// Nothing was changed, for every one of these reasons.
    Refused(Vec<RestoreRefusal>),
}

/// Why a worktree is not put back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RestoreRefusal {
    /// The record does not show this handover in force: a later handover
    /// replaced it, or it was rolled back.
    NotInForce,
    /// The run's worktree is now released to another run (or to none).
    ReleasedElsewhere(Option<String>),
    /// The run was superseded since.
    Superseded,
    /// Someone may be driving the run.
    DriverNotDead(Liveness),
    /// Another worktree holds the branch now.
    BranchHeld(PathBuf),
    /// Something is at the worktree's path now.
    PathTaken(PathBuf),
}

impl fmt::Display for RestoreRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RestoreRefusal::NotInForce => {
                f.write_str("the record does not show this handover in force (a later one replaced it, or it was undone)")
            }
            RestoreRefusal::ReleasedElsewhere(Some(to)) => {
                write!(f, "the worktree is now released to run {to}")
            }
            RestoreRefusal::ReleasedElsewhere(None) => {
                f.write_str("the worktree is no longer released to anyone")
            }
            RestoreRefusal::Superseded => f.write_str("the run was superseded"),
            RestoreRefusal::DriverNotDead(liveness) => {
                write!(f, "the run's driver is not known to be stopped ({liveness})")
            }
            RestoreRefusal::BranchHeld(path) => {
                write!(f, "the branch is checked out at {}", path.display())
            }
            RestoreRefusal::PathTaken(path) => write!(f, "{} exists", path.display()),
        }
    }
}

impl Released {
    /// Handover `handover` as its run's record keeps it, found by its id
    /// alone: what an orchestrator that died since the release needs to
    /// put the worktree back. `EINVAL` for an empty id, or a release
    /// recorded without its repository (by an older natives); `ENOENT` when
    /// no run records a handover of that id.
    pub fn find(registry: &Registry, handover: &str) -> Result<Released> {
        if handover.trim().is_empty() {
            return Err(Error::invalid("a handover id must not be blank"));
        }
        for record in registry.list(None)? {
            if let Some(event) = record.release_event(handover) {
                return Released::recorded(&record, event, handover);
            }
        }
        Err(Error::new(
            ErrorKind::NotFound,
            format!("no run records a handover {handover:?}"),
        ))
    }

    /// The release `event` of `record` describes.
    fn recorded(record: &RunRecord, event: &Event, handover: &str) -> Result<Released> {
        let incomplete = |what: &str| {
            Error::invalid(format!(
                "handover {handover} of run {} was recorded without {what} (by an older natives); \
                 restore it from the answer its release gave",
                record.id
            ))
        };
        let path = event
            .path
            .clone()
            .ok_or_else(|| incomplete("its worktree"))?;
        let candidate = record
            .candidates
            .iter()
            .find(|c| c.handover.as_deref() == Some(handover))
            .or_else(|| record.candidates.iter().find(|c| c.path == path))
            .ok_or_else(|| incomplete("its candidate"))?;
        Ok(Released {
            run: record.id.clone(),
            task: record.task.clone(),
            candidate: candidate.name.clone(),
            branch: event
                .branch
                .clone()
                .ok_or_else(|| incomplete("its branch"))?,
            path,
            tip: event.tip.clone().ok_or_else(|| incomplete("its tip"))?,
            repo: event
                .repo
                .clone()
                .ok_or_else(|| incomplete("its repository"))?,
            released_to: event.to.clone().ok_or_else(|| incomplete("its new run"))?,
            handover: handover.to_owned(),
        })
    }

    /// Put the worktree back at the tip recorded when it was released,
    /// unless ownership changed since (see the module docs). Safe to call
    /// again after a kill: a restore already done answers
    /// [`Restore::Restored`].
    pub fn restore(&self, registry: &Registry, git: &Git, cancel: &CancelToken) -> Result<Restore> {
        let held = registry.lock_run(&self.run, cancel)?;
        let mut record = held.load()?;
        if !self.in_force(&record) {
            return Ok(if self.restored_already(&record) {
                Restore::Restored
            } else {
                Restore::Refused(vec![RestoreRefusal::NotInForce])
            });
        }
        let (refusals, added) = self.check(registry, git, &record, cancel)?;
        if !refusals.is_empty() {
            return Ok(Restore::Refused(refusals));
        }
        let mut event = Event::now(EventKind::Restored);
        event.branch = Some(self.branch.clone());
        event.handover = Some(self.handover.clone());
        event.path = Some(self.path.clone());
        event.tip = Some(self.tip.clone());
        if !added {
            if let Some(moved_from) = self.branch_back_to_tip(git, cancel)? {
                event.note = Some(format!("the branch was moved back from {moved_from}"));
            }
            git.add_worktree(&self.repo, &self.path, &self.branch, cancel)?;
            crash::point("worktree added");
        }
        record.take_back(&self.handover, event);
        held.save(&record)?;
        Ok(Restore::Restored)
    }

    fn in_force(&self, record: &RunRecord) -> bool {
        record.candidate(&self.candidate).is_some_and(|candidate| {
            candidate.folded && candidate.handover.as_deref() == Some(&self.handover)
        })
    }

    /// The last handover event about this worktree is that this handover
    /// was restored (no later handover since).
    fn restored_already(&self, record: &RunRecord) -> bool {
        let last = record.events.iter().rev().find(|e| {
            e.path.as_deref() == Some(&self.path)
                && matches!(
                    e.kind,
                    EventKind::Released
                        | EventKind::Removing
                        | EventKind::Undone
                        | EventKind::Restored
                )
        });
        last.is_some_and(|e| {
            e.kind == EventKind::Restored && e.handover.as_deref() == Some(&self.handover)
        })
    }

    /// Every reason not to restore, and whether the worktree is back
    /// already (a restore killed after adding it).
    fn check(
        &self,
        registry: &Registry,
        git: &Git,
        record: &RunRecord,
        cancel: &CancelToken,
    ) -> Result<(Vec<RestoreRefusal>, bool)> {
        let mut refusals = Vec::new();
        if record.released_to.as_deref() != Some(&self.released_to) {
            refusals.push(RestoreRefusal::ReleasedElsewhere(
                record.released_to.clone(),
            ));
        }
        if record.status == Status::Superseded {
            refusals.push(RestoreRefusal::Superseded);
        }
        let liveness = registry.driver_liveness(&self.run);
        if liveness != Liveness::Dead {
            refusals.push(RestoreRefusal::DriverNotDead(liveness));
        }
        let mut added = false;
        match find_holder(git, &self.repo, &self.branch, cancel)? {
            Some(found) if found.path == self.path => added = true,
            Some(found) => refusals.push(RestoreRefusal::BranchHeld(found.path)),
            None if exists(&self.path)? => {
                refusals.push(RestoreRefusal::PathTaken(self.path.clone()))
            }
            None => {}
        }
        Ok((refusals, added))
    }

    /// Move the branch back to the recorded tip if it moved (or was
    /// deleted); where it was, if it moved.
    fn branch_back_to_tip(&self, git: &Git, cancel: &CancelToken) -> Result<Option<String>> {
        let reference = format!("refs/heads/{}^{{commit}}", self.branch);
        let current = git.resolve(&self.repo, &reference, cancel)?;
        if current.as_deref() == Some(&self.tip) {
            return Ok(None);
        }
        let from = current.unwrap_or_default();
        git.move_branch(&self.repo, &self.branch, &self.tip, &from, cancel)?;
        crash::point("branch moved back");
        Ok(Some(if from.is_empty() {
            "nowhere (deleted)".into()
        } else {
            from
        }))
    }
}

fn exists(path: &std::path::Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io(path, err)),
    }
}
