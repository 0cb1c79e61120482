//! Releasing the worktree that holds a branch, in an order that survives a
//! kill at any step.
//!
//! The record is written before anything is removed, so a worktree is never
//! gone while its run's record still claims it: a kill leaves either the
//! record unreleased and the worktree whole, or the record released (and
//! the worktree whole, being removed, or gone). A second call by the same
//! new run finishes what a killed one started: it recognises its own
//! unfinished handover in the record, and when the removal itself was cut
//! short (git killed half way), puts back the files git had already deleted
//! (they were proven equal to `HEAD`), proves the content again and removes.
//! The record is rolled back (an `undone` event) on any refusal or failure
//! while the worktree is whole; once a removal has started and left it
//! partly deleted, the record stays released for the next call to finish.

use std::path::{Path, PathBuf};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_system::process;
use serde::{Deserialize, Serialize};

use super::{
    holder::{Content, Holder, Owner, Paths, RunSummary},
    inspect::{Found, Located, Proof, inspect, locate, prove_owner},
    takeover::Takeover,
    untracked::Regenerable,
    verdict::{Decision, Reason, Refused, decide},
};
use crate::{
    git::Git,
    registry::{Event, EventKind, Registry, RunLock, RunRecord},
};
use natives_system::crash;

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

/// Release the worktree holding `branch` in `repo`'s repository to
/// `takeover`'s new run, when an earlier attempt at the same task, or a run
/// natives itself recorded, holds it and it is safe (see the module docs
/// of [`crate::handover`]). The branch, its commits and any pull request
/// are left exactly as they are.
///
/// [`Outcome::NotHeld`] or [`Outcome::HeldByNewRun`] when nothing needed to
/// happen, [`Outcome::Released`] with what is needed to put it back, or
/// [`Outcome::Refused`] saying why not. Errors are for what went wrong
/// before anything was written (git missing, an unreadable record, a bad
/// branch name).
pub fn release(
    registry: &Registry,
    git: &Git,
    repo: &Path,
    branch: &str,
    takeover: &Takeover,
    cancel: &CancelToken,
) -> Result<Outcome> {
    let (found, proof) = match locate(registry, git, repo, branch, takeover, cancel)? {
        Located::NotHeld => return Ok(Outcome::NotHeld),
        Located::HeldByNewRun => return Ok(Outcome::HeldByNewRun),
        Located::Held(held) => *held,
    };
    // An unfinished handover of our own is judged again under the lock:
    // its worktree may be half removed, which only the lock may repair.
    let resumed = proof.pending.is_some();
    if !resumed
        && let Some(refused) = first_look(git, registry, &found, branch, &proof, takeover, cancel)?
    {
        return Ok(Outcome::Refused(refused));
    }
    let Some((record, candidate)) = proof.owned() else {
        unreachable!("decide refuses every worktree not proven natives' own");
    };
    let (run, candidate) = (record.id.clone(), candidate.to_owned());
    crash::point("first look");
    let held = registry.lock_run(&run, cancel)?;
    let handover = Handover {
        registry,
        git,
        found: &found,
        branch,
        takeover,
        cancel,
        held,
        run,
        candidate,
    };
    handover.under_lock()
}

/// The first look, before any lock: the refusal, if [`decide`] refuses.
fn first_look(
    git: &Git,
    registry: &Registry,
    found: &Found,
    branch: &str,
    proof: &Proof,
    takeover: &Takeover,
    cancel: &CancelToken,
) -> Result<Option<Refused>> {
    let holder = inspect(
        git,
        registry,
        found,
        branch,
        proof,
        takeover.regenerable(),
        cancel,
    )?;
    Ok(match decide(&holder) {
        Decision::Refuse(reasons) => Some(Refused::from_decision(holder, reasons)),
        Decision::Release => None,
    })
}

/// A handover in progress, holding the old run's owner lock.
struct Handover<'a> {
    registry: &'a Registry,
    git: &'a Git,
    found: &'a Found,
    branch: &'a str,
    takeover: &'a Takeover,
    cancel: &'a CancelToken,
    held: RunLock,
    run: String,
    candidate: String,
}

impl Handover<'_> {
    fn under_lock(&self) -> Result<Outcome> {
        let proof = self.reprove()?;
        let Some((record, candidate)) = proof.owned() else {
            return Err(self.changed());
        };
        if record.id != self.run || candidate != self.candidate {
            return Err(self.changed());
        }
        let handover = match &proof.pending {
            Some(handover) => handover.clone(),
            None => self.record_release(record.clone())?,
        };
        crash::point("release recorded");
        self.prove_and_remove(&handover)
            .or_else(|error| self.fail(&handover, error))
    }

    fn changed(&self) -> Error {
        Error::new(
            ErrorKind::Changed,
            format!(
                "the records of {} changed while waiting for run {}'s lock; nothing was written",
                self.found.path.display(),
                self.run
            ),
        )
    }

    /// Prove the owner again from the records as they are now (read under
    /// the lock).
    fn reprove(&self) -> Result<Proof> {
        let records = self.registry.list(None)?;
        Ok(prove_owner(&records, &self.found.path, self.takeover))
    }

    /// Write the old run's record first: candidate folded, released to the
    /// new run, the branch, an event with the tip. The new handover's id.
    fn record_release(&self, mut record: RunRecord) -> Result<String> {
        let handover = process::nonce();
        let tip = self.tip()?;
        let candidate = record
            .candidate_mut(&self.candidate)
            .ok_or_else(|| self.changed())?;
        candidate.folded = true;
        candidate.handover = Some(handover.clone());
        record.released_to = Some(self.takeover.new_run().to_owned());
        record.released_branches.push(self.branch.to_owned());
        let mut event = self.event(EventKind::Released, &handover);
        event.to = Some(self.takeover.new_run().to_owned());
        event.tip = tip;
        event.repo = Some(self.found.main.clone());
        event.regenerable = self.takeover.regenerable().patterns().to_vec();
        record.events.push(event);
        self.held.save(&record)?;
        Ok(handover)
    }

    /// Inspect and decide again from the record on disk (the content proof
    /// included, on the terms the record gives: see [`recorded_let_go`]),
    /// mark the removal, remove. A removal marked already was cut short:
    /// what it took is put back first (and the directories it emptied may
    /// go), and when it took the whole directory there is nothing left to
    /// prove and git only has to forget the worktree.
    fn prove_and_remove(&self, handover: &str) -> Result<Outcome> {
        let record = self.held.load()?;
        let marked = removal_marked(&record, handover);
        if marked {
            self.put_back_what_a_cut_short_removal_took()?;
        }
        let mut let_go = recorded_let_go(&record, handover);
        let directory_gone = marked && !self.found.path.exists();
        if !directory_gone {
            let mut regenerable = Regenerable::new(let_go.clone())?;
            if marked {
                regenerable = regenerable.finishing();
            }
            let proof = self.reprove()?;
            let holder = inspect(
                self.git,
                self.registry,
                self.found,
                self.branch,
                &proof,
                &regenerable,
                self.cancel,
            )?;
            if let Decision::Refuse(reasons) = decide(&holder) {
                return self.refuse(handover, holder, reasons);
            }
            if !marked {
                self.mark_removal(handover, &holder.content)?;
                crash::point("removal marked");
            }
            let_go.extend(holder.content.caches);
        }
        self.remove(handover, &let_go)
    }

    /// `git worktree remove`, git's own check told that what `let_go`
    /// matches may go (it refuses untracked files otherwise), and holding
    /// the run's lock until it exits.
    fn remove(&self, handover: &str, let_go: &[String]) -> Result<Outcome> {
        crash::point("removing");
        let removed = self.git.remove_worktree_holding(
            &self.found.main,
            &self.found.path,
            self.held.as_fd(),
            let_go,
            self.cancel,
        );
        crash::point("removed");
        if self.still_listed()? {
            return Err(removed.err().unwrap_or_else(|| {
                let path = self.found.path.display();
                Error::new(
                    ErrorKind::Changed,
                    format!("git removed {path} but still lists it"),
                )
            }));
        }
        self.released(handover)
    }

    /// Files git deleted before a removal was cut short go back, from
    /// `HEAD` (they were proven equal to it), and a deleted `.git` file is
    /// repaired, so the worktree can be proven again. A worktree whose
    /// directory is gone altogether needs nothing: removal finishes it.
    fn put_back_what_a_cut_short_removal_took(&self) -> Result<()> {
        let path = &self.found.path;
        if !path.exists() {
            return Ok(());
        }
        if self.git.dirs(path, self.cancel)?.is_none() {
            let lock = self.held.as_fd();
            self.git
                .repair_worktree(&self.found.main, path, lock, self.cancel)?;
        }
        match self.git.dirs(path, self.cancel)? {
            Some(dirs) => self
                .git
                .restore_missing(&dirs, self.held.as_fd(), self.cancel),
            None => Err(Error::new(
                ErrorKind::Io,
                format!(
                    "{}: a removal was cut short and the worktree cannot be repaired",
                    path.display()
                ),
            )),
        }
    }

    /// Record that the content proof passed and the removal starts, with
    /// what goes along with the worktree (its note names it; the caches are
    /// kept as patterns, for a removal cut short to finish on these terms).
    fn mark_removal(&self, handover: &str, content: &Content) -> Result<()> {
        let mut record = self.held.load()?;
        let mut event = self.event(EventKind::Removing, handover);
        if !content.let_go.is_empty() {
            event.note = Some(format!("let go with it: {}", content.let_go));
        }
        event.regenerable = content.caches.clone();
        record.events.push(event);
        self.held.save(&record)
    }

    /// Whether git still lists the worktree (asked with a fresh token: the
    /// caller's may be what stopped the removal).
    fn still_listed(&self) -> Result<bool> {
        let worktrees = self.git.worktrees(&self.found.main, &CancelToken::new())?;
        Ok(worktrees.iter().any(|w| {
            natives_system::paths::dir_id(&w.path).ok().as_deref() == Some(&self.found.path)
        }))
    }

    fn released(&self, handover: &str) -> Result<Outcome> {
        let record = self.held.load()?;
        let tip = record
            .release_event(handover)
            .and_then(|event| event.tip.clone())
            .unwrap_or_default();
        Ok(Outcome::Released(Released {
            run: self.run.clone(),
            task: record.task,
            candidate: self.candidate.clone(),
            branch: self.branch.to_owned(),
            path: self.found.path.clone(),
            tip,
            repo: self.found.main.clone(),
            released_to: self.takeover.new_run().to_owned(),
            handover: handover.to_owned(),
        }))
    }

    /// A refusal found after the record was written: the record is rolled
    /// back (see [`Handover::may_undo`]) and the refusal answered.
    fn refuse(&self, handover: &str, holder: Holder, reasons: Vec<Reason>) -> Result<Outcome> {
        if !self.may_undo(handover)? {
            let why: Vec<String> = reasons.iter().map(ToString::to_string).collect();
            let error = Error::new(ErrorKind::Changed, why.join("; "));
            return Ok(self.failed(holder, error, false));
        }
        let why: Vec<String> = reasons.iter().map(ToString::to_string).collect();
        self.undo(handover, &format!("refused: {}", why.join("; ")))?;
        Ok(Outcome::Refused(Refused::from_decision(holder, reasons)))
    }

    /// A failure after the record was written: rolled back when allowed
    /// (see [`Handover::may_undo`]), answered as a failed release.
    fn fail(&self, handover: &str, error: Error) -> Result<Outcome> {
        let holder = self.holder_for_failure(handover);
        let undone = self.may_undo(handover)?;
        if undone {
            self.undo(handover, &format!("failed: {error}"))?;
        }
        Ok(self.failed(holder, error, undone))
    }

    fn failed(&self, holder: Holder, error: Error, undone: bool) -> Outcome {
        Outcome::Refused(Refused::ReleaseFailed {
            holder: Box::new(holder),
            error,
            undone,
        })
    }

    /// The record may be rolled back unless a removal started and left the
    /// worktree partly deleted (or could not be told whole): then it stays
    /// released, for a second call to finish.
    fn may_undo(&self, handover: &str) -> Result<bool> {
        Ok(!removal_marked(&self.held.load()?, handover) || self.whole())
    }

    /// What is known now, for a failure's text (a fresh token: the caller's
    /// may have stopped). When git cannot even say that much (a removal
    /// cut short leaves little to inspect), what the record says: the run,
    /// and the tip recorded at release; the content unknown.
    fn holder_for_failure(&self, handover: &str) -> Holder {
        let fresh = CancelToken::new();
        let inspected = self.reprove().and_then(|proof| {
            inspect(
                self.git,
                self.registry,
                self.found,
                self.branch,
                &proof,
                self.takeover.regenerable(),
                &fresh,
            )
        });
        inspected.unwrap_or_else(|_| {
            let record = self.held.load().ok();
            let tip = record
                .as_ref()
                .and_then(|record| record.release_event(handover)?.tip.clone());
            Holder {
                branch: self.branch.to_owned(),
                path: self.found.path.clone(),
                owner: self.owner(),
                run: record.as_ref().map(RunSummary::of),
                driver: Some(self.registry.driver_liveness(&self.run)),
                head: self.found.worktree.head.clone(),
                tip,
                locked: self.found.worktree.locked.clone(),
                content: Content::default(),
                only_here: Paths::default(),
            }
        })
    }

    fn owner(&self) -> Owner {
        let run = self.run.clone();
        if self.takeover.is_earlier_attempt(&run) {
            Owner::EarlierAttempt { run }
        } else {
            Owner::OwnRun { run }
        }
    }

    /// The worktree is whole: git can inspect it and no file of `HEAD` is
    /// missing from it. What cannot be told is not whole.
    fn whole(&self) -> bool {
        let fresh = CancelToken::new();
        match self.git.dirs(&self.found.path, &fresh) {
            Ok(Some(dirs)) => self
                .git
                .missing_from_head(&dirs, &fresh)
                .is_ok_and(|missing| missing.is_empty()),
            _ => false,
        }
    }

    /// Roll the record back: the candidate unfolded, the branch no longer
    /// released, an `undone` event saying why.
    fn undo(&self, handover: &str, why: &str) -> Result<()> {
        let mut record = self.held.load()?;
        let event = self.event(EventKind::Undone, handover).noting(why);
        record.take_back(handover, event);
        self.held.save(&record)?;
        crash::point("undone");
        Ok(())
    }

    fn event(&self, kind: EventKind, handover: &str) -> Event {
        let mut event = Event::now(kind);
        event.branch = Some(self.branch.to_owned());
        event.handover = Some(handover.to_owned());
        event.path = Some(self.found.path.clone());
        event
    }

    fn tip(&self) -> Result<Option<String>> {
        let tip = format!("refs/heads/{}^{{commit}}", self.branch);
        self.git.resolve(&self.found.main, &tip, self.cancel)
    }
}

/// What handover `handover` lets go with the worktree, as the record says:
/// the patterns its release declared regenerable, and the caches its
/// content proof let go when it marked the removal.
fn recorded_let_go(record: &RunRecord, handover: &str) -> Vec<String> {
    record
        .events
        .iter()
        .filter(|e| e.handover.as_deref() == Some(handover))
        .filter(|e| matches!(e.kind, EventKind::Released | EventKind::Removing))
        .flat_map(|e| e.regenerable.iter().cloned())
        .collect()
}

/// The record says handover `handover` proved the content and started
/// removing the worktree.
fn removal_marked(record: &RunRecord, handover: &str) -> bool {
    record
        .events
        .iter()
        .any(|e| e.kind == EventKind::Removing && e.handover.as_deref() == Some(handover))
}
