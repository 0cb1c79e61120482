//! Handover against real repositories: every refusal, the cases a plain
//! `git worktree remove` would lose, restore, and a driver appearing after
//! the first look.

use std::{
    cell::RefCell,
    fs,
    path::{Path, PathBuf},
    process::Command,
    rc::Rc,
};

use natives_core::CancelToken;
use natives_system::paths::slug;

use super::*;
use crate::{
    git::Git,
    registry::{Candidate, Driver, EventKind, NewRun, Registry, RunRecord, Status},
    testing::{Repo, snapshot},
};
use natives_system::crash;

/// The branch of the earlier attempt's candidate.
pub(super) const BRANCH: &str = "run/t1/A";

/// A repository where run `r1` of task `t1` (parked, not driven) made
/// candidate `A` at `runs/r1/A` on [`BRANCH`], and run `r2` of the same
/// task wants the branch.
pub(super) struct Scene {
    pub repo: Repo,
    _home: tempfile::TempDir,
    pub home: PathBuf,
    pub registry: Registry,
    pub git: Git,
    pub wt: PathBuf,
}

impl Scene {
    pub(super) fn new() -> Scene {
        let repo = Repo::new();
        let home_dir = tempfile::tempdir().unwrap();
        let home = home_dir.path().canonicalize().unwrap();
        let registry = Registry::open(&home);
        let wt = repo.worktree(&repo.runs.join("r1/A"), BRANCH);
        let scene = Scene {
            registry,
            git: Git::new().unwrap(),
            wt,
            home,
            _home: home_dir,
            repo,
        };
        scene.record_run("t1", "r1", Status::Parked);
        let candidate = Candidate::new("A", BRANCH, &scene.wt);
        scene
            .registry
            .add_candidate("r1", &candidate, &CancelToken::new())
            .unwrap();
        scene.record_run("t1", "r2", Status::Running);
        scene
    }

    pub(super) fn record_run(&self, task: &str, run: &str, status: Status) {
        let cancel = CancelToken::new();
        self.registry.create_task(task, &cancel).unwrap();
        let new = NewRun {
            id: run.into(),
            task: task.into(),
            worktree_root: self.repo.runs.join(run),
            status,
        };
        self.registry.create_run(&new, &cancel).unwrap();
    }

    pub(super) fn takeover(&self) -> Takeover {
        Takeover::for_task(&self.registry, "t1", "r2").unwrap()
    }

    pub(super) fn release_by(&self, takeover: &Takeover) -> Outcome {
        release(
            &self.registry,
            &self.git,
            &self.repo.main,
            BRANCH,
            takeover,
            &CancelToken::new(),
        )
        .unwrap()
    }

    pub(super) fn release(&self) -> Outcome {
        self.release_by(&self.takeover())
    }

    pub(super) fn r1(&self) -> RunRecord {
        self.registry.show("r1").unwrap()
    }

    pub(super) fn listed(&self) -> bool {
        self.repo.worktree_paths().contains(&self.wt)
    }

    /// A refusal of [`BRANCH`] that leaves everything as it was.
    fn refused_leaving_all(&self, takeover: &Takeover) -> Refused {
        let before = snapshot(&self.wt);
        let record = self.r1();
        let tip = self.repo.tip(BRANCH);
        let Outcome::Refused(refused) = self.release_by(takeover) else {
            panic!("released");
        };
        assert_eq!(snapshot(&self.wt), before, "bytes changed: {refused}");
        assert!(self.listed(), "{refused}");
        assert_eq!(self.r1(), record, "the record changed: {refused}");
        assert_eq!(self.repo.tip(BRANCH), tip);
        refused
    }

    fn refused_for(&self, expected: &[Reason]) -> Refused {
        let refused = self.refused_leaving_all(&self.takeover());
        assert_eq!(refused.reasons(), expected, "{refused}");
        refused
    }
}

fn released(outcome: Outcome) -> Released {
    match outcome {
        Outcome::Released(released) => released,
        other => panic!("not released: {other:?}"),
    }
}

fn kinds(record: &RunRecord) -> Vec<EventKind> {
    record.events.iter().map(|e| e.kind.clone()).collect()
}

fn dirty(paths: &[&str]) -> Reason {
    Reason::Dirty(Paths::of(paths.iter().map(|p| p.to_string())))
}

#[test]
fn an_earlier_attempts_clean_worktree_is_released_and_the_branch_kept() {
    let scene = Scene::new();
    let tag = "Signature: 8a477f597d28d172789f06886806bc55\n";
    scene.repo.write(&scene.wt, "target/CACHEDIR.TAG", tag);
    scene
        .repo
        .write(&scene.wt, "target/debug/app", "build output");
    let tip = scene.repo.tip(BRANCH);
    let released = released(scene.release());
    assert_eq!(
        (
            released.run.as_str(),
            released.task.as_str(),
            released.candidate.as_str()
        ),
        ("r1", "t1", "A")
    );
    assert_eq!(
        (released.tip.as_str(), released.path.as_path()),
        (tip.as_str(), scene.wt.as_path())
    );
    assert_eq!(released.released_to, "r2");
    assert!(
        !scene.listed() && !scene.wt.exists(),
        "a cache (target/, tagged as cargo tags it) went with it"
    );
    assert_eq!(scene.repo.tip(BRANCH), tip, "the branch stays where it was");

    let record = scene.r1();
    let candidate = record.candidate("A").unwrap();
    assert!(candidate.folded);
    assert_eq!(
        candidate.handover.as_deref(),
        Some(released.handover.as_str())
    );
    assert_eq!(record.released_to.as_deref(), Some("r2"));
    assert_eq!(record.released_branches, [BRANCH]);
    let tail = &kinds(&record)[kinds(&record).len() - 2..];
    assert_eq!(tail, [EventKind::Released, EventKind::Removing]);
    let event = record.release_event(&released.handover).unwrap();
    assert_eq!(event.tip.as_deref(), Some(tip.as_str()));

    // What it was for: the new run can check the branch out.
    let review = scene.repo.runs.join("r2/review");
    scene.repo.git(
        &scene.repo.main,
        &["worktree", "add", review.to_str().unwrap(), BRANCH],
    );
}

#[test]
fn nothing_happens_when_the_branch_is_free_or_the_new_runs_own() {
    let scene = Scene::new();
    let takeover = scene.takeover();
    let outcome = release(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        "no-such-branch",
        &takeover,
        &CancelToken::new(),
    )
    .unwrap();
    assert!(matches!(outcome, Outcome::NotHeld), "{outcome:?}");
    released(scene.release());
    assert!(matches!(scene.release(), Outcome::NotHeld));
    let own = scene.repo.runs.join("r2/A");
    scene.repo.git(
        &scene.repo.main,
        &["worktree", "add", own.to_str().unwrap(), BRANCH],
    );
    let candidate = Candidate::new("A", BRANCH, &own);
    scene
        .registry
        .add_candidate("r2", &candidate, &CancelToken::new())
        .unwrap();
    assert!(matches!(scene.release(), Outcome::HeldByNewRun));
    for bad in ["", "-f", "refs/heads/x", "a\0b"] {
        let err = release(
            &scene.registry,
            &scene.git,
            &scene.repo.main,
            bad,
            &takeover,
            &CancelToken::new(),
        )
        .unwrap_err();
        assert_eq!(err.code(), "EINVAL", "{bad:?}");
    }
}

#[test]
fn a_driven_run_is_refused() {
    let scene = Scene::new();
    let _driving = scene.registry.drive_run("r1", &CancelToken::new()).unwrap();
    scene.refused_for(&[Reason::DriverLive]);
}

#[test]
fn a_run_whose_driver_cannot_be_asked_about_is_refused() {
    let scene = Scene::new();
    let locks = scene.registry.root().join("locks");
    fs::create_dir_all(&locks).unwrap();
    // A lock file that cannot be opened: liveness cannot be told.
    let lock = locks.join(format!("{}.driver.lock", slug(Path::new("r1"))));
    std::os::unix::fs::symlink(&lock, &lock).unwrap();
    let refused = scene.refused_leaving_all(&scene.takeover());
    assert!(
        matches!(refused.reasons(), [Reason::LivenessUnknown(why)] if why.contains("driver.lock")),
        "{refused}"
    );
}

#[test]
fn a_landing_run_is_refused() {
    let scene = Scene::new();
    scene
        .registry
        .set_status("r1", Status::Landing, &CancelToken::new())
        .unwrap();
    scene.refused_for(&[Reason::Landing]);
}

#[test]
fn uncommitted_edits_and_untracked_files_are_refused_and_named() {
    let scene = Scene::new();
    scene.repo.write(&scene.wt, "README", "edited\n");
    scene.repo.write(&scene.wt, "notes/todo.txt", "mine\n");
    let refused = scene.refused_for(&[dirty(&["README", "notes/todo.txt"])]);
    let text = refused.to_string();
    assert!(
        text.contains("run r1 (parked, an earlier attempt at this task), dirty"),
        "{text}"
    );
}

#[test]
fn a_file_ignored_only_by_local_rules_is_someones_work() {
    let scene = Scene::new();
    let exclude = scene.repo.main.join(".git/info/exclude");
    fs::write(&exclude, "secret.txt\n").unwrap();
    scene
        .repo
        .write(&scene.wt, "secret.txt", "not build output\n");
    scene.refused_for(&[dirty(&["secret.txt"])]);
}

#[test]
fn an_edit_hidden_by_assume_unchanged_is_refused() {
    let scene = Scene::new();
    scene
        .repo
        .git(&scene.wt, &["update-index", "--assume-unchanged", "README"]);
    scene.repo.write(&scene.wt, "README", "hidden edit\n");
    assert_eq!(
        scene.repo.git(&scene.wt, &["status", "--porcelain"]),
        "",
        "git hides it"
    );
    scene.refused_for(&[dirty(&["README"])]);
}

#[test]
fn an_edit_hidden_by_skip_worktree_is_refused() {
    let scene = Scene::new();
    scene.repo.git(
        &scene.wt,
        &["update-index", "--skip-worktree", "src/lib.rs"],
    );
    scene.repo.write(&scene.wt, "src/lib.rs", "hidden edit\n");
    assert_eq!(
        scene.repo.git(&scene.wt, &["status", "--porcelain"]),
        "",
        "git hides it"
    );
    scene.refused_for(&[dirty(&["src/lib.rs"])]);
}

#[test]
fn an_untracked_file_hidden_by_show_untracked_files_no_is_refused() {
    let scene = Scene::new();
    scene.repo.git(
        &scene.repo.main,
        &["config", "status.showUntrackedFiles", "no"],
    );
    scene
        .repo
        .write(&scene.wt, "draft.md", "unsaved thoughts\n");
    assert_eq!(
        scene.repo.git(&scene.wt, &["status", "--porcelain"]),
        "",
        "git hides it"
    );
    scene.refused_for(&[dirty(&["draft.md"])]);
}

#[test]
fn a_staged_only_change_is_refused() {
    let scene = Scene::new();
    scene.repo.write(&scene.wt, "README", "staged\n");
    scene.repo.git(&scene.wt, &["add", "README"]);
    scene.repo.write(&scene.wt, "README", "natives\n");
    let staged = Paths::of(["README".to_owned()]);
    scene.refused_for(&[Reason::StagedOnly(staged)]);
}

#[test]
fn a_stopped_interactive_rebase_is_refused() {
    let scene = Scene::new();
    scene.repo.write(&scene.wt, "second.txt", "2\n");
    scene.repo.commit(&scene.wt, "second");
    let editor = "sequence.editor=sed -i s/^pick/edit/";
    scene
        .repo
        .git(&scene.wt, &["-c", editor, "rebase", "-q", "-i", "HEAD~2"]);
    let refused = scene.refused_leaving_all(&scene.takeover());
    let expected = [
        Reason::HeadNotAtTip,
        Reason::OperationInProgress(vec!["REBASE_HEAD".into(), "rebase-merge".into()]),
    ];
    assert_eq!(refused.reasons(), expected, "{refused}");
    assert!(scene.wt.join(".git").exists());
}

#[test]
fn a_locked_worktree_is_refused() {
    let scene = Scene::new();
    let wt = scene.wt.to_str().unwrap();
    scene.repo.git(
        &scene.repo.main,
        &["worktree", "lock", "--reason", "on a usb disk", wt],
    );
    scene.refused_for(&[Reason::Locked("on a usb disk".into())]);
}

#[test]
fn content_git_would_transform_is_refused() {
    let scene = Scene::new();
    scene
        .repo
        .write(&scene.wt, ".gitattributes", "*.bin filter=lfs\n");
    scene.repo.write(&scene.wt, "a.bin", "pointer\n");
    scene
        .repo
        .git(&scene.wt, &["-c", "filter.lfs.clean=cat", "add", "-A"]);
    scene.repo.git(
        &scene.wt,
        &["-c", "filter.lfs.clean=cat", "commit", "-q", "-m", "lfs"],
    );
    let unsupported = vec!["a.bin: filter=lfs".to_owned()];
    scene.refused_for(&[Reason::Unsupported(unsupported)]);
}

#[test]
fn a_worktree_no_run_recorded_is_foreign() {
    let scene = Scene::new();
    let stray = scene
        .repo
        .worktree(&scene.repo.runs.join("r1/stray"), "stray");
    let takeover = scene.takeover();
    let outcome = release(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        "stray",
        &takeover,
        &CancelToken::new(),
    )
    .unwrap();
    let Outcome::Refused(refused @ Refused::Foreign { .. }) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(refused.reasons(), [Reason::NotMadeByUs(Foreign::NoRecord)]);
    assert!(
        refused
            .to_string()
            .contains("by no run natives recorded, clean"),
        "{refused}"
    );
    assert!(stray.join("stray.txt").exists());
}

#[test]
fn a_worktree_not_directly_under_its_runs_root_is_foreign() {
    let scene = Scene::new();
    let deep = scene
        .repo
        .worktree(&scene.repo.runs.join("r1/deeper/B"), "run/t1/B");
    let candidate = Candidate::new("B", "run/t1/B", &deep);
    scene
        .registry
        .add_candidate("r1", &candidate, &CancelToken::new())
        .unwrap();
    let takeover = scene.takeover();
    let outcome = release(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        "run/t1/B",
        &takeover,
        &CancelToken::new(),
    )
    .unwrap();
    let Outcome::Refused(refused) = outcome else {
        panic!("released")
    };
    let why = Foreign::NotUnderRoot {
        run: "r1".into(),
        root: scene.repo.runs.join("r1"),
    };
    assert_eq!(refused.reasons(), [Reason::NotMadeByUs(why)]);
    assert!(deep.exists());
}

#[test]
fn a_worktree_two_runs_record_is_foreign() {
    let scene = Scene::new();
    scene.record_run("t1", "r0", Status::Failed);
    let root = scene.repo.runs.join("r1");
    scene
        .registry
        .update("r0", &CancelToken::new(), |record| {
            record.worktree_root = root;
            record
                .candidates
                .push(Candidate::new("A", BRANCH, &scene.wt));
            Ok(())
        })
        .unwrap();
    let why = Foreign::SeveralRecords(vec!["r0".into(), "r1".into()]);
    scene.refused_for(&[Reason::NotMadeByUs(why)]);
}

#[test]
fn a_worktree_released_to_another_run_is_foreign_to_a_third() {
    let scene = Scene::new();
    scene
        .registry
        .update("r1", &CancelToken::new(), |record| {
            record.candidates[0].folded = true;
            record.released_to = Some("r9".into());
            Ok(())
        })
        .unwrap();
    let why = Foreign::Folded {
        run: "r1".into(),
        released_to: Some("r9".into()),
    };
    scene.refused_for(&[Reason::NotMadeByUs(why)]);
}

#[test]
fn a_hand_run_takes_over_only_from_a_run_natives_recorded() {
    let scene = Scene::new();
    let stray = scene
        .repo
        .worktree(&scene.repo.runs.join("r1/stray"), "stray");
    // The hand-run review records its own run (of a task of its own).
    scene.record_run("reviews", "review-by-hand", Status::Running);
    let hand = Takeover::hand_run("review-by-hand");
    let outcome = release(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        "stray",
        &hand,
        &CancelToken::new(),
    )
    .unwrap();
    assert!(
        matches!(outcome, Outcome::Refused(Refused::Foreign { .. })),
        "{outcome:?}"
    );
    assert!(stray.exists());
    // Run r1 is a run natives recorded, of a task the hand run has none of.
    let released = released(scene.release_by(&hand));
    assert_eq!(released.released_to, "review-by-hand");
    assert!(!scene.wt.exists());
}

#[test]
fn every_reason_is_given_at_once() {
    let scene = Scene::new();
    scene
        .registry
        .set_status("r1", Status::Landing, &CancelToken::new())
        .unwrap();
    let _driving = scene.registry.drive_run("r1", &CancelToken::new()).unwrap();
    scene.repo.write(&scene.wt, "x.txt", "x\n");
    let wt = scene.wt.to_str().unwrap();
    scene.repo.git(&scene.repo.main, &["worktree", "lock", wt]);
    scene.refused_for(&[
        Reason::DriverLive,
        Reason::Landing,
        dirty(&["x.txt"]),
        Reason::Locked(String::new()),
    ]);
}

/// Keeps a driver taken by a hook alive until the test ends.
type Taken = Rc<RefCell<Option<Driver>>>;

/// A hook that, at `point`, takes run `run` to drive it, as another
/// process starting to drive it at that moment would.
pub(super) fn drive_at(
    point: &'static str,
    registry: &Registry,
    run: &str,
) -> (crash::Hook, Taken) {
    let taken: Taken = Rc::default();
    let (registry, run, keep) = (registry.clone(), run.to_owned(), taken.clone());
    let hook: crash::Hook = Box::new(move |reached| {
        if reached == point && keep.borrow().is_none() {
            let driver = registry.drive_run(&run, &CancelToken::new()).unwrap();
            *keep.borrow_mut() = Some(driver);
        }
    });
    (hook, taken)
}

#[test]
fn a_driver_that_takes_the_run_after_the_first_look_is_seen_under_the_lock() {
    let scene = Scene::new();
    let before = snapshot(&scene.wt);
    let (hook, taken) = drive_at("first look", &scene.registry, "r1");
    crash::install(Some(hook));
    let outcome = scene.release();
    crash::install(None);
    assert!(taken.borrow().is_some(), "the hook never ran");
    let Outcome::Refused(refused @ Refused::Unsafe { .. }) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(refused.reasons(), [Reason::DriverLive]);
    assert_eq!(snapshot(&scene.wt), before);
    assert!(scene.listed());
    let record = scene.r1();
    assert!(!record.candidate("A").unwrap().folded, "rolled back");
    assert_eq!(record.released_to, None);
    assert!(record.released_branches.is_empty());
    let tail = &kinds(&record)[kinds(&record).len() - 2..];
    assert_eq!(tail, [EventKind::Released, EventKind::Undone]);
    drop(taken.borrow_mut().take());
    released(scene.release());
}

/// A release cancelled once the removal is marked: `git worktree remove`
/// never runs, the worktree is whole, so the record is rolled back.
#[test]
fn a_failed_removal_of_a_whole_worktree_rolls_the_record_back() {
    let scene = Scene::new();
    let before = snapshot(&scene.wt);
    let cancel = CancelToken::new();
    let stop = cancel.clone();
    crash::install(Some(Box::new(move |point| {
        if point == "removal marked" {
            stop.cancel();
        }
    })));
    let outcome = release(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        BRANCH,
        &scene.takeover(),
        &cancel,
    );
    crash::install(None);
    let Outcome::Refused(Refused::ReleaseFailed { error, undone, .. }) = outcome.unwrap() else {
        panic!("not a failed release");
    };
    assert_eq!((error.code(), undone), ("ABORT_ERR", true), "{error}");
    assert_eq!(snapshot(&scene.wt), before);
    assert!(scene.listed());
    let record = scene.r1();
    assert!(!record.candidate("A").unwrap().folded);
    assert_eq!(record.events.last().unwrap().kind, EventKind::Undone);
    assert!(
        record
            .events
            .last()
            .unwrap()
            .note
            .as_deref()
            .unwrap()
            .contains("ABORT_ERR")
    );
}

/// A removal that fails after taking part of the worktree leaves the record
/// released (the worktree is no longer whole), and the next call finishes.
#[test]
fn a_failed_removal_of_part_of_a_worktree_keeps_it_released_for_the_next_call() {
    let scene = Scene::new();
    let cancel = CancelToken::new();
    let (stop, wt) = (cancel.clone(), scene.wt.clone());
    crash::install(Some(Box::new(move |point| {
        if point == "removing" {
            fs::remove_file(wt.join("README")).unwrap();
            stop.cancel();
        }
    })));
    let outcome = release(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        BRANCH,
        &scene.takeover(),
        &cancel,
    );
    crash::install(None);
    let Outcome::Refused(refused @ Refused::ReleaseFailed { undone: false, .. }) = outcome.unwrap()
    else {
        panic!("not a failed release kept released");
    };
    assert!(
        refused
            .to_string()
            .contains("run the handover again to finish"),
        "{refused}"
    );
    assert!(scene.r1().candidate("A").unwrap().folded);
    assert!(scene.listed());
    released(scene.release());
    assert!(!scene.listed() && !scene.wt.exists());
}

#[test]
fn a_restore_after_a_failed_review_start_puts_the_worktree_back_at_the_recorded_tip() {
    let scene = Scene::new();
    let tip = scene.repo.tip(BRANCH);
    let released = released(scene.release());
    // The review never starts: its worktree cannot be made.
    let review = scene.repo.runs.join("r2/review");
    scene.repo.write(&review, "in-the-way", "x");
    assert!(!scene.repo.git_succeeds(
        &scene.repo.main,
        &["worktree", "add", review.to_str().unwrap(), BRANCH]
    ));
    // Meanwhile something moved the branch.
    scene.repo.git(
        &scene.repo.main,
        &["update-ref", &format!("refs/heads/{BRANCH}"), "main"],
    );

    assert_eq!(
        released
            .restore(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap(),
        Restore::Restored
    );
    assert!(scene.listed());
    assert_eq!(
        scene.repo.tip(BRANCH),
        tip,
        "the branch is back at the recorded tip"
    );
    assert_eq!(scene.repo.head(&scene.wt), tip);
    assert!(scene.wt.join("run/t1/A.txt").exists());
    let record = scene.r1();
    let candidate = record.candidate("A").unwrap();
    assert!(!candidate.folded && candidate.handover.is_none());
    assert_eq!(record.released_to, None);
    assert!(record.released_branches.is_empty());
    let last = record.events.last().unwrap();
    assert_eq!(last.kind, EventKind::Restored);
    assert!(
        last.note.as_deref().unwrap().contains("moved back"),
        "{last:?}"
    );
    assert_eq!(
        released
            .restore(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap(),
        Restore::Restored,
        "a second restore is a no-op"
    );
    // And the earlier attempt can be handed over again.
    self::released(scene.release());
}

#[test]
fn a_stale_restore_is_refused_after_a_later_handover() {
    let scene = Scene::new();
    let first = released(scene.release());
    assert_eq!(
        first
            .restore(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap(),
        Restore::Restored
    );
    let second = released(scene.release());
    assert_ne!(first.handover, second.handover);
    let record = scene.r1();
    let refused = first
        .restore(&scene.registry, &scene.git, &CancelToken::new())
        .unwrap();
    assert_eq!(refused, Restore::Refused(vec![RestoreRefusal::NotInForce]));
    assert!(!scene.listed(), "the later handover stands");
    assert_eq!(scene.r1(), record);
    assert_eq!(
        second
            .restore(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap(),
        Restore::Restored
    );
}

#[test]
fn a_restore_is_refused_when_ownership_changed_since() {
    let scene = Scene::new();
    let released = released(scene.release());
    let cancel = CancelToken::new();
    scene
        .registry
        .set_status("r1", Status::Superseded, &cancel)
        .unwrap();
    let _driving = scene.registry.drive_run("r1", &cancel).unwrap();
    let review = scene.repo.runs.join("r2/review");
    scene.repo.git(
        &scene.repo.main,
        &["worktree", "add", review.to_str().unwrap(), BRANCH],
    );
    let refused = released
        .restore(&scene.registry, &scene.git, &cancel)
        .unwrap();
    assert_eq!(
        refused,
        Restore::Refused(vec![
            RestoreRefusal::Superseded,
            RestoreRefusal::DriverNotDead(crate::registry::Liveness::Live),
            RestoreRefusal::BranchHeld(review.clone()),
        ])
    );
    let elsewhere = Released {
        released_to: "r7".into(),
        ..released.clone()
    };
    let Restore::Refused(why) = elsewhere
        .restore(&scene.registry, &scene.git, &cancel)
        .unwrap()
    else {
        panic!("restored");
    };
    assert_eq!(why[0], RestoreRefusal::ReleasedElsewhere(Some("r2".into())));
    scene.repo.git(
        &scene.repo.main,
        &["worktree", "remove", review.to_str().unwrap()],
    );
    fs::create_dir_all(&scene.wt).unwrap();
    let Restore::Refused(why) = released
        .restore(&scene.registry, &scene.git, &cancel)
        .unwrap()
    else {
        panic!("restored");
    };
    assert!(
        why.contains(&RestoreRefusal::PathTaken(scene.wt.clone())),
        "{why:?}"
    );
    assert!(scene.r1().candidate("A").unwrap().folded, "nothing changed");
}

/// Where the hostile-environment child finds its scene.
const HOSTILE_HOME: &str = "NATIVES_TEST_HOSTILE_HOME";

#[test]
fn git_answers_rightly_whatever_the_callers_environment_and_configuration() {
    let hostile = tempfile::tempdir().unwrap();
    let home = hostile.path();
    let fsmonitor_ran = home.join("fsmonitor-ran");
    let hook = home.join("fsmonitor");
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\ntouch '{}'\nprintf 'token\\0'\n",
            fsmonitor_ran.display()
        ),
    )
    .unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    fs::set_permissions(&hook, executable).unwrap();
    fs::write(home.join("everything"), "*\n").unwrap();
    fs::write(
        home.join(".gitconfig"),
        format!(
            "[status]\n\tshowUntrackedFiles = no\n[core]\n\tfsmonitor = {}\n\texcludesFile = {}\n\tuntrackedCache = true\n",
            hook.display(),
            home.join("everything").display()
        ),
    )
    .unwrap();
    let elsewhere = Repo::new();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "handover::tests::hostile_environment_child",
            "--nocapture",
        ])
        .env(HOSTILE_HOME, home)
        .env("HOME", home)
        .env("GIT_DIR", elsewhere.main.join(".git"))
        .env("GIT_WORK_TREE", &elsewhere.main)
        .env("GIT_INDEX_FILE", home.join("no-such-index"))
        .env("GIT_OBJECT_DIRECTORY", home.join("no-such-objects"))
        .env(
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            elsewhere.main.join(".git/objects"),
        )
        .env("GIT_CONFIG_PARAMETERS", "'status.showuntrackedfiles'='no'")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("hostile environment: right answers"));
    assert!(
        !fsmonitor_ran.exists(),
        "the caller's fsmonitor was consulted"
    );
}

/// The child of the hostile-environment test: its environment points git
/// elsewhere and its `~/.gitconfig` hides untracked files.
#[test]
#[ignore = "run by git_answers_rightly_whatever_the_callers_environment_and_configuration in a child process"]
fn hostile_environment_child() {
    if std::env::var_os(HOSTILE_HOME).is_none() {
        return;
    }
    let scene = Scene::new();
    scene.repo.write(&scene.wt, "draft.md", "unsaved\n");
    let refused = scene.refused_for(&[dirty(&["draft.md"])]);
    assert!(refused.to_string().contains("dirty"));
    fs::remove_file(scene.wt.join("draft.md")).unwrap();
    let released = released(scene.release());
    assert!(!scene.wt.exists() && !scene.listed());
    assert_eq!(
        released
            .restore(&scene.registry, &scene.git, &CancelToken::new())
            .unwrap(),
        Restore::Restored
    );
    assert!(scene.listed());
    println!("hostile environment: right answers");
}

/// The window between an orchestrator recording a run as running and its
/// driver taking it: nobody can say yet that nobody drives it. Refused
/// until a driver has taken it since it was set running and let it go
/// (however it went), or its status says it is not running.
#[test]
fn a_run_set_running_is_refused_until_its_driver_has_taken_it() {
    let scene = Scene::new();
    let cancel = CancelToken::new();
    scene
        .registry
        .set_status("r1", Status::Running, &cancel)
        .unwrap();
    scene.refused_for(&[Reason::DriverNotStarted]);
    let driver = scene.registry.drive_run("r1", &cancel).unwrap();
    scene.refused_for(&[Reason::DriverLive]);
    // The driver marks the run running again while it drives, then dies.
    scene
        .registry
        .set_status("r1", Status::Running, &cancel)
        .unwrap();
    drop(driver);
    let kinds = kinds(&scene.r1());
    assert_eq!(
        kinds[kinds.len() - 3..],
        [EventKind::Driven, EventKind::Status, EventKind::Driven]
    );
    released(scene.release());
}

#[test]
fn a_run_recorded_running_from_the_start_waits_for_its_driver() {
    let scene = Scene::new();
    scene.record_run("t1", "r3", Status::Running);
    let wt = scene
        .repo
        .worktree(&scene.repo.runs.join("r3/B"), "run/t1/B");
    let candidate = Candidate::new("B", "run/t1/B", &wt);
    let cancel = CancelToken::new();
    scene
        .registry
        .add_candidate("r3", &candidate, &cancel)
        .unwrap();
    let release_b = || {
        release(
            &scene.registry,
            &scene.git,
            &scene.repo.main,
            "run/t1/B",
            &scene.takeover(),
            &cancel,
        )
        .unwrap()
    };
    let before = scene.repo.state(&wt);
    let Outcome::Refused(refused) = release_b() else {
        panic!("released a run whose driver had not started");
    };
    assert_eq!(refused.reasons(), [Reason::DriverNotStarted]);
    assert!(refused.to_string().contains("its driver may be starting"));
    assert_eq!(scene.repo.state(&wt), before);
    scene
        .registry
        .set_status("r3", Status::Failed, &cancel)
        .unwrap();
    assert!(matches!(release_b(), Outcome::Released(_)));
}

/// The new run must be one natives recorded: a typo is refused before
/// anything is looked at or written.
#[test]
fn a_worktree_is_never_handed_to_a_run_nobody_recorded() {
    let scene = Scene::new();
    let before = scene.repo.state(&scene.wt);
    let record = scene.r1();
    for takeover in [
        Takeover::new("r-typo", vec!["r1".into()]),
        Takeover::hand_run("r-typo"),
    ] {
        let err = release(
            &scene.registry,
            &scene.git,
            &scene.repo.main,
            BRANCH,
            &takeover,
            &CancelToken::new(),
        )
        .unwrap_err();
        assert_eq!(err.code(), "ENOENT", "{err}");
        assert!(err.to_string().contains("r-typo"), "{err}");
    }
    assert_eq!(scene.repo.state(&scene.wt), before);
    assert_eq!(scene.r1(), record);
}

/// An orchestrator that died after a release can still undo it: by the
/// handover's id alone.
#[test]
fn a_handover_is_restored_by_its_id_after_the_answer_is_gone() {
    let scene = Scene::new();
    let before = scene.repo.state(&scene.wt);
    let answered = released(scene.release());
    let found = Released::find(&scene.registry, &answered.handover).unwrap();
    assert_eq!(found, answered);
    let cancel = CancelToken::new();
    assert_eq!(
        found.restore(&scene.registry, &scene.git, &cancel).unwrap(),
        Restore::Restored
    );
    let after = scene.repo.state(&scene.wt);
    assert_eq!(
        after.worktree, before.worktree,
        "every byte and mode is back"
    );
    assert_eq!(scene.repo.head(&scene.wt), answered.tip);
    assert!(!scene.r1().candidate("A").unwrap().folded);
    let again = Released::find(&scene.registry, &answered.handover).unwrap();
    assert_eq!(
        again.restore(&scene.registry, &scene.git, &cancel).unwrap(),
        Restore::Restored,
        "restoring twice is a no-op"
    );
    let later = released(scene.release());
    let stale = Released::find(&scene.registry, &answered.handover).unwrap();
    assert_eq!(
        stale.restore(&scene.registry, &scene.git, &cancel).unwrap(),
        Restore::Refused(vec![RestoreRefusal::NotInForce])
    );
    assert_ne!(later.handover, answered.handover);
    for (id, code) in [("no-such-handover", "ENOENT"), (" ", "EINVAL")] {
        let err = Released::find(&scene.registry, id).unwrap_err();
        assert_eq!(err.code(), code, "{id:?}: {err}");
    }
}

/// A release that fails where not even the registry can be listed again
/// still names the run, its status and the tip, from the run's own record.
#[test]
fn a_failed_release_names_the_real_run_and_tip() {
    let scene = Scene::new();
    scene.record_run("t9", "r9", Status::Failed);
    let r9 = scene
        .registry
        .root()
        .join("tasks")
        .join(slug(Path::new("t9")))
        .join("runs")
        .join(format!("{}.json", slug(Path::new("r9"))));
    let tip = scene.repo.tip(BRANCH);
    let cancel = CancelToken::new();
    let stop = cancel.clone();
    crash::install(Some(Box::new(move |point| {
        if point == "removing" {
            fs::write(&r9, "not a record").unwrap();
            stop.cancel();
        }
    })));
    let outcome = release(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        BRANCH,
        &scene.takeover(),
        &cancel,
    );
    crash::install(None);
    let Outcome::Refused(refused @ Refused::ReleaseFailed { .. }) = outcome.unwrap() else {
        panic!("not a failed release");
    };
    let text = refused.to_string();
    let named = format!(
        "by run r1 (parked, an earlier attempt at this task), not inspectable, HEAD {0} and branch tip {0}",
        &tip[..12]
    );
    assert!(text.contains(&named), "{text}");
    assert!(scene.listed());
}
