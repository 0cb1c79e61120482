//! The eviction pass against real repositories: what it evicts, every
//! reason it keeps a copy (each one a fixture whose copy must come out
//! byte for byte unchanged), its budgets, its accounting, and the archived
//! seats it leaves, restored without the original repository.

use std::{
    fs,
    os::unix::fs::{MetadataExt, PermissionsExt},
    path::{Path, PathBuf},
    time::Duration,
};

use natives_core::{CancelToken, ErrorKind};
use natives_ownership::lease::{Leases, Owner};
use serde_json::json;

use super::*;
use crate::{
    git::Git,
    registry::{NewRun, Registry, Seat, SeatKind, Status},
    testing::{Repo, snapshot},
};

/// A repository whose branch `t1/A` moved from `main` (the base) to the
/// review head: a changed file, a deleted one, a binary one, an executable
/// one. Run `r1` of task `t1` (done) has seat review 1 detached there.
pub(super) struct Scene {
    pub repo: Repo,
    _home: tempfile::TempDir,
    pub home: PathBuf,
    pub registry: Registry,
    pub git: Git,
    pub base: String,
    pub review: String,
    pub seat: PathBuf,
}

impl Scene {
    pub(super) fn new() -> Scene {
        let repo = Repo::new();
        let home_dir = tempfile::tempdir().unwrap();
        let home = home_dir.path().canonicalize().unwrap();
        let base = repo.head(&repo.main);
        let review = review_head(&repo);
        let mut scene = Scene {
            registry: Registry::open(&home),
            git: Git::new().unwrap(),
            seat: PathBuf::new(),
            base,
            review,
            home,
            _home: home_dir,
            repo,
        };
        scene.record_run("r1", Status::Done);
        scene.seat = scene.add_seat("r1", 1);
        scene
    }

    pub(super) fn record_run(&self, run: &str, status: Status) {
        let cancel = CancelToken::new();
        self.registry.create_task("t1", &cancel).unwrap();
        let new = NewRun {
            id: run.into(),
            task: "t1".into(),
            worktree_root: self.repo.runs.join(run),
            status,
        };
        fs::create_dir_all(&new.worktree_root).unwrap();
        self.registry.create_run(&new, &cancel).unwrap();
    }

    /// Seat review `number` of `run`, detached at the review head, its
    /// heads recorded; its path.
    pub(super) fn add_seat(&self, run: &str, number: u32) -> PathBuf {
        let path = self.repo.runs.join(run).join(format!("review-{number}"));
        let shown = path.to_str().unwrap();
        self.repo.git(
            &self.repo.main,
            &["worktree", "add", "-q", "--detach", shown, &self.review],
        );
        let mut seat = Seat::new(SeatKind::Review, number, &path);
        seat.base_head = Some(self.base.clone());
        seat.review_head = Some(self.review.clone());
        self.registry
            .add_seat(run, &seat, &CancelToken::new())
            .unwrap();
        path
    }

    pub(super) fn options(&self) -> Options {
        Options {
            auto_fold: Some(true),
            reclaim_bytes: Some(1 << 40),
            quiet_period: Duration::ZERO,
            ..Options::default()
        }
    }

    pub(super) fn pass_with(&self, options: &Options) -> Report {
        pass(&self.home, &self.git, options, &CancelToken::new()).unwrap()
    }

    pub(super) fn pass(&self) -> Report {
        self.pass_with(&self.options())
    }

    pub(super) fn admin(&self, path: &Path) -> PathBuf {
        let name = path.file_name().unwrap();
        self.repo.main.join(".git/worktrees").join(name)
    }

    /// The copy's files and its administration's, byte for byte.
    pub(super) fn state(&self, path: &Path) -> (Files, Files) {
        let admin = self.admin(path);
        let admin = match admin.exists() {
            true => snapshot(&admin),
            false => Vec::new(),
        };
        let files = match path.exists() {
            true => snapshot(path),
            false => Vec::new(),
        };
        (files, admin)
    }

    pub(super) fn artifacts(&self, run: &str) -> PathBuf {
        self.registry.artifacts(run)
    }

    pub(super) fn record(&self, run: &str, seat: &str) -> EvictionRecord {
        record::read(&record::path_of(&self.artifacts(run), seat))
            .unwrap()
            .unwrap()
    }
}

/// Files and their bytes, as [`snapshot`] lists them.
pub(super) type Files = Vec<(PathBuf, Vec<u8>)>;

/// Branch `t1/A` with one commit over `main`; its tip.
fn review_head(repo: &Repo) -> String {
    let main = &repo.main;
    repo.git(main, &["checkout", "-q", "-b", "t1/A"]);
    repo.write(main, "README", "natives, reviewed\n");
    fs::remove_file(main.join("src/lib.rs")).unwrap();
    let blob: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    fs::write(main.join("blob.bin"), &blob).unwrap();
    fs::write(main.join("blob-copy.bin"), &blob).unwrap();
    repo.write(main, "run.sh", "#!/bin/sh\necho run\n");
    fs::set_permissions(main.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let head = repo.commit(main, "the change under review");
    repo.git(main, &["checkout", "-q", "main"]);
    head
}

/// Every blocker kind the report gives, copy by copy.
pub(super) fn all_kinds(report: &Report) -> Vec<BlockerKind> {
    report
        .retained
        .iter()
        .flat_map(|retained| retained.blockers.iter().map(|b| b.kind))
        .collect()
}

fn kinds(report: &Report, path: &Path) -> Vec<BlockerKind> {
    report
        .retained
        .iter()
        .filter(|retained| retained.path == path)
        .flat_map(|retained| retained.blockers.iter().map(|b| b.kind))
        .collect()
}

#[test]
fn a_done_runs_review_seat_is_archived_and_removed() {
    let scene = Scene::new();
    let report = scene.pass();
    assert_eq!(report.evicted.len(), 1, "{report:#?}");
    let evicted = &report.evicted[0];
    assert_eq!(
        (evicted.run.as_str(), evicted.seat.as_str()),
        ("r1", "review-1")
    );
    assert!(!scene.seat.exists());
    assert!(!scene.admin(&scene.seat).exists());
    let record = scene.record("r1", "review-1");
    assert_eq!(record.phase, Phase::Evicted);
    assert_eq!(record.head, scene.review);
    let archive =
        crate::evidence::Archive::open(&scene.git, record.archive().unwrap(), &CancelToken::new())
            .unwrap();
    assert_eq!(archive.manifest().head, scene.review);
    let retention = report.retention.unwrap();
    assert_eq!(retention.copies_evicted, 1);
    assert!(retention.source_logical_bytes >= 3000);
    assert!(retention.evidence_logical_bytes > 0);
    let written: serde_json::Value =
        serde_json::from_slice(&fs::read(scene.registry.root().join(RETENTION_FILE)).unwrap())
            .unwrap();
    assert_eq!(written["copiesEvicted"], json!(1));
    // The run record, the task and the branch remain.
    assert_eq!(scene.registry.show("r1").unwrap().status, Status::Done);
    assert_eq!(scene.repo.tip("t1/A"), scene.review);
    // A second pass has nothing to do.
    let again = scene.pass();
    assert!(
        again.evicted.is_empty() && again.retained.is_empty(),
        "{again:#?}"
    );
}

#[test]
fn a_dry_run_names_what_it_would_evict_and_touches_nothing() {
    let scene = Scene::new();
    let before = scene.state(&scene.seat);
    let options = Options {
        dry_run: true,
        ..scene.options()
    };
    let report = scene.pass_with(&options);
    assert_eq!(report.evicted.len(), 1);
    assert_eq!(report.evicted[0].archive, None);
    assert!(report.retention.is_none());
    assert_eq!(scene.state(&scene.seat), before);
    assert!(!scene.artifacts("r1").exists());
    assert!(!scene.registry.root().join(RETENTION_FILE).exists());
}

#[test]
fn the_pass_is_off_unless_configured_or_asked() {
    let scene = Scene::new();
    let off = scene.pass_with(&Options {
        quiet_period: Duration::ZERO,
        ..Options::default()
    });
    assert_eq!(off.disabled.as_deref(), Some("disk.auto_fold is off"));
    let no_budget = scene.pass_with(&Options {
        reclaim_bytes: Some(0),
        ..scene.options()
    });
    assert!(
        no_budget
            .disabled
            .unwrap()
            .contains("worktree_reclaim_bytes")
    );
    assert!(scene.seat.exists());
    let config = scene.home.join(CONFIG_FILE);
    fs::write(
        &config,
        r#"{"disk": {"auto_fold": true, "worktree_reclaim_bytes": 1000000000}, "other": 1}"#,
    )
    .unwrap();
    let configured = scene.pass_with(&Options {
        quiet_period: Duration::ZERO,
        ..Options::default()
    });
    assert_eq!(configured.settings.reclaim_bytes, 1_000_000_000);
    assert_eq!(configured.evicted.len(), 1);
    fs::write(&config, r#"{"disk": {"auto_fold": "yes"}}"#).unwrap();
    let err = pass(
        &scene.home,
        &scene.git,
        &Options::default(),
        &CancelToken::new(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("config.json"), "{err}");
}

/// How a fixture makes the seat (or its run) keep its copy.
type Setup = fn(&Scene) -> Option<Box<dyn std::any::Any>>;

fn set_seat(scene: &Scene, change: impl FnOnce(&mut Seat)) {
    scene
        .registry
        .update("r1", &CancelToken::new(), |record| {
            change(&mut record.seats[0]);
            Ok(())
        })
        .unwrap();
}

fn in_seat(scene: &Scene, args: &[&str]) {
    scene.repo.git(&scene.seat, args);
}

fn other_run(scene: &Scene, change: impl FnOnce(&mut crate::registry::RunRecord)) {
    scene.record_run("r2", Status::Running);
    scene
        .registry
        .update("r2", &CancelToken::new(), |record| {
            change(record);
            Ok(())
        })
        .unwrap();
}

const BLOCKERS: &[(BlockerKind, Setup)] = &[
    (BlockerKind::ResumableRun, |s| {
        s.registry
            .set_status("r1", Status::Parked, &CancelToken::new())
            .unwrap();
        None
    }),
    (BlockerKind::UnrecordedHeads, |s| {
        set_seat(s, |seat| seat.base_head = None);
        None
    }),
    (BlockerKind::HeadMoved, |s| {
        in_seat(s, &["checkout", "-q", "--detach", "main"]);
        None
    }),
    (BlockerKind::PublicAuthority, |s| {
        set_seat(s, |seat| seat.authority.public = true);
        None
    }),
    (BlockerKind::RecoveryAuthority, |s| {
        set_seat(s, |seat| seat.authority.selected_recovery = true);
        None
    }),
    (BlockerKind::ApprovalAuthority, |s| {
        set_seat(s, |seat| seat.authority.approved = true);
        None
    }),
    (BlockerKind::RetentionAuthority, |s| {
        set_seat(s, |seat| seat.authority.retain = true);
        None
    }),
    (BlockerKind::RecoverySelection, |s| {
        let seat = s.seat.clone();
        other_run(s, |run| run.recovery = Some(seat));
        None
    }),
    (BlockerKind::TaskPin, |s| {
        let seat = s.seat.clone();
        s.registry
            .update_task("t1", &CancelToken::new(), |task| {
                task.pins.push(seat);
                Ok(())
            })
            .unwrap();
        None
    }),
    (BlockerKind::TaskReplacement, |s| {
        let inside = s.seat.join("src");
        s.registry
            .update_task("t1", &CancelToken::new(), |task| {
                task.replacements.push(inside);
                Ok(())
            })
            .unwrap();
        None
    }),
    (BlockerKind::PathReference, |s| {
        let seat = s.seat.clone();
        other_run(s, |run| run.source_paths.push(seat));
        None
    }),
    (BlockerKind::UnknownRecord, |s| {
        let runs = s.registry.root().join("tasks/other/runs");
        fs::create_dir_all(&runs).unwrap();
        fs::write(
            runs.parent().unwrap().join("task.json"),
            r#"{"version": 2, "task": "other"}"#,
        )
        .unwrap();
        fs::write(
            runs.join("newer.json"),
            r#"{"version": 99, "id": "x", "task": "other", "status": "done", "worktreeRoot": "/"}"#,
        )
        .unwrap();
        None
    }),
    (BlockerKind::UnknownField, |s| {
        set_seat(s, |seat| {
            seat.authority.extra.insert("embargo".into(), json!(true));
        });
        None
    }),
    (BlockerKind::OwnershipBound, |s| {
        let runs = s.registry.root().join("tasks/crowded/runs");
        fs::create_dir_all(&runs).unwrap();
        fs::write(
            runs.parent().unwrap().join("task.json"),
            r#"{"version": 2, "task": "crowded"}"#,
        )
        .unwrap();
        for n in 0..=crate::registry::MAX_HISTORY {
            fs::write(runs.join(format!("{n}.json")), "{}").unwrap();
        }
        None
    }),
    (BlockerKind::LiveDriver, |s| {
        Some(Box::new(
            s.registry.drive_run("r1", &CancelToken::new()).unwrap(),
        ))
    }),
    (BlockerKind::LiveOwner, |s| {
        Some(Box::new(s.registry.try_lock_run("r1").unwrap().unwrap()))
    }),
    (BlockerKind::OutputLease, |s| {
        let leases = Leases::open(&s.home).unwrap();
        let cache = s.repo.runs.join("cache");
        fs::create_dir_all(&cache).unwrap();
        let owner =
            Owner::current("r9", "build", "seat").building(s.seat.clone(), s.review.clone());
        match leases.try_acquire(&cache, &owner).unwrap() {
            natives_ownership::lease::AcquireOutcome::Acquired(guard) => Some(Box::new(guard)),
            other => panic!("{other:?}"),
        }
    }),
    (BlockerKind::UnreadableOwnership, |s| {
        let dir = natives_ownership::layout::leases_dir(&s.home);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("{}.json", "ab".repeat(32))), "not json").unwrap();
        None
    }),
    (BlockerKind::OperationInProgress, |s| {
        in_seat(s, &["bisect", "start"]);
        None
    }),
    (BlockerKind::LocalRefs, |s| {
        in_seat(s, &["update-ref", "refs/worktree/keep", "HEAD"]);
        None
    }),
    (BlockerKind::Locked, |s| {
        s.repo.git(
            &s.repo.main,
            &["worktree", "lock", s.seat.to_str().unwrap()],
        );
        None
    }),
    (BlockerKind::UnknownAdministration, |s| {
        fs::write(s.admin(&s.seat).join("config.worktree"), "[core]\n").unwrap();
        None
    }),
    (BlockerKind::Unarchivable, |s| {
        s.repo
            .write(&s.seat, "later.txt", "a commit only the reflog remembers\n");
        let gone = s.repo.commit(&s.seat, "later");
        in_seat(s, &["checkout", "-q", "--detach", &s.review]);
        let object = s
            .repo
            .main
            .join(".git/objects")
            .join(&gone[..2])
            .join(&gone[2..]);
        fs::remove_file(object).unwrap();
        None
    }),
    (BlockerKind::Dirty, |s| {
        s.repo.write(&s.seat, "README", "edited\n");
        None
    }),
    (BlockerKind::Staged, |s| {
        s.repo.write(&s.seat, "README", "staged only\n");
        in_seat(s, &["add", "README"]);
        s.repo.write(&s.seat, "README", "natives, reviewed\n");
        None
    }),
    (BlockerKind::IndexHidden, |s| {
        in_seat(s, &["update-index", "--assume-unchanged", "README"]);
        None
    }),
    (BlockerKind::UnsupportedContent, |s| {
        let info = s.repo.main.join(".git/info");
        fs::create_dir_all(&info).unwrap();
        fs::write(info.join("attributes"), "*.bin filter=lfs\n").unwrap();
        None
    }),
    (BlockerKind::Untracked, |s| {
        s.repo.write(&s.seat, "notes/todo.md", "mine\n");
        None
    }),
    (BlockerKind::Ignored, |s| {
        s.repo
            .write(&s.seat, "debug.log", "ignored but someone's\n");
        fs::write(s.repo.main.join(".git/info/exclude"), "*.log\n").unwrap();
        None
    }),
    (BlockerKind::BuildOutput, |s| {
        s.repo.write(&s.seat, "target/debug/app", "built\n");
        None
    }),
    (BlockerKind::Symlink, |s| {
        std::os::unix::fs::symlink("README", s.seat.join("link")).unwrap();
        None
    }),
    (BlockerKind::SpecialFile, |s| {
        nix::unistd::mkfifo(
            &s.seat.join("fifo"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        None
    }),
    (BlockerKind::UnknownDirectory, |s| {
        fs::create_dir(s.seat.join("empty")).unwrap();
        None
    }),
    (BlockerKind::NotAWorktree, |s| {
        fs::remove_file(s.seat.join(".git")).unwrap();
        None
    }),
    (BlockerKind::RecentActivity, |_| None),
    (BlockerKind::EvidenceBound, |_| None),
    (BlockerKind::UnreadableEvictionRecord, |s| {
        let artifacts = s.artifacts("r1");
        fs::create_dir_all(&artifacts).unwrap();
        fs::write(artifacts.join("eviction-review-1.json"), "{ torn").unwrap();
        None
    }),
];

/// The options a fixture runs the pass with.
fn options_for(scene: &Scene, kind: BlockerKind) -> Options {
    let mut options = scene.options();
    match kind {
        BlockerKind::RecentActivity => options.quiet_period = Duration::from_secs(3600),
        BlockerKind::EvidenceBound => options.limits.evidence_bytes = 100,
        _ => {}
    }
    options
}

#[test]
fn every_blocker_keeps_the_copy_byte_for_byte_and_is_named() {
    for (kind, setup) in BLOCKERS {
        let scene = Scene::new();
        let _held = setup(&scene);
        let before = scene.state(&scene.seat);
        let report = scene.pass_with(&options_for(&scene, *kind));
        assert!(report.evicted.is_empty(), "{kind}: evicted: {report:#?}");
        let found = kinds(&report, &scene.seat);
        assert!(found.contains(kind), "{kind}: found {found:?}");
        assert_eq!(scene.state(&scene.seat), before, "{kind}: the copy changed");
        let retention = report.retention.unwrap();
        assert!(
            retention.blockers.contains_key(&kind.name()),
            "{kind}: {retention:?}"
        );
        assert_eq!(retention.copies_evicted, 0);
    }
}

#[test]
fn over_budget_evidence_leaves_no_record_and_gives_the_reason() {
    let scene = Scene::new();
    let report = scene.pass_with(&options_for(&scene, BlockerKind::EvidenceBound));
    let blocker = &report.retained[0].blockers[0];
    assert!(
        blocker.detail.contains("bytes of new evidence"),
        "{blocker}"
    );
    assert!(!record::path_of(&scene.artifacts("r1"), "review-1").exists());
    assert_eq!(scene.pass().evicted.len(), 1);
}

#[test]
fn a_successors_lineage_alone_borrows_nothing() {
    let scene = Scene::new();
    other_run(&scene, |run| run.lineage = Some("r1".into()));
    let report = scene.pass();
    assert_eq!(report.evicted.len(), 1, "{report:#?}");
}

#[test]
fn another_runs_copy_at_the_same_path_is_a_path_reference() {
    let scene = Scene::new();
    other_run(&scene, |_| {});
    let judge = Seat::new(SeatKind::Judge, 1, &scene.seat);
    scene
        .registry
        .add_seat("r2", &judge, &CancelToken::new())
        .unwrap();
    let before = scene.state(&scene.seat);
    let report = scene.pass();
    assert!(kinds(&report, &scene.seat).contains(&BlockerKind::PathReference));
    assert_eq!(scene.state(&scene.seat), before);
}

#[test]
fn an_empty_superseded_attempt_goes_and_a_changed_one_stays() {
    let scene = Scene::new();
    scene.record_run("r2", Status::Superseded);
    let empty = scene.repo.runs.join("r2/A");
    let changed = scene.repo.runs.join("r2/B");
    for (path, branch) in [(&empty, "t1/r2-A"), (&changed, "t1/r2-B")] {
        let shown = path.to_str().unwrap();
        scene.repo.git(
            &scene.repo.main,
            &["worktree", "add", "-q", "-b", branch, shown, &scene.base],
        );
        let mut candidate = crate::registry::Candidate::new(
            path.file_name().unwrap().to_str().unwrap(),
            branch,
            path,
        );
        candidate.base = Some(scene.base.clone());
        scene
            .registry
            .add_candidate("r2", &candidate, &CancelToken::new())
            .unwrap();
    }
    scene.repo.write(&changed, "work.txt", "work\n");
    scene.repo.commit(&changed, "work");
    let before = scene.state(&changed);
    let report = scene.pass();
    let evicted: Vec<&str> = report.evicted.iter().map(|e| e.seat.as_str()).collect();
    assert!(evicted.contains(&"candidate-A"), "{report:#?}");
    assert!(!empty.exists());
    assert!(kinds(&report, &changed).contains(&BlockerKind::ChangedCandidate));
    assert_eq!(scene.state(&changed), before);
    // The branches stay.
    assert_eq!(scene.repo.tip("t1/r2-A"), scene.base);
}

#[test]
fn a_failed_runs_candidate_is_out_of_scope() {
    let scene = Scene::new();
    scene.record_run("r2", Status::Failed);
    let path = scene.repo.runs.join("r2/A");
    scene.repo.git(
        &scene.repo.main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "t1/r2-A",
            path.to_str().unwrap(),
            &scene.base,
        ],
    );
    let mut candidate = crate::registry::Candidate::new("A", "t1/r2-A", &path);
    candidate.base = Some(scene.base.clone());
    scene
        .registry
        .add_candidate("r2", &candidate, &CancelToken::new())
        .unwrap();
    let report = scene.pass();
    assert!(kinds(&report, &path).contains(&BlockerKind::ChangedCandidate));
    assert!(path.exists());
}

#[test]
fn empty_roots_go_without_touching_any_record_even_when_evictions_are_blocked() {
    let scene = Scene::new();
    scene.record_run("r2", Status::Failed);
    scene.record_run("r3", Status::Running);
    scene.record_run("r4", Status::Done);
    fs::write(scene.repo.runs.join("r4/keep.txt"), "mine\n").unwrap();
    // A lease record nobody can read blocks every eviction, not the rest.
    let leases = natives_ownership::layout::leases_dir(&scene.home);
    fs::create_dir_all(&leases).unwrap();
    fs::write(leases.join(format!("{}.json", "cd".repeat(32))), "not json").unwrap();
    let report = scene.pass();
    assert!(report.evicted.is_empty());
    assert_eq!(report.blockers[0].kind, BlockerKind::UnreadableOwnership);
    let root = |run: &str| scene.repo.runs.join(run);
    assert!(report.empty_roots.contains(&root("r2")), "{report:#?}");
    assert!(!root("r2").exists());
    assert!(root("r3").exists(), "a resumable run's root stays");
    assert!(root("r4").exists(), "a root holding anything stays");
    assert_eq!(
        report.retention.unwrap().empty_roots_removed,
        report.empty_roots.len() as u64
    );
    assert_eq!(scene.registry.show("r2").unwrap().status, Status::Failed);
}

#[test]
fn budgets_visit_64_evict_5_and_the_next_pass_continues() {
    let scene = Scene::new();
    for n in 2..=100 {
        let run = format!("r{n:03}");
        scene.record_run(&run, Status::Done);
        scene.add_seat(&run, 1);
    }
    let first = scene.pass();
    assert_eq!(first.visited.len(), PASS_RUNS);
    assert_eq!(first.evicted.len(), PASS_COPIES);
    assert!(
        first
            .retained
            .iter()
            .all(|r| r.blockers.iter().any(|b| b.kind == BlockerKind::PassCopies))
    );
    let second = scene.pass();
    assert_eq!(first.visited[0], "r1");
    assert_eq!(
        second.visited[0], "r065",
        "the second pass starts where the first stopped"
    );
    let first_visited: std::collections::HashSet<_> = first.visited.iter().collect();
    let fresh = second
        .visited
        .iter()
        .filter(|run| !first_visited.contains(run))
        .count();
    assert_eq!(
        fresh,
        100 - PASS_RUNS,
        "the second pass reaches the runs the first did not"
    );
    assert_eq!(second.evicted.len(), PASS_COPIES);
    assert!(!first_visited.contains(&second.evicted[0].run));
}

#[test]
fn the_reclaim_budget_stops_after_the_copy_that_crosses_it() {
    let scene = Scene::new();
    scene.record_run("r2", Status::Done);
    scene.add_seat("r2", 1);
    let report = scene.pass_with(&Options {
        reclaim_bytes: Some(1),
        ..scene.options()
    });
    assert_eq!(report.evicted.len(), 1);
    let stopped = all_kinds(&report);
    assert_eq!(stopped, vec![BlockerKind::ReclaimBudget]);
}

#[test]
fn retention_counts_every_name_but_blocks_once_and_only_when_the_last_link_goes() {
    let scene = Scene::new();
    let seat = &scene.seat;
    fs::remove_file(seat.join("blob-copy.bin")).unwrap();
    fs::hard_link(seat.join("blob.bin"), seat.join("blob-copy.bin")).unwrap();
    let outside = scene.repo.runs.join("outside.sh");
    fs::hard_link(seat.join("run.sh"), &outside).unwrap();
    let meta = |name: &str| fs::metadata(seat.join(name)).unwrap();
    let names = [
        "README",
        ".gitignore",
        "blob.bin",
        "blob-copy.bin",
        "run.sh",
    ];
    let logical: u64 = names.iter().map(|name| meta(name).len()).sum();
    let allocated: u64 = ["README", ".gitignore", "blob.bin"]
        .iter()
        .map(|name| meta(name).blocks() * 512)
        .sum();
    assert!(meta("blob.bin").blocks() > 0 && meta("run.sh").blocks() > 0);
    let report = scene.pass();
    let retention = report.retention.clone().unwrap();
    assert_eq!(retention.copies_evicted, 1, "{report:#?}");
    assert_eq!(retention.source_logical_bytes, logical);
    assert_eq!(retention.source_allocated_bytes, allocated);
    assert_eq!(report.evicted[0].allocated_bytes, allocated);
    assert!(outside.exists());
}

#[test]
fn archived_seat_tips_list_and_restore_after_the_repository_is_gone() {
    let scene = Scene::new();
    let main = &scene.repo.main;
    // Review round 1 was an earlier head on a branch since deleted; the
    // seat looked at it, then moved to the recorded review head (round 2).
    scene
        .repo
        .git(main, &["checkout", "-q", "-b", "round-1", &scene.base]);
    scene.repo.write(main, "round-1.txt", "the first round\n");
    let round_1 = scene.repo.commit(main, "round 1");
    scene.repo.git(main, &["checkout", "-q", "main"]);
    in_seat(&scene, &["checkout", "-q", "--detach", &round_1]);
    in_seat(&scene, &["checkout", "-q", "--detach", &scene.review]);
    assert_eq!(scene.pass().evicted.len(), 1);
    let git = |args: &[&str]| scene.repo.git(main, args);
    git(&["branch", "-D", "round-1", "t1/A"]);
    git(&[
        "reflog",
        "expire",
        "--expire=now",
        "--expire-unreachable=now",
        "--all",
    ]);
    git(&["gc", "-q", "--prune=now"]);
    assert!(!scene.repo.git_succeeds(main, &["cat-file", "-e", &round_1]));
    fs::remove_dir_all(main).unwrap();

    let cancel = CancelToken::new();
    let tips = seats::show(&scene.registry, &scene.git, "r1", &cancel).unwrap();
    let tip = |head: &str| tips.iter().find(|tip| tip.head == head).unwrap();
    let current = tip(&scene.review);
    assert!(current.current && current.patch_bytes.unwrap() > 0);
    assert_eq!(
        (current.seat.as_str(), current.phase),
        ("review-1", Phase::Evicted)
    );
    let historical = tip(&round_1);
    assert!(!historical.current && historical.patch_bytes.is_none());
    assert!(
        historical
            .seen_as
            .iter()
            .any(|seen| seen.starts_with("HEAD@{"))
    );

    let parent = tempfile::tempdir().unwrap();
    let restored = seats::restore(
        &scene.registry,
        &scene.git,
        "r1",
        &scene.review,
        &parent.path().join("r2"),
        &cancel,
    )
    .unwrap();
    let dest = &restored.dir;
    assert_eq!(
        fs::read_to_string(dest.join("README")).unwrap(),
        "natives, reviewed\n"
    );
    assert!(
        !dest.join("src/lib.rs").exists(),
        "the deletion is restored"
    );
    assert_eq!(
        fs::read(dest.join("blob.bin")).unwrap()[..256],
        (0..=255u8).collect::<Vec<_>>()[..]
    );
    assert_ne!(
        fs::metadata(dest.join("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o111,
        0
    );
    let old = seats::restore(
        &scene.registry,
        &scene.git,
        "r1",
        &round_1,
        &parent.path().join("r1"),
        &cancel,
    )
    .unwrap();
    assert_eq!(
        fs::read_to_string(old.dir.join("round-1.txt")).unwrap(),
        "the first round\n"
    );
    assert!(!old.dir.join("blob.bin").exists());

    let unknown = "0".repeat(40);
    let err = seats::restore(
        &scene.registry,
        &scene.git,
        "r1",
        &unknown,
        &parent.path().join("x"),
        &cancel,
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let err = seats::restore(
        &scene.registry,
        &scene.git,
        "r1",
        &scene.review[..10],
        &parent.path().join("x"),
        &cancel,
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = seats::show(&scene.registry, &scene.git, "nope", &cancel).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    // Nothing was folded or retired.
    assert_eq!(scene.registry.show("r1").unwrap().status, Status::Done);
}

#[test]
fn a_tampered_archive_or_record_fails_the_listing() {
    let scene = Scene::new();
    scene.pass();
    let cancel = CancelToken::new();
    let record = scene.record("r1", "review-1");
    let path = record::path_of(&scene.artifacts("r1"), "review-1");
    let mut other = record.clone();
    other.run = "r9".into();
    record::write(&path, &other).unwrap();
    let err = seats::show(&scene.registry, &scene.git, "r1", &cancel).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    record::write(&path, &record).unwrap();
    let patch = record
        .archive()
        .unwrap()
        .join(crate::evidence::format::PATCH);
    fs::write(&patch, b"tampered").unwrap();
    let err = seats::show(&scene.registry, &scene.git, "r1", &cancel).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
}

#[test]
fn a_lease_taken_while_the_pass_archives_keeps_the_copy() {
    let scene = Scene::new();
    let before = scene.state(&scene.seat);
    let taken = std::rc::Rc::new(std::cell::RefCell::new(None));
    let keep = taken.clone();
    let (home, seat, cache) = (
        scene.home.clone(),
        scene.seat.clone(),
        scene.repo.runs.join("cache"),
    );
    fs::create_dir_all(&cache).unwrap();
    natives_system::crash::install(Some(Box::new(move |point| {
        if point == "archived" && keep.borrow().is_none() {
            let owner = Owner::current("r9", "build", "seat").building(seat.clone(), "x".into());
            let leases = Leases::open(&home).unwrap();
            match leases.try_acquire(&cache, &owner).unwrap() {
                natives_ownership::lease::AcquireOutcome::Acquired(guard) => {
                    *keep.borrow_mut() = Some(guard)
                }
                other => panic!("{other:?}"),
            }
        }
    })));
    let report = scene.pass();
    natives_system::crash::install(None);
    assert!(taken.borrow().is_some());
    assert!(
        kinds(&report, &scene.seat).contains(&BlockerKind::OutputLease),
        "{report:#?}"
    );
    assert_eq!(scene.state(&scene.seat), before);
    // Released, the next pass evicts it.
    drop(taken.borrow_mut().take());
    assert_eq!(scene.pass().evicted.len(), 1);
}

#[test]
fn a_copy_replaced_by_a_symlink_is_not_followed() {
    let scene = Scene::new();
    let moved = scene.repo.runs.join("elsewhere");
    fs::rename(&scene.seat, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &scene.seat).unwrap();
    let before = snapshot(&moved);
    let report = scene.pass();
    assert!(
        kinds(&report, &scene.seat).contains(&BlockerKind::NotAWorktree),
        "{report:#?}"
    );
    assert_eq!(snapshot(&moved), before);
    assert!(fs::symlink_metadata(&scene.seat).unwrap().is_symlink());
}

#[test]
fn authority_granted_by_name_keeps_the_copy_and_taken_back_lets_it_go() {
    let scene = Scene::new();
    let cancel = CancelToken::new();
    scene
        .registry
        .grant("r1", "review-1", &cancel, |a| a.approved = true)
        .unwrap();
    let report = scene.pass();
    assert_eq!(
        kinds(&report, &scene.seat),
        vec![BlockerKind::ApprovalAuthority]
    );
    let err = scene
        .registry
        .grant("r1", "review-2", &cancel, |a| a.retain = true)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    scene
        .registry
        .grant("r1", "review-1", &cancel, |a| a.approved = false)
        .unwrap();
    assert_eq!(scene.pass().evicted.len(), 1);
}

#[test]
fn every_operation_git_can_leave_stopped_keeps_the_copy_naming_its_marker() {
    for marker in crate::testing::OPERATIONS {
        let scene = Scene::new();
        crate::testing::stop_operation(&scene.repo, &scene.seat, marker);
        let before = scene.state(&scene.seat);
        let report = scene.pass();
        let named = report
            .retained
            .iter()
            .flat_map(|retained| &retained.blockers)
            .any(|b| {
                b.kind == BlockerKind::OperationInProgress
                    && b.detail.contains(&format!("/{marker}: "))
            });
        assert!(named, "{marker}: {report:#?}");
        assert!(report.evicted.is_empty(), "{marker}");
        assert_eq!(
            scene.state(&scene.seat),
            before,
            "{marker}: the copy changed"
        );
    }
}

#[test]
fn permission_bits_git_does_not_keep_come_back_with_an_evicted_seat() {
    let scene = Scene::new();
    // No single umask makes both 0600 and 0644.
    let modes = [
        ("", 0o700),
        ("README", 0o600),
        ("blob.bin", 0o644),
        ("run.sh", 0o750),
    ];
    for (rel, mode) in modes {
        fs::set_permissions(scene.seat.join(rel), fs::Permissions::from_mode(mode)).unwrap();
    }
    assert_eq!(scene.pass().evicted.len(), 1);
    let parent = tempfile::tempdir().unwrap();
    let cancel = CancelToken::new();
    let dest = parent.path().join("seat");
    seats::restore(
        &scene.registry,
        &scene.git,
        "r1",
        &scene.review,
        &dest,
        &cancel,
    )
    .unwrap();
    for (rel, mode) in modes {
        let restored = fs::metadata(dest.join(rel)).unwrap().permissions().mode() & 0o7777;
        assert_eq!(restored, mode, "{rel:?}");
    }
}

#[test]
fn the_output_lease_the_pass_holds_on_a_copy_once_leased_as_a_cache_borrows_nothing() {
    let scene = Scene::new();
    let owner = Owner::current("r9", "build", "seat");
    match Leases::open(&scene.home)
        .unwrap()
        .try_acquire(&scene.seat, &owner)
        .unwrap()
    {
        natives_ownership::lease::AcquireOutcome::Acquired(guard) => guard.release().unwrap(),
        other => panic!("{other:?}"),
    }
    let report = scene.pass();
    assert_eq!(report.evicted.len(), 1, "{report:#?}");
    assert!(!scene.seat.exists());
}
