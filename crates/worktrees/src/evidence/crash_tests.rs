//! A real capturing process killed (SIGKILL) after each step of capture
//! and publication: afterwards the archive's name holds nothing or a valid
//! archive (never a half-published directory), any staging left behind is
//! cleared by the next capture, which converges.

use std::{
    fs,
    os::unix::process::ExitStatusExt,
    path::{Path, PathBuf},
    process::Command,
};

use natives_core::CancelToken;
use nix::sys::signal::{Signal, raise};

use super::{
    publish::STAGING_PREFIX,
    tests::{Scene, evidence_entries},
    *,
};
use natives_system::crash;

/// What the child reads: the worktree, the base, the artifacts directory
/// and the point to die at, one a line.
const CHILD: &str = "NATIVES_TEST_EVIDENCE_CRASH";

/// Every point of a capture, in order, and whether the archive is
/// published once it is reached.
const POINTS: [(&str, bool); 10] = [
    ("collected", false),
    ("checked", false),
    ("locked", false),
    ("staging created", false),
    ("half written", false),
    ("written", false),
    ("synced", false),
    ("published", true),
    ("parent synced", true),
    ("validated", true),
];

/// The child: capture the scene's checkout, and die at the point named.
#[test]
#[ignore = "run by the crash tests in a child process"]
fn capturing_child() {
    let Ok(given) = std::env::var(CHILD) else {
        return;
    };
    let [wt, base, artifacts, point] =
        <[&str; 4]>::try_from(given.lines().collect::<Vec<_>>()).unwrap();
    let point = POINTS.iter().find(|(p, _)| *p == point).unwrap().0;
    crash::install(Some(Box::new(move |reached| {
        if reached == point {
            raise(Signal::SIGKILL).unwrap();
        }
    })));
    let git = Git::new().unwrap();
    let captured = capture(
        &git,
        Path::new(wt),
        base,
        Path::new(artifacts),
        &Bounds::default(),
        &CancelToken::new(),
    );
    panic!("{point}: not killed ({captured:?})");
}

/// Where a child's scratch files go: inside the scene, so what a killed
/// child leaves goes with it.
fn scratch(runs: &Path) -> PathBuf {
    let dir = runs.join("tmp");
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn kill_child(scene: &Scene, point: &str) {
    let given = [
        scene.wt.display().to_string(),
        scene.base.clone(),
        scene.artifacts.display().to_string(),
        point.to_owned(),
    ]
    .join("\n");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "evidence::crash_tests::capturing_child",
            "--nocapture",
        ])
        .env(CHILD, given)
        .env("TMPDIR", scratch(&scene.repo.runs))
        .output()
        .unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGKILL),
        "{point}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn staging(scene: &Scene) -> Vec<PathBuf> {
    evidence_entries(&scene.evidence())
        .into_iter()
        .filter(|name| name.starts_with(STAGING_PREFIX))
        .map(|name| scene.evidence().join(name))
        .collect()
}

#[test]
fn a_kill_after_each_step_leaves_no_archive_or_a_valid_one() {
    for (point, published) in POINTS {
        let scene = Scene::new();
        kill_child(&scene, point);
        let target = scene.archive_dir();
        assert_eq!(target.exists(), published, "{point}");
        if published {
            scene.open(&target).unwrap();
        }
        let names = evidence_entries(&scene.evidence());
        let staged = staging(&scene);
        assert!(
            names.len() == staged.len() + usize::from(published),
            "{point}: {names:?}"
        );
        match scene.capture().unwrap() {
            Captured::Published(archive) if !published => assert_eq!(archive.dir(), target),
            Captured::Existing(archive) if published => assert_eq!(archive.dir(), target),
            other => panic!("{point}: did not converge: {other:?}"),
        }
        assert_eq!(
            staging(&scene),
            Vec::<PathBuf>::new(),
            "{point}: staging left"
        );
        assert_eq!(evidence_entries(&scene.evidence()).len(), 1, "{point}");
        scene.open(&target).unwrap();
    }
}

#[test]
fn a_kill_while_files_are_written_leaves_staging_that_the_next_capture_clears() {
    let scene = Scene::new();
    kill_child(&scene, "half written");
    let staged = staging(&scene);
    assert_eq!(staged.len(), 1);
    assert!(staged[0].join(format::COMMITS).is_dir(), "half written");
    assert!(!scene.archive_dir().exists());
    assert!(matches!(scene.capture().unwrap(), Captured::Published(_)));
    assert!(!staged[0].exists());
}
