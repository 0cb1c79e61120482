//! `natives source-evidence`, run as an operator would against a real
//! repository: capture, print the patch, restore, the exit codes, and a
//! corrupt archive refused with the check it failed.

mod output;

use std::{
    fs,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::Value;

/// `natives ARGS`: exit code, stdout, stderr.
fn natives(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_natives"))
        .args(args)
        .output()
        .unwrap();
    output::outcome(out)
}

/// A repository with a base commit and a checkout changed over it.
struct Fixture {
    _root: tempfile::TempDir,
    base: PathBuf,
    repo: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let repo = base.join("repo");
        fs::create_dir(&repo).unwrap();
        let fixture = Fixture {
            _root: root,
            base,
            repo,
        };
        fixture.git(&["init", "-q", "-b", "main"]);
        fs::write(fixture.repo.join("a.txt"), "a\n").unwrap();
        fs::write(fixture.repo.join("run.sh"), "#!/bin/sh\n").unwrap();
        fixture.commit("base");
        fs::write(fixture.repo.join("a.txt"), "a, changed\n").unwrap();
        fs::set_permissions(
            fixture.repo.join("run.sh"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        fixture.commit("work");
        fixture
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

    fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    fn path(&self, name: &str) -> String {
        self.base.join(name).display().to_string()
    }

    /// `natives source-evidence capture --json` over `HEAD~1`.
    fn capture(&self) -> (i32, Value) {
        let (code, out, err) = natives(&[
            "source-evidence",
            "capture",
            "--worktree",
            self.repo.to_str().unwrap(),
            "--base",
            "HEAD~1",
            "--out",
            &self.path("artifacts"),
            "--json",
        ]);
        assert!(err.is_empty(), "{err}");
        (code, serde_json::from_str(&out).unwrap())
    }
}

#[test]
fn capture_print_and_restore() {
    let fixture = Fixture::new();
    let (code, captured) = fixture.capture();
    assert_eq!(code, 0, "{captured}");
    assert_eq!(captured["outcome"], "published");
    let archive = captured["archive"]["dir"].as_str().unwrap().to_owned();
    let head = fixture.git(&["rev-parse", "HEAD"]);
    assert_eq!(captured["archive"]["head"], head.as_str());
    assert!(archive.ends_with(&format!(
        "source-evidence/{head}-{}",
        fixture.git(&["rev-parse", "HEAD~1"])
    )));
    assert_eq!(
        fixture.capture(),
        (0, {
            let mut again = captured.clone();
            again["outcome"] = "existing".into();
            again
        })
    );

    let (code, patch, err) = natives(&["source-evidence", &archive]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        patch.trim_end(),
        fixture.git(&[
            "diff",
            "--binary",
            "--full-index",
            "--no-renames",
            "HEAD~1",
            "HEAD"
        ])
    );
    assert!(patch.contains("new mode 100755"));

    let dest = fixture.path("restored");
    let (code, out, err) = natives(&["source-evidence", &archive, "--restore", &dest, "--json"]);
    assert_eq!(code, 0, "{err}");
    let restored: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        restored["restored"]["sourceTree"],
        fixture.git(&["rev-parse", "HEAD^{tree}"]).as_str()
    );
    assert_eq!(
        fs::read(Path::new(&dest).join("a.txt")).unwrap(),
        b"a, changed\n"
    );
    let (code, _, err) = natives(&["source-evidence", &archive, "--restore", &dest]);
    assert_eq!(code, 2);
    assert!(err.starts_with("natives: EEXIST: "), "{err}");
}

#[test]
fn a_refused_capture_exits_1_and_a_corrupt_archive_2() {
    let fixture = Fixture::new();
    fs::write(fixture.repo.join("draft.md"), "unsaved\n").unwrap();
    let (code, refused) = fixture.capture();
    assert_eq!(code, 1);
    assert_eq!(refused["outcome"], "refused");
    assert!(
        refused["reason"].as_str().unwrap().contains("draft.md"),
        "{refused}"
    );
    fs::remove_file(fixture.repo.join("draft.md")).unwrap();

    let (_, captured) = fixture.capture();
    let archive = PathBuf::from(captured["archive"]["dir"].as_str().unwrap());
    let patch = archive.join("change.patch");
    fs::set_permissions(&patch, fs::Permissions::from_mode(0o600)).unwrap();
    fs::write(&patch, "tampered").unwrap();
    let (code, out, err) = natives(&["source-evidence", archive.to_str().unwrap()]);
    assert_eq!(
        (code, out.as_str()),
        (2, ""),
        "nothing printed before validation"
    );
    assert!(err.starts_with("natives: EBADMSG: "), "{err}");
    assert!(err.contains("check `checksums` failed"), "{err}");
}
