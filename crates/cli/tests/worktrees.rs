//! `natives runs list|show` and `natives handover`, run as an operator
//! would, against a real repository and a registry this test records
//! through the library: an earlier attempt `r1` of task `t1` whose
//! candidate `A` holds branch `t1/A`, and its retry `r2`.

mod output;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use natives_core::CancelToken;
use natives_system::paths;
use natives_worktrees::registry::{Candidate, NewRun, Registry, Seat, SeatKind, Status};
use serde_json::Value;

const BRANCH: &str = "t1/A";

struct Scene {
    _root: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    worktree: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let (home, repo) = (base.join("home"), base.join("repo"));
        let worktree = base.join("runs/r1/A");
        fs::create_dir_all(&repo).unwrap();
        fs::create_dir_all(worktree.parent().unwrap()).unwrap();
        let scene = Scene {
            _root: root,
            base,
            home,
            repo,
            worktree,
        };
        scene.git(&scene.repo, &["init", "-q", "-b", "main"]);
        fs::write(scene.repo.join("README"), "natives\n").unwrap();
        scene.commit(&scene.repo);
        let shown = scene.worktree.to_str().unwrap();
        scene.git(
            &scene.repo,
            &["worktree", "add", "-q", "-b", BRANCH, shown, "main"],
        );
        fs::write(scene.worktree.join("work.txt"), "the earlier attempt\n").unwrap();
        scene.commit(&scene.worktree);

        let registry = scene.registry();
        let cancel = CancelToken::new();
        registry.create_task("t1", &cancel).unwrap();
        for (id, status) in [("r1", Status::Failed), ("r2", Status::Running)] {
            let new = NewRun {
                id: id.into(),
                task: "t1".into(),
                worktree_root: scene.base.join("runs").join(id),
                status,
            };
            registry.create_run(&new, &cancel).unwrap();
        }
        let candidate = Candidate::new("A", BRANCH, &scene.worktree);
        registry.add_candidate("r1", &candidate, &cancel).unwrap();
        scene
    }

    fn registry(&self) -> Registry {
        Registry::open(&self.home)
    }

    /// git in `dir` with a fixed identity and none of this machine's
    /// configuration; its trimmed stdout.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let mut command = Command::new("git");
        for (name, _) in std::env::vars_os() {
            if name.as_encoded_bytes().starts_with(b"GIT_") {
                command.env_remove(name);
            }
        }
        let out = command
            .current_dir(dir)
            .env("HOME", &self.base)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", "user.name=Test", "-c", "user.email=t@example.invalid"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    fn commit(&self, dir: &Path) {
        self.git(dir, &["add", "-A"]);
        self.git(dir, &["commit", "-q", "-m", "work"]);
    }

    fn tip(&self) -> String {
        self.git(&self.repo, &["rev-parse", &format!("refs/heads/{BRANCH}")])
    }

    fn listed(&self) -> bool {
        let list = self.git(&self.repo, &["worktree", "list", "--porcelain"]);
        list.lines()
            .any(|line| line == format!("worktree {}", self.worktree.display()))
    }

    /// `natives ARGS --home HOME` in the repository: exit code, stdout,
    /// stderr.
    fn natives(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_natives"))
            .args(args)
            .arg("--home")
            .arg(&self.home)
            .current_dir(&self.repo)
            .env_remove(paths::HOME_ENV)
            .output()
            .unwrap();
        output::outcome(out)
    }

    fn handover(&self, extra: &[&str]) -> (i32, String, String) {
        let mut args = vec!["handover", BRANCH, "--to", "r2", "--task", "t1"];
        args.extend(extra);
        self.natives(&args)
    }
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}"))
}

#[test]
fn runs_list_shows_every_run_and_exits_one_when_there_is_none() {
    let scene = Scene::new();
    let (code, out, err) = scene.natives(&["runs", "list"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(
        rows[0],
        ["RUN", "TASK", "STATUS", "DRIVER", "CREATED", "CANDIDATES"]
    );
    assert_eq!(rows[1][..4], ["r1", "t1", "failed", "dead"]);
    assert_eq!(rows[1][5], "A (t1/A)");
    assert_eq!(rows[2][..4], ["r2", "t1", "running", "dead"]);
    assert_eq!(rows[2][5], "-");

    let (code, out, _) = scene.natives(&["runs", "list", "--task", "t1", "--json"]);
    assert_eq!(code, 0);
    let runs: Vec<Value> = out.lines().map(json).collect();
    let ids: Vec<&str> = runs.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["r1", "r2"]);
    assert_eq!(
        runs[0]["candidates"][0]["path"],
        scene.worktree.to_str().unwrap()
    );

    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_natives"))
        .args(["runs", "list", "--home"])
        .arg(empty.path())
        .output()
        .unwrap();
    let (code, out, _) = output::outcome(out);
    assert_eq!(code, 1);
    assert!(out.starts_with("no runs recorded in "), "{out}");

    let (code, out, err) = scene.natives(&["runs", "list", "--task", "nope"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err, "natives: ENOENT: no task \"nope\" is recorded\n");
}

#[test]
fn runs_show_prints_a_run_or_its_json() {
    let scene = Scene::new();
    let registry = scene.registry();
    let cancel = CancelToken::new();
    let _driving = registry.drive_run("r1", &cancel).unwrap();
    let seat = Seat::new(SeatKind::Review, 1, &scene.base.join("runs/r1/review-1"));
    registry.add_seat("r1", &seat, &cancel).unwrap();

    let (code, out, err) = scene.natives(&["runs", "show", "r1"]);
    assert_eq!(code, 0, "{err}");
    for expected in [
        "run r1\n",
        "  task         t1\n",
        "  status       failed\n",
        "  driver       live\n",
        &format!("  worktrees in {}\n", scene.base.join("runs/r1").display()),
        &format!("  artifacts in {}\n", registry.artifacts("r1").display()),
        &format!("candidates\n  A  t1/A  {}\n", scene.worktree.display()),
        "seats\n  review 1  ",
        "history\n",
        "  created  failed\n",
        "  candidate  A\n",
        "  seat  review 1\n",
    ] {
        assert!(out.contains(expected), "{expected:?} missing from\n{out}");
    }

    let (code, out, _) = scene.natives(&["runs", "show", "r1", "--json"]);
    assert_eq!(code, 0);
    let run = json(out.trim_end());
    assert_eq!((&run["id"], &run["driver"]), (&"r1".into(), &"live".into()));
    assert_eq!(run["seats"][0]["kind"], "review");
    assert!(run.get("releasedTo").is_none(), "{run}");

    let (code, out, err) = scene.natives(&["runs", "show", "nope"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err, "natives: ENOENT: no run \"nope\" is recorded\n");
}

#[test]
fn a_handover_releases_an_earlier_attempts_clean_worktree() {
    let scene = Scene::new();
    let tip = scene.tip();
    let (code, out, err) = scene.handover(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with(&format!(
            "released the worktree of run r1 (candidate A) at {}: branch t1/A at {} is free for run r2\n  handover ",
            scene.worktree.display(),
            &tip[..12]
        )),
        "{out}"
    );
    assert!(!scene.listed() && !scene.worktree.exists());
    assert_eq!(scene.tip(), tip, "the branch stays where it was");
    let record = scene.registry().show("r1").unwrap();
    assert!(record.candidate("A").unwrap().folded);
    // The branch is free: the retry's review can check it out.
    let review = scene.base.join("runs/r2/review");
    scene.git(
        &scene.repo,
        &["worktree", "add", "-q", review.to_str().unwrap(), BRANCH],
    );

    let (code, out, _) = scene.natives(&["handover", "no-such-branch", "--to", "r2"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "no worktree holds branch no-such-branch: nothing to do\n"
        )
    );
}

#[test]
fn a_refused_handover_prints_every_reason_and_exits_three() {
    let scene = Scene::new();
    fs::write(scene.worktree.join("notes.txt"), "mine\n").unwrap();
    let registry = scene.registry();
    let driving = registry.drive_run("r1", &CancelToken::new()).unwrap();
    let record = registry.show("r1").unwrap();

    let (code, out, err) = scene.handover(&[]);
    assert_eq!((code, err.as_str()), (3, ""), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "branch t1/A is checked out at {} by run r1 (failed, an earlier attempt at this task), dirty",
            scene.worktree.display()
        )),
        "{out}"
    );
    assert!(
        lines[0].ends_with("refused: the run is being driven; uncommitted changes: notes.txt"),
        "{out}"
    );
    assert_eq!(
        lines[1..],
        [
            "  driver-live: the run is being driven",
            "  dirty: uncommitted changes: notes.txt"
        ]
    );
    assert_eq!(
        fs::read_to_string(scene.worktree.join("notes.txt")).unwrap(),
        "mine\n"
    );
    assert!(scene.listed());
    assert_eq!(registry.show("r1").unwrap(), record);

    drop(driving);
    let (code, out, _) = scene.handover(&["--json"]);
    assert_eq!(code, 3);
    let answer = json(out.trim_end());
    assert_eq!(answer["kind"], "refused");
    assert_eq!(answer["reasons"][0]["code"], "dirty");
    assert_eq!(answer["holder"]["owner"]["kind"], "earlier-attempt");
    assert_eq!(
        answer["holder"]["content"]["dirty"]["named"][0],
        "notes.txt"
    );
}

#[test]
fn a_dry_run_changes_nothing_and_exits_as_the_release_would() {
    let scene = Scene::new();
    let record = scene.registry().show("r1").unwrap();
    let (code, out, err) = scene.handover(&["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!(
            "would release: branch t1/A is checked out at {} by run r1",
            scene.worktree.display()
        )),
        "{out}"
    );
    let (code, out, _) = scene.handover(&["--dry-run", "--json"]);
    assert_eq!(code, 0);
    let answer = json(out.trim_end());
    assert_eq!(
        (&answer["kind"], &answer["dryRun"]),
        (&"would-release".into(), &true.into())
    );
    assert!(scene.listed());
    assert_eq!(scene.registry().show("r1").unwrap(), record);

    fs::write(scene.worktree.join("notes.txt"), "mine\n").unwrap();
    let (code, out, _) = scene.handover(&["--dry-run"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.ends_with("\n  dirty: uncommitted changes: notes.txt\n"),
        "{out}"
    );
    assert!(scene.listed());
}

#[test]
fn a_handover_by_hand_or_with_bad_input() {
    let scene = Scene::new();
    // No task: a review started by hand takes over only as from a run
    // natives recorded. Its own run is recorded (under a task of its own).
    let registry = scene.registry();
    let cancel = CancelToken::new();
    registry.create_task("reviews", &cancel).unwrap();
    let review = NewRun {
        id: "review-9".into(),
        task: "reviews".into(),
        worktree_root: scene.base.join("runs/review-9"),
        status: Status::Running,
    };
    registry.create_run(&review, &cancel).unwrap();
    let (code, out, _) = scene.natives(&[
        "handover",
        BRANCH,
        "--to",
        "review-9",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code, 0, "{out}");
    let answer = json(out.trim_end());
    assert_eq!(
        answer["holder"]["owner"],
        serde_json::json!({"kind": "own-run", "run": "r1"})
    );

    let repo = scene.repo.to_str().unwrap();
    let table: &[(&[&str], &str)] = &[
        (
            &["handover", "-f", "--to", "r2"],
            "natives: handover: unknown option -f",
        ),
        (
            &["handover", "refs/heads/t1/A", "--to", "r2"],
            "natives: EINVAL: \"refs/heads/t1/A\" is not a branch name",
        ),
        (
            &["handover", BRANCH, "--to", ""],
            "natives: EINVAL: a run id must be 1 to 1024 bytes",
        ),
        (
            &["handover", BRANCH, "--to", "r2", "--task", "nope"],
            "natives: ENOENT: no task \"nope\" is recorded",
        ),
        (
            &["handover", BRANCH, "--to", "r2", "--repo", "/no/such/repo"],
            "/no/such/repo",
        ),
        (&["handover", BRANCH, "--repo", repo], "missing --to RUN"),
        (
            &["handover", BRANCH, "--to", "r-typo", "--task", "t1"],
            "natives: ENOENT: no run \"r-typo\" is recorded",
        ),
        (
            &["handover", BRANCH, "--to", "review-9", "--task", "t1"],
            "natives: EINVAL: run review-9 is a run of task reviews, not of task t1",
        ),
        (
            &["handover", BRANCH, "--to", "r2", "--regenerable", "#x"],
            "natives: EINVAL: regenerable: \"#x\" is not a gitignore pattern",
        ),
        (&["handover", "--restore", "h1", "--to", "r2"], "--to"),
        (
            &["handover", "--restore", "no-such-handover"],
            "natives: ENOENT: no run records a handover \"no-such-handover\"",
        ),
    ];
    for &(args, expected) in table {
        let (code, out, err) = scene.natives(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(scene.listed());
}

#[test]
fn what_is_declared_regenerable_goes_and_a_handover_is_restored_by_its_id() {
    let scene = Scene::new();
    let modules = scene.worktree.join("node_modules/m");
    fs::create_dir_all(&modules).unwrap();
    fs::write(modules.join("index.js"), "module\n").unwrap();
    let (code, out, _) = scene.handover(&["--dry-run"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("dirty: uncommitted changes: node_modules/m/index.js"),
        "{out}"
    );

    let (code, out, err) = scene.handover(&["--regenerable", "node_modules/", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let answer = json(out.trim_end());
    let handover = answer["released"]["handover"].as_str().unwrap().to_owned();
    assert!(!scene.worktree.exists());
    let (_, out, _) = scene.natives(&["runs", "show", "r1"]);
    assert!(out.contains("regenerable node_modules/"), "{out}");
    assert!(out.contains("let go with it: node_modules/"), "{out}");

    // Whoever asked for the release is gone; its id is enough.
    let (code, out, err) = scene.natives(&["handover", "--restore", &handover]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with(&format!(
            "restored the worktree of run r1 at {}",
            scene.worktree.display()
        )),
        "{out}"
    );
    assert!(scene.listed());
    assert_eq!(
        fs::read_to_string(scene.worktree.join("work.txt")).unwrap(),
        "the earlier attempt\n"
    );
    let (code, out, _) = scene.natives(&["handover", "--restore", &handover, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(json(out.trim_end())["kind"], "restored");

    // A handover released since replaces it: restoring the old one is refused.
    let (code, ..) = scene.handover(&[]);
    assert_eq!(code, 0);
    let (code, out, _) = scene.natives(&["handover", "--restore", &handover]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("  not-in-force: "), "{out}");
}
