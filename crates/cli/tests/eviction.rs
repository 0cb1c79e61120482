//! `natives housekeeping` and `natives fold RUN --show-seats |
//! --restore-seat`, run as an operator would against a real repository
//! and a registry this test records through the library: run `r1` of task
//! `t1` is done and left review seat 1 behind.

mod output;

use std::{fs, path::PathBuf, process::Command};

use natives_core::CancelToken;
use natives_worktrees::registry::{NewRun, Registry, Seat, SeatKind, Status};
use serde_json::Value;

struct Scene {
    _root: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    seat: PathBuf,
    head: String,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let (home, repo, seat) = (
            base.join("home"),
            base.join("repo"),
            base.join("runs/r1/review-1"),
        );
        fs::create_dir_all(&repo).unwrap();
        fs::create_dir_all(seat.parent().unwrap()).unwrap();
        let mut scene = Scene {
            _root: root,
            base,
            home,
            repo,
            seat,
            head: String::new(),
        };
        scene.git(&["init", "-q", "-b", "main"]);
        fs::write(scene.repo.join("README"), "natives\n").unwrap();
        scene.git(&["add", "-A"]);
        scene.git(&["commit", "-q", "-m", "base"]);
        let base_head = scene.git(&["rev-parse", "HEAD"]);
        fs::write(scene.repo.join("README"), "natives, reviewed\n").unwrap();
        scene.git(&["commit", "-q", "-am", "under review"]);
        scene.head = scene.git(&["rev-parse", "HEAD"]);
        scene.git(&[
            "worktree",
            "add",
            "-q",
            "--detach",
            scene.seat.to_str().unwrap(),
            &scene.head,
        ]);

        let registry = Registry::open(&scene.home);
        let cancel = CancelToken::new();
        registry.create_task("t1", &cancel).unwrap();
        let new = NewRun {
            id: "r1".into(),
            task: "t1".into(),
            worktree_root: scene.seat.parent().unwrap().to_owned(),
            status: Status::Done,
        };
        registry.create_run(&new, &cancel).unwrap();
        let mut seat = Seat::new(SeatKind::Review, 1, &scene.seat);
        seat.base_head = Some(base_head);
        seat.review_head = Some(scene.head.clone());
        registry.add_seat("r1", &seat, &cancel).unwrap();
        scene
    }

    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(&self.repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
    }

    /// `natives ARGS --home HOME`: exit code, stdout, stderr.
    fn natives(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_natives"))
            .args(args)
            .arg("--home")
            .arg(&self.home)
            .output()
            .unwrap();
        output::outcome(out)
    }
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}"))
}

#[test]
fn housekeeping_is_off_until_configured_then_evicts_and_fold_restores_the_seat() {
    let scene = Scene::new();
    let (code, out, err) = scene.natives(&["housekeeping"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("disk.auto_fold is off"), "{err}");
    fs::write(
        scene.home.join("config.json"),
        r#"{"disk": {"auto_fold": true, "worktree_reclaim_bytes": 1073741824}}"#,
    )
    .unwrap();

    let (code, out, err) = scene.natives(&["housekeeping", "--dry-run", "--json"]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    let kinds: Vec<&str> = report["retained"][0]["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"recent-activity"), "{report}");

    let (code, out, err) = scene.natives(&[
        "housekeeping",
        "--dry-run",
        "--json",
        "--quiet-seconds",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    assert_eq!(report["evicted"][0]["seat"], "review-1", "{report}");
    assert_eq!(report["evicted"][0]["archive"], Value::Null);
    assert!(scene.seat.exists(), "a dry run touches nothing");

    let (code, out, err) = scene.natives(&["housekeeping", "--quiet-seconds", "0"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("evicted review-1 of run r1"), "{out}");
    assert!(out.contains("1 copies evicted"), "{out}");
    assert!(!scene.seat.exists());

    let (code, out, err) = scene.natives(&["fold", "r1", "--show-seats", "--json"]);
    assert_eq!(code, 0, "{err}");
    let tips: Vec<Value> = out.lines().map(json).collect();
    let current = tips.iter().find(|tip| tip["current"] == true).unwrap();
    assert_eq!(current["head"], scene.head.as_str());
    assert_eq!(current["phase"], "evicted");
    assert!(current["patchBytes"].as_u64().unwrap() > 0);

    fs::remove_dir_all(&scene.repo).unwrap();
    let dest = scene.base.join("inspect");
    let shown = dest.to_str().unwrap();
    let (code, out, err) =
        scene.natives(&["fold", "r1", "--restore-seat", &scene.head, "--dest", shown]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!("restored {}", scene.head)),
        "{out}"
    );
    assert_eq!(
        fs::read_to_string(dest.join("README")).unwrap(),
        "natives, reviewed\n"
    );
    let (code, _, err) =
        scene.natives(&["fold", "r1", "--restore-seat", &scene.head, "--dest", shown]);
    assert_eq!(code, 2);
    assert!(err.contains("EEXIST"), "{err}");
}

#[test]
fn fold_needs_an_action_and_names_a_missing_run() {
    let scene = Scene::new();
    let (code, _, err) = scene.natives(&["fold", "r1"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = scene.natives(&["fold", "r1", "--restore-seat", &scene.head]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--dest"), "{err}");
    let (code, out, err) = scene.natives(&["fold", "r1", "--show-seats"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    let (code, _, err) = scene.natives(&["fold", "nope", "--show-seats"]);
    assert_eq!(code, 2);
    assert!(err.contains("ENOENT") && err.contains("nope"), "{err}");
}
