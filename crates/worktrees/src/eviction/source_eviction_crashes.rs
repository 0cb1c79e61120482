//! Never neither: a real housekeeping process killed (SIGKILL) after every
//! durable step, inside git's removal, while it finishes what an earlier
//! kill left, and at random instants. After each kill the copy is intact
//! or its evidence validates; at most two further passes converge (copy
//! gone, record evicted, evidence valid) and a third changes nothing.

use std::{
    cell::RefCell,
    fs,
    os::unix::{fs::PermissionsExt, process::ExitStatusExt},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    rc::Rc,
    thread,
    time::{Duration, Instant},
};

use natives_core::CancelToken;
use natives_ownership::lease::{AcquireOutcome, Leases, Owner};
use nix::{
    sys::signal::{Signal, kill, killpg},
    unistd::Pid,
};

use super::{
    source_eviction::{Files, Scene, all_kinds},
    *,
};
use crate::{
    evidence::Archive,
    git::Git,
    registry::{Registry, Status},
    testing::{children_of, die, snapshot},
};
use natives_system::crash;

/// What the child reads: the natives home, and how to die.
const CHILD_HOME: &str = "NATIVES_TEST_EVICTION_HOME";
const CHILD_MODE: &str = "NATIVES_TEST_EVICTION_MODE";

/// Every point a first eviction passes, in order: the evidence's own, then
/// the eviction's.
const POINTS: [&str; 16] = [
    "pending recorded",
    "collected",
    "checked",
    "locked",
    "staging created",
    "half written",
    "written",
    "synced",
    "published",
    "parent synced",
    "validated",
    "archived",
    "revalidated",
    "removing",
    "removed",
    "evicted recorded",
];

/// The points only a pass finishing a cut-short removal passes.
const FINISHING_POINTS: [&str; 3] = [
    "finish proven",
    "copy remains removed",
    "administration removed",
];

/// The child: one pass over the scene's home, dying as `mode` says:
/// `at:POINT`, `git-after:MS` (kill git that long into its removal, then
/// itself), `part-removed` / `all-removed` (at "removing", take part or
/// all of the copy away as a cut-short removal would, then die), or
/// `none` (the parent kills it).
#[test]
#[ignore = "run by the crash tests in a child process"]
fn evicting_child() {
    let (Ok(home), Ok(mode)) = (std::env::var(CHILD_HOME), std::env::var(CHILD_MODE)) else {
        return;
    };
    let seat = seat_of(Path::new(&home));
    let hook_mode = mode.clone();
    let hook: crash::Hook = Box::new(move |reached| {
        let mode = &hook_mode;
        let point = mode.strip_prefix("at:");
        if point == Some(reached) {
            die();
        }
        if reached != "removing" {
            return;
        }
        if let Some(ms) = mode.strip_prefix("git-after:") {
            kill_git_after(Duration::from_millis(ms.parse().unwrap()));
        } else if mode == "part-removed" {
            fs::remove_file(seat.join(".git")).unwrap();
            fs::remove_file(seat.join("blob.bin")).unwrap();
            die();
        } else if mode == "all-removed" {
            fs::remove_dir_all(&seat).unwrap();
            die();
        } else if mode == "admin-part-removed" {
            // Git removes the copy, then its administration file by file.
            let dot_git = fs::read_to_string(seat.join(".git")).unwrap();
            let admin = PathBuf::from(dot_git.trim().strip_prefix("gitdir: ").unwrap());
            fs::remove_dir_all(&seat).unwrap();
            fs::remove_file(admin.join("gitdir")).unwrap();
            fs::remove_file(admin.join("logs/HEAD")).unwrap();
            fs::remove_dir(admin.join("logs")).unwrap();
            die();
        }
    });
    crash::install(Some(hook));
    let git = Git::new().unwrap();
    let options = child_options();
    let at_point = mode.starts_with("at:");
    let outcome = pass(Path::new(&home), &git, &options, &CancelToken::new());
    if mode.starts_with("git-after:") {
        // git finished its removal before the killer saw it (a loaded
        // machine): die now, a kill just after the removal, which the
        // parent's checks hold to the same rule.
        eprintln!("{mode}: git finished before the kill");
        die();
    }
    if !at_point {
        // Killed from another thread, or by the parent: wait for it.
        thread::sleep(Duration::from_secs(30));
    }
    panic!("not killed: {outcome:?}");
}

fn child_options() -> Options {
    Options {
        auto_fold: Some(true),
        reclaim_bytes: Some(1 << 40),
        quiet_period: Duration::ZERO,
        ..Options::default()
    }
}

/// The seat's path, written beside the home by [`spawn`].
fn seat_of(home: &Path) -> PathBuf {
    PathBuf::from(fs::read_to_string(home.join("seat-path")).unwrap())
}

/// On a thread: once git runs, kill it `delay` later, then this process.
fn kill_git_after(delay: Duration) {
    thread::spawn(move || {
        let git = loop {
            if let Some(&pid) = children_of(std::process::id()).first() {
                break pid;
            }
            thread::yield_now();
        };
        thread::sleep(delay);
        let _ = kill(Pid::from_raw(git), Signal::SIGKILL);
        let _ = killpg(Pid::from_raw(git), Signal::SIGKILL);
        die();
    });
}

/// Start the child on `scene` in `mode`. Its scratch files go under the
/// scene's home, so what a killed child leaves goes with the scene.
fn spawn(scene: &Scene, mode: &str) -> std::process::Child {
    let scratch = scene.home.join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    fs::write(
        scene.home.join("seat-path"),
        scene.seat.as_os_str().as_encoded_bytes(),
    )
    .unwrap();
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "eviction::source_eviction_crashes::evicting_child",
            "--nocapture",
        ])
        .env(CHILD_HOME, &scene.home)
        .env(CHILD_MODE, mode)
        .env("TMPDIR", &scratch)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Run the child in `mode` and check it died by SIGKILL.
fn kill_child(scene: &Scene, mode: &str) {
    let out = spawn(scene, mode).wait_with_output().unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGKILL),
        "{mode}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Never neither: the copy is byte for byte what it was, or the evidence
/// of it validates (and then a record names it). A validated archive
/// rebuilds exactly its recorded source tree, so naming the review head
/// and its tree is enough; [`converges`] restores one to compare bytes.
fn intact_or_archived(scene: &Scene, before: &Files, what: &str) {
    if scene.seat.exists() && snapshot(&scene.seat) == *before {
        return;
    }
    let archive = scene
        .artifacts("r1")
        .join(crate::evidence::EVIDENCE_DIR)
        .join(crate::evidence::format::archive_name(
            &scene.review,
            &scene.base,
        ));
    let tree = scene.repo.git(
        &scene.repo.main,
        &["rev-parse", &format!("{}^{{tree}}", scene.review)],
    );
    let archived = Archive::open(&scene.git, &archive, &CancelToken::new()).is_ok_and(|archive| {
        archive.manifest().head == scene.review && archive.manifest().source_tree == tree
    });
    assert!(
        archived,
        "{what}: the copy is damaged and no evidence rebuilds it"
    );
    let record = record::path_of(&scene.artifacts("r1"), "review-1");
    assert!(
        record.exists(),
        "{what}: the copy is touched and no record names it"
    );
}

/// The files the archive rebuilds.
fn snapshot_of_archive(scene: &Scene, archive: &Archive) -> Files {
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("restored");
    archive
        .restore(&scene.git, &dest, &CancelToken::new())
        .unwrap();
    let mut files = snapshot(&dest);
    files.retain(|(path, _)| !path.starts_with(".git"));
    files
}

/// At most two passes finish the eviction; a third changes nothing.
fn converges(scene: &Scene, before: &Files, what: &str) {
    let mut passes = 0;
    let evicted = || {
        record::read(&record::path_of(&scene.artifacts("r1"), "review-1"))
            .unwrap()
            .is_some_and(|record| record.phase == Phase::Evicted)
    };
    while scene.seat.exists() || !evicted() {
        passes += 1;
        assert!(passes <= 2, "{what}: not converged after two passes");
        let report = scene.pass();
        intact_or_archived(scene, before, what);
        assert!(
            report.retained.iter().all(|r| r.seat != "review-1"),
            "{what}: {report:#?}"
        );
    }
    assert!(
        !scene.admin(&scene.seat).exists(),
        "{what}: administration left"
    );
    let record = scene.record("r1", "review-1");
    let archive =
        Archive::open(&scene.git, record.archive().unwrap(), &CancelToken::new()).unwrap();
    assert_eq!(snapshot_of_archive(scene, &archive), *before, "{what}");
    let listing = evidence_listing(scene);
    let third = scene.pass();
    assert!(
        third.evicted.is_empty() && third.retained.is_empty(),
        "{what}: {third:#?}"
    );
    assert_eq!(
        evidence_listing(scene),
        listing,
        "{what}: the third pass changed something"
    );
}

fn evidence_listing(scene: &Scene) -> Files {
    let artifacts = scene.artifacts("r1");
    let mut files = snapshot(&artifacts);
    files.retain(|(path, _)| !path.ends_with(".lock"));
    files
}

#[test]
fn a_kill_after_every_step_leaves_the_copy_or_its_evidence_and_recovery_converges() {
    for point in POINTS {
        let scene = Scene::new();
        let before = snapshot(&scene.seat);
        kill_child(&scene, &format!("at:{point}"));
        intact_or_archived(&scene, &before, point);
        converges(&scene, &before, point);
    }
}

#[test]
fn a_kill_inside_the_removal_and_while_finishing_it_converges() {
    let mut modes: Vec<String> = ["part-removed", "all-removed", "admin-part-removed"]
        .map(String::from)
        .to_vec();
    modes.extend([0, 1, 2, 4, 8, 16].map(|ms| format!("git-after:{ms}")));
    for mode in &modes {
        let scene = Scene::new();
        let before = snapshot(&scene.seat);
        kill_child(&scene, mode);
        intact_or_archived(&scene, &before, mode);
        for point in FINISHING_POINTS {
            if scene.seat.exists() || scene.admin(&scene.seat).exists() {
                let what = format!("{mode}, then at:{point}");
                let copy = scene.seat.exists();
                let child = spawn(&scene, &format!("at:{point}"))
                    .wait_with_output()
                    .unwrap();
                if copy && !scene.seat.exists() || child.status.signal() == Some(libc::SIGKILL) {
                    intact_or_archived(&scene, &before, &what);
                }
            }
        }
        converges(&scene, &before, mode);
    }
}

#[test]
fn a_cut_short_removal_is_finished_only_when_the_administration_is_as_recorded() {
    let scene = Scene::new();
    let before = snapshot(&scene.seat);
    kill_child(&scene, "part-removed");
    let admin = scene.admin(&scene.seat);
    fs::write(admin.join("HEAD"), format!("{}\n", scene.base)).unwrap();
    let report = scene.pass();
    let kinds = all_kinds(&report);
    assert_eq!(kinds, vec![BlockerKind::ChangedSinceRecord], "{report:#?}");
    assert!(admin.exists() && scene.seat.exists());
    intact_or_archived(&scene, &before, "changed administration");
}

/// Flip a byte in the middle of the pack of the archive `scene`'s pending
/// record names (archives are read-only: made writable first).
fn corrupt_pack(archive: &Path) {
    let pack = archive.join(crate::evidence::format::PACK);
    fs::set_permissions(&pack, fs::Permissions::from_mode(0o600)).unwrap();
    let mut bytes = fs::read(&pack).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    fs::write(&pack, bytes).unwrap();
}

/// The archive a first pass over `scene` publishes.
fn archive_dir(scene: &Scene) -> PathBuf {
    scene
        .artifacts("r1")
        .join(crate::evidence::EVIDENCE_DIR)
        .join(crate::evidence::format::archive_name(
            &scene.review,
            &scene.base,
        ))
}

/// The pass kept the copy for `kind` alone and changed nothing.
fn kept_pending_for(scene: &Scene, before: &(Files, Files), kind: BlockerKind, what: &str) {
    let report = scene.pass();
    assert_eq!(all_kinds(&report), vec![kind], "{what}: {report:#?}");
    nothing_removed(scene, before, what);
}

/// The copy and its administration are as they were, the record still
/// pending.
fn nothing_removed(scene: &Scene, before: &(Files, Files), what: &str) {
    let state = scene.state(&scene.seat);
    assert_eq!(state, *before, "{what}: something was removed");
    let phase = scene.record("r1", "review-1").phase;
    assert_eq!(phase, Phase::Pending, "{what}");
}

#[test]
fn a_corrupt_archive_keeps_a_pending_eviction_as_a_blocker() {
    let scene = Scene::new();
    kill_child(&scene, "all-removed");
    corrupt_pack(scene.record("r1", "review-1").archive().unwrap());
    let before = scene.state(&scene.seat);
    kept_pending_for(&scene, &before, BlockerKind::CorruptEvidence, "all removed");
    assert!(
        scene.admin(&scene.seat).exists(),
        "nothing more was removed"
    );
}

#[test]
fn a_pending_eviction_whose_archive_was_tampered_with_is_corrupt_evidence() {
    let scene = Scene::new();
    kill_child(&scene, "at:archived");
    corrupt_pack(&archive_dir(&scene));
    let before = scene.state(&scene.seat);
    kept_pending_for(&scene, &before, BlockerKind::CorruptEvidence, "copy whole");
}

#[test]
fn evidence_corrupted_right_before_the_removal_keeps_the_copy() {
    let scene = Scene::new();
    let before = scene.state(&scene.seat);
    let archive = archive_dir(&scene);
    let mut corrupted = false;
    crash::install(Some(Box::new(move |point| {
        if point == "archived" && !corrupted {
            corrupt_pack(&archive);
            corrupted = true;
        }
    })));
    let report = scene.pass();
    crash::install(None);
    assert_eq!(
        all_kinds(&report),
        vec![BlockerKind::CorruptEvidence],
        "{report:#?}"
    );
    nothing_removed(&scene, &before, "corrupted at archived");
}

/// Someone who comes to want the copy while a pass works on it; what they
/// hold, kept until the pass is over.
type Borrow = fn(&Path, &Path) -> Box<dyn std::any::Any>;

/// A build's lease on a cache elsewhere, building from the copy.
fn build_from(home: &Path, seat: &Path) -> Box<dyn std::any::Any> {
    let cache = seat.parent().unwrap().join("cache");
    fs::create_dir_all(&cache).unwrap();
    let owner = Owner::current("r9", "build", "seat").building(seat.to_owned(), "x".into());
    match Leases::open(home)
        .unwrap()
        .try_acquire(&cache, &owner)
        .unwrap()
    {
        AcquireOutcome::Acquired(guard) => Box::new(guard),
        other => panic!("{other:?}"),
    }
}

/// Process cleanup holding the copy's own output lease.
fn clean_up_in(home: &Path, seat: &Path) -> Box<dyn std::any::Any> {
    let owner = Owner::current("r9", "cleanup", "seat");
    match Leases::open(home)
        .unwrap()
        .try_acquire_output(seat, &owner)
        .unwrap()
    {
        AcquireOutcome::Acquired(guard) => Box::new(guard),
        other => panic!("{other:?}"),
    }
}

/// Another run naming the copy among its sources.
fn name_as_source(home: &Path, seat: &Path) -> Box<dyn std::any::Any> {
    let seat = seat.to_owned();
    Registry::open(home)
        .update("r2", &CancelToken::new(), |run| {
            run.source_paths.push(seat);
            Ok(())
        })
        .unwrap();
    Box::new(())
}

#[test]
fn a_borrower_that_comes_after_the_pass_began_stops_the_removal_and_is_named() {
    let borrowers: [(&str, BlockerKind, Borrow); 3] = [
        ("a build from it", BlockerKind::OutputLease, build_from),
        ("cleanup in it", BlockerKind::OutputLease, clean_up_in),
        ("a run's source", BlockerKind::PathReference, name_as_source),
    ];
    // Before `git worktree remove`, and before finishing a removal a kill
    // cut short.
    for (cut_short, point) in [(false, "archived"), (true, "finish proven")] {
        for (what, kind, borrow) in borrowers {
            let what = format!("{what} at {point}");
            let scene = Scene::new();
            scene.record_run("r2", Status::Running);
            if cut_short {
                kill_child(&scene, "part-removed");
            }
            let before = scene.state(&scene.seat);
            let (home, seat) = (scene.home.clone(), scene.seat.clone());
            let held: Rc<RefCell<Option<Box<dyn std::any::Any>>>> = Rc::default();
            let keep = held.clone();
            crash::install(Some(Box::new(move |reached| {
                if reached == point && keep.borrow().is_none() {
                    *keep.borrow_mut() = Some(borrow(&home, &seat));
                }
            })));
            let report = scene.pass();
            crash::install(None);
            assert!(held.borrow().is_some(), "{what}: the point was not reached");
            assert!(all_kinds(&report).contains(&kind), "{what}: {report:#?}");
            nothing_removed(&scene, &before, &what);
        }
    }
}

#[test]
fn a_copy_changed_after_its_record_is_never_adopted() {
    let scene = Scene::new();
    kill_child(&scene, "at:pending recorded");
    scene
        .repo
        .write(&scene.seat, "README", "edited after the record\n");
    let changed = snapshot(&scene.seat);
    let report = scene.pass();
    let kinds = all_kinds(&report);
    assert!(
        kinds.contains(&BlockerKind::ChangedSinceRecord),
        "{report:#?}"
    );
    assert_eq!(snapshot(&scene.seat), changed);
}

/// How many random-instant kills one test run makes.
const RANDOM_KILLS: usize = 200;

/// How many scenes are killed at once: most of a pass waits on git and on
/// the disk, so the kills overlap well even on two cores.
const KILLERS: usize = 4;

#[test]
fn kills_at_random_instants_leave_the_copy_or_its_evidence() {
    let probe = Scene::new();
    let started = Instant::now();
    let span = wait_for_pass(&probe, spawn(&probe, "none"), started);
    let seed = u64::from(std::process::id()) ^ started.elapsed().as_nanos() as u64;
    thread::scope(|scope| {
        for killer in 0..KILLERS {
            scope.spawn(move || {
                let mut state = seed ^ (killer as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                for kill_number in (killer..RANDOM_KILLS).step_by(KILLERS) {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    let fraction = (state >> 11) as f64 / (1u64 << 53) as f64;
                    random_kill(kill_number, span.mul_f64(fraction));
                }
            });
        }
    });
}

/// One scene, its pass killed `delay` after it started, then recovered.
fn random_kill(kill_number: usize, delay: Duration) {
    let scene = Scene::new();
    let before = snapshot(&scene.seat);
    let child = spawn(&scene, "none");
    thread::sleep(delay);
    kill_alone(child);
    pass_lock_released(&scene);
    let what = format!("kill {kill_number} after {delay:?}");
    intact_or_archived(&scene, &before, &what);
    if kill_number.is_multiple_of(10) {
        converges(&scene, &before, &what);
        return;
    }
    let report = scene.pass();
    assert!(
        report.retained.iter().all(|r| r.seat != "review-1"),
        "{what}: {report:#?}"
    );
    assert!(
        !scene.seat.exists(),
        "{what}: not evicted by the recovery pass"
    );
}

/// SIGKILL `child` alone, as a crash would: the git it started runs on to
/// its end (and is waited for, so the next pass does not meet it).
fn kill_alone(mut child: std::process::Child) {
    let pid = Pid::from_raw(child.id() as i32);
    let _ = kill(pid, Signal::SIGSTOP);
    let orphans = children_of(child.id());
    let _ = child.kill();
    let _ = child.wait();
    let started = Instant::now();
    while orphans
        .iter()
        .any(|&orphan| Path::new(&format!("/proc/{orphan}")).exists())
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "git never ended"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// Wait until nothing the killed pass started holds the pass lock any more:
/// a process it started (git, or one git started) may still run a moment
/// after the ones `kill_alone` waited for, and until it ends the next pass
/// is refused as another running (`EBUSY`), rightly.
fn pass_lock_released(scene: &Scene) {
    let lock = Registry::open(&scene.home).root().join(run_pass::PASS_LOCK);
    let started = Instant::now();
    while natives_system::lock::is_held(&lock).unwrap_or(false) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the killed pass's lock was never released"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// How long a whole pass takes in a child (it finishes, then sleeps until
/// killed): the span random kills are drawn over.
fn wait_for_pass(scene: &Scene, mut child: std::process::Child, started: Instant) -> Duration {
    loop {
        let done = record::read(&record::path_of(&scene.artifacts("r1"), "review-1"))
            .ok()
            .flatten()
            .is_some_and(|record| record.phase == Phase::Evicted);
        if done {
            let span = started.elapsed();
            let _ = child.kill();
            let _ = child.wait();
            return span;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the probe pass never finished"
        );
        thread::sleep(Duration::from_millis(2));
    }
}
