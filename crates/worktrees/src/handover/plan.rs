//! A handover as a front asks for it: the new run, its task if it has one,
//! and whether to release or only to say what a release would do.
//!
//! [`plan`] is the dry run: the same look as [`release`]'s first one (find
//! the holder, prove the owner, inspect, [`decide`]) and nothing written,
//! no lock taken. [`Request`] is what the addon and the command line both
//! take, so the choice between a task's earlier attempts and a hand-run
//! review ([`Takeover::for_task`] or [`Takeover::hand_run`]), and between a
//! release and a plan, is made here once.

use std::path::{Path, PathBuf};

use natives_core::{CancelToken, Error, Result};

use super::{
    holder::Holder,
    inspect::{Located, inspect, locate},
    release::{Outcome, release},
    takeover::Takeover,
    untracked::Regenerable,
    verdict::{Decision, Refused, decide},
};
use crate::{
    git::Git,
    registry::{self, Registry},
};

/// What [`release`] would do now, found without writing anything.
#[derive(Debug)]
pub enum Plan {
    /// No worktree holds the branch: nothing would happen.
    NotHeld,
    /// The new run's own worktree holds it: nothing would happen.
    HeldByNewRun,
    /// The worktree would be released (as found now: a release decides
    /// again under the run's lock, from the record on disk).
    Release(Box<Holder>),
    /// A handover of this worktree to the new run was cut short: a release
    /// would finish it, deciding again unless its removal had begun.
    Finish {
        /// What was found.
        holder: Box<Holder>,
        /// The unfinished handover.
        handover: String,
    },
    /// Nothing would be released, and the text says why.
    Refuse(Refused),
}

/// What [`release`] would do with `branch` in `repo`'s repository for
/// `takeover`'s new run, judged as its first look judges, with nothing
/// written and no lock taken. Errors as [`release`]'s.
pub fn plan(
    registry: &Registry,
    git: &Git,
    repo: &Path,
    branch: &str,
    takeover: &Takeover,
    cancel: &CancelToken,
) -> Result<Plan> {
    let (found, proof) = match locate(registry, git, repo, branch, takeover, cancel)? {
        Located::NotHeld => return Ok(Plan::NotHeld),
        Located::HeldByNewRun => return Ok(Plan::HeldByNewRun),
        Located::Held(held) => *held,
    };
    let holder = inspect(
        git,
        registry,
        &found,
        branch,
        &proof,
        takeover.regenerable(),
        cancel,
    )?;
    if let Some(handover) = proof.pending {
        return Ok(Plan::Finish {
            holder: Box::new(holder),
            handover,
        });
    }
    Ok(match decide(&holder) {
        Decision::Release => Plan::Release(Box::new(holder)),
        Decision::Refuse(reasons) => Plan::Refuse(Refused::from_decision(holder, reasons)),
    })
}

/// A handover as a front asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// A worktree of the repository (any: the main one is found).
    pub repo: PathBuf,
    /// The branch the new run needs (short name).
    pub branch: String,
    /// The run taking the branch over.
    pub to_run: String,
    /// Its task: its other runs are its earlier attempts. `None` for a
    /// review started by hand, which can only take a branch from a run
    /// natives recorded.
    pub task: Option<String>,
    /// Untracked paths that may go with the worktree, as gitignore
    /// patterns (`node_modules/`, `dist/`): see [`super::Regenerable`].
    /// Recorded in the release.
    pub regenerable: Vec<String>,
    /// Only say what a release would do ([`plan`]).
    pub dry_run: bool,
}

/// What a [`Request`] did.
#[derive(Debug)]
pub enum Answer {
    /// It released, refused, or found nothing to do.
    Done(Outcome),
    /// A dry run: what a release would do.
    Planned(Plan),
}

impl Request {
    /// The takeover the request stands for: the task's earlier attempts, or
    /// a hand-run review's, with what it declares regenerable (`EINVAL` for
    /// a malformed run or task id, a run of another task, or a pattern that
    /// is not one; `ENOENT` for a task or run never recorded).
    pub fn takeover(&self, registry: &Registry) -> Result<Takeover> {
        registry::check_id("run", &self.to_run)?;
        let regenerable = Regenerable::new(self.regenerable.clone())?;
        let takeover = match &self.task {
            Some(task) => {
                registry::check_id("task", task)?;
                let takeover = Takeover::for_task(registry, task, &self.to_run)?;
                let run = registry.show(&self.to_run)?;
                if run.task != *task {
                    return Err(Error::invalid(format!(
                        "run {} is a run of task {}, not of task {task}",
                        self.to_run, run.task
                    )));
                }
                takeover
            }
            None => Takeover::hand_run(&self.to_run),
        };
        Ok(takeover.with_regenerable(regenerable))
    }

    /// Release (or, for a dry run, plan) as asked.
    pub fn run(&self, registry: &Registry, git: &Git, cancel: &CancelToken) -> Result<Answer> {
        let takeover = self.takeover(registry)?;
        if self.dry_run {
            let planned = plan(registry, git, &self.repo, &self.branch, &takeover, cancel)?;
            return Ok(Answer::Planned(planned));
        }
        let outcome = release(registry, git, &self.repo, &self.branch, &takeover, cancel)?;
        Ok(Answer::Done(outcome))
    }
}

#[cfg(test)]
mod tests {
    use natives_core::CancelToken;

    use super::*;
    use crate::{
        handover::{
            Reason,
            tests::{BRANCH, Scene},
        },
        registry::Status,
        testing::snapshot,
    };

    fn request(scene: &Scene, task: Option<&str>, dry_run: bool) -> Request {
        Request {
            repo: scene.repo.main.clone(),
            branch: BRANCH.into(),
            to_run: "r2".into(),
            task: task.map(Into::into),
            regenerable: Vec::new(),
            dry_run,
        }
    }

    fn planned(scene: &Scene, task: Option<&str>) -> Plan {
        let answer = request(scene, task, true)
            .run(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap();
        match answer {
            Answer::Planned(plan) => plan,
            Answer::Done(outcome) => panic!("a dry run released: {outcome:?}"),
        }
    }

    #[test]
    fn a_dry_run_says_what_a_release_would_do_and_changes_nothing() {
        let scene = Scene::new();
        let before = (snapshot(&scene.wt), scene.r1(), scene.repo.tip(BRANCH));
        let Plan::Release(holder) = planned(&scene, Some("t1")) else {
            panic!("not a release");
        };
        assert_eq!(holder.path, scene.wt);
        assert!(
            matches!(&holder.owner, super::super::Owner::EarlierAttempt { run } if run == "r1")
        );
        assert_eq!(
            (snapshot(&scene.wt), scene.r1(), scene.repo.tip(BRANCH)),
            before
        );
        assert!(scene.listed());

        scene.repo.write(&scene.wt, "notes.txt", "mine\n");
        let Plan::Refuse(refused) = planned(&scene, Some("t1")) else {
            panic!("not refused");
        };
        assert!(
            matches!(refused.reasons(), [Reason::Dirty(paths)] if paths.named == ["notes.txt"]),
            "{refused}"
        );
        assert_eq!(scene.r1().events, before.1.events, "nothing recorded");
    }

    #[test]
    fn a_dry_run_of_a_free_or_own_branch_has_nothing_to_do() {
        let scene = Scene::new();
        let mut free = request(&scene, Some("t1"), true);
        free.branch = "no-such-branch".into();
        let answer = free
            .run(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap();
        assert!(
            matches!(answer, Answer::Planned(Plan::NotHeld)),
            "{answer:?}"
        );
        let mut own = request(&scene, Some("t1"), true);
        own.to_run = "r1".into();
        let answer = own
            .run(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap();
        assert!(
            matches!(answer, Answer::Planned(Plan::HeldByNewRun)),
            "{answer:?}"
        );
    }

    #[test]
    fn a_hand_run_review_takes_over_only_as_a_run_natives_recorded() {
        let scene = Scene::new();
        let Plan::Release(holder) = planned(&scene, None) else {
            panic!("not a release");
        };
        assert!(matches!(&holder.owner, super::super::Owner::OwnRun { run } if run == "r1"));
        scene
            .registry
            .set_status("r1", Status::Landing, &CancelToken::new())
            .unwrap();
        let Plan::Refuse(refused) = planned(&scene, None) else {
            panic!("not refused");
        };
        assert_eq!(refused.reasons(), [Reason::Landing]);
    }

    #[test]
    fn a_request_releases_unless_it_is_a_dry_run() {
        let scene = Scene::new();
        let answer = request(&scene, Some("t1"), false)
            .run(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap();
        assert!(
            matches!(answer, Answer::Done(Outcome::Released(_))),
            "{answer:?}"
        );
        assert!(!scene.listed());
    }

    #[test]
    fn a_bad_run_task_or_pattern_is_refused_before_git_runs() {
        let scene = Scene::new();
        scene.record_run("t9", "r9", Status::Parked);
        let cases: [(Option<&str>, &str, &str, &str); 8] = [
            (Some("t1"), "", "", "EINVAL"),
            (None, "a\0b", "", "EINVAL"),
            (Some(" "), "r2", "", "EINVAL"),
            (Some("no-such-task"), "r2", "", "ENOENT"),
            (Some("t1"), "r-typo", "", "ENOENT"),
            (None, "r-typo", "", "ENOENT"),
            (Some("t1"), "r9", "", "EINVAL"),
            (Some("t1"), "r2", "#not a pattern", "EINVAL"),
        ];
        for dry_run in [true, false] {
            for (task, to_run, pattern, code) in cases {
                let mut asked = request(&scene, task, dry_run);
                asked.to_run = to_run.into();
                asked.regenerable = [pattern]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .map(Into::into)
                    .collect();
                let err = asked
                    .run(&scene.registry, &scene.git, &CancelToken::new())
                    .unwrap_err();
                assert_eq!(err.code(), code, "{task:?} {to_run:?} {pattern:?}: {err}");
            }
        }
        assert!(scene.listed() && !scene.r1().candidate("A").unwrap().folded);
    }

    #[test]
    fn an_unfinished_handover_is_planned_as_finished() {
        let scene = Scene::new();
        // A release cut short once its record is written (as by a kill).
        natives_system::crash::install(Some(Box::new(|point| {
            assert_ne!(point, "release recorded", "cut short");
        })));
        let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scene.release()));
        natives_system::crash::install(None);
        assert!(cut.is_err(), "the release was not cut short");
        let Plan::Finish { handover, holder } = planned(&scene, Some("t1")) else {
            panic!("not finishing");
        };
        let record = scene.r1();
        assert_eq!(
            record.candidate("A").unwrap().handover.as_deref(),
            Some(handover.as_str())
        );
        assert_eq!(holder.path, scene.wt);
    }
}
