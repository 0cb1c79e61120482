//! What a search cannot enter or read: `natives grep`, `glob` and `find`
//! print every result they could reach, name each path they could not on
//! stderr with why, and exit 2, as `rg` does.
//!
//! A directory closed by its mode closes nothing to root, so as root the
//! binary runs as `nobody` (from a copy every user can reach, in a tree
//! every user can enter but the closed directory); as anyone else it runs
//! as this user against a directory of mode 000. A path longer than
//! `PATH_MAX` cannot be named by anyone.

mod output;

use std::{
    fs,
    os::unix::{fs::PermissionsExt, process::CommandExt},
    path::{Path, PathBuf},
    process::Command,
};

/// The user a root test runs the binary as.
const NOBODY: u32 = 65534;

/// The fixture and, as root, a copy of the binary `nobody` can run.
struct Scene {
    tree: tempfile::TempDir,
    binary: PathBuf,
    _stage: Option<tempfile::TempDir>,
    as_root: bool,
}

impl Scene {
    fn new() -> Scene {
        let as_root = nix::unistd::geteuid().is_root();
        let tree = natives_testkit::tree(&[
            ("open/needle.txt", "needle\n"),
            ("closed/needle.txt", "needle\n"),
        ]);
        natives_testkit::beyond_path_max(tree.path(), "needle.txt", "needle\n");
        open_to_all(tree.path());
        let closed = if as_root { 0o700 } else { 0o000 };
        fs::set_permissions(
            tree.path().join("closed"),
            fs::Permissions::from_mode(closed),
        )
        .unwrap();
        let (binary, stage) = match as_root {
            true => {
                let stage = tempfile::tempdir().unwrap();
                let copy = stage.path().join("natives");
                natives_testkit::install_executable(
                    Path::new(env!("CARGO_BIN_EXE_natives")),
                    &copy,
                );
                open_to_all(stage.path());
                (copy, Some(stage))
            }
            false => (PathBuf::from(env!("CARGO_BIN_EXE_natives")), None),
        };
        Scene {
            tree,
            binary,
            _stage: stage,
            as_root,
        }
    }

    /// Run `natives ARGS` in the tree as the unprivileged user.
    fn natives(&self, args: &[&str]) -> (i32, String, String) {
        let mut command = Command::new(&self.binary);
        command.args(args).current_dir(self.tree.path());
        if self.as_root {
            command.uid(NOBODY).gid(NOBODY);
        }
        output::outcome(command.output().unwrap())
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        let closed = self.tree.path().join("closed");
        let _ = fs::set_permissions(closed, fs::Permissions::from_mode(0o700));
    }
}

/// Let every user enter and read `path` and all below it (a chain past
/// `PATH_MAX` is walked by relative names, as no full path reaches it).
fn open_to_all(path: &Path) {
    let status = Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(".")
        .current_dir(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn every_command_names_what_it_could_not_read_and_exits_2() {
    let scene = Scene::new();
    let closed = "natives: closed: Permission denied (os error 13)\n";
    let table: &[(&[&str], &str)] = &[
        (&["grep", "needle"], "open/needle.txt:1:needle\n"),
        (&["grep", "-c", "needle"], "open/needle.txt:1\n"),
        (&["grep", "--files"], "open/needle.txt\n"),
        (&["glob", "needle.txt"], "open/needle.txt\n"),
        (&["find", "needle.txt", "-m", "1"], "open/needle.txt\n"),
        (&["grep", "nothing-matches"], ""),
    ];
    for &(args, printed) in table {
        let (code, out, err) = scene.natives(args);
        assert_eq!((code, out.as_str()), (2, printed), "{args:?}: {err}");
        // In path order: the chain's names start with digits.
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {err}");
        assert!(
            lines[0].starts_with("natives: 0")
                && lines[0].ends_with(": File name too long (os error 36)"),
            "{args:?}: {}",
            lines[0]
        );
        assert_eq!(lines[1], closed.trim_end(), "{args:?}");
    }
}

#[test]
fn stats_and_json_count_and_name_them() {
    let scene = Scene::new();
    let (code, out, _) = scene.natives(&["grep", "--stats", "needle"]);
    assert_eq!(code, 2);
    assert!(out.contains("\n2 paths unreadable\n"), "{out}");
    // `--json` is rg's: the messages hold no errors, which go to standard
    // error, named as rg names them, with exit status 2.
    let (code, out, err) = scene.natives(&["grep", "--json", "needle"]);
    assert_eq!(code, 2);
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["data"]["stats"]["searches_with_match"], 1);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].ends_with(": File name too long (os error 36)"),
        "{err}"
    );
    assert_eq!(lines[1], "natives: closed: Permission denied (os error 13)");
}
