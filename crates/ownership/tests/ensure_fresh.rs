//! `ensure_fresh` against real cargo: two git worktrees of one small crate,
//! building into one shared target directory.
//!
//! The worktrees differ only in what `probe::built_from()` returns, and the
//! crate's test prints it, so each `cargo test` tells which worktree's source
//! its binary was compiled from.
//!
//! Reproducing the stale artifact reliably: Cargo names a workspace
//! package's output by a hash that ignores where the source lives, and treats
//! that output as fresh when no source file is newer than it. So worktree B's
//! source files are dated to 2001, older than anything built from worktree A;
//! `cargo test` in B then finds A's output fresh and runs it, whatever the
//! order or timestamp granularity of the checkouts.
//!
//! Offline, no dependencies, `CARGO_HOME` as inherited: a few seconds.

use std::{
    fs::{self, File},
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, SystemTime},
};

use natives_ownership::{
    CancelToken,
    fresh::{Cargo, Freshness, Identity, Target, ensure_fresh},
};

const MANIFEST: &str = r#"[package]
name = "probe"
version = "0.1.0"
edition = "2021"

[workspace]
"#;

const PROBE_TEST: &str = r#"#[test]
fn reports_its_source() {
    println!("built_from={}", probe::built_from());
}
"#;

/// Before anything a build could produce.
const OLD_SOURCE: Duration = Duration::from_secs(1_000_000_000);

fn lib_source(worktree: &str) -> String {
    format!("pub fn built_from() -> &'static str {{\n    \"{worktree}\"\n}}\n")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=probe",
            "-c",
            "user.email=probe@example.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Worktree A on `main` and worktree B on branch `b`, whose `built_from`
/// differs and whose files predate any build.
fn two_worktrees(root: &Path) -> (Identity, Identity) {
    let a = root.join("a");
    write(&a.join("Cargo.toml"), MANIFEST);
    write(&a.join("src/lib.rs"), &lib_source("worktree-a"));
    write(&a.join("tests/probe.rs"), PROBE_TEST);
    write(&a.join(".gitignore"), "Cargo.lock\n");
    git(&a, &["init", "-q"]);
    git(&a, &["add", "."]);
    git(&a, &["commit", "-q", "-m", "probe"]);
    let b = root.join("b");
    git(
        &a,
        &["worktree", "add", "-q", "-b", "b", b.to_str().unwrap()],
    );
    write(&b.join("src/lib.rs"), &lib_source("worktree-b"));
    git(&b, &["commit", "-q", "-am", "probe from b"]);
    for file in ["Cargo.toml", "src/lib.rs", "tests/probe.rs"] {
        let old = SystemTime::UNIX_EPOCH + OLD_SOURCE;
        File::options()
            .write(true)
            .open(b.join(file))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let identity = |worktree: PathBuf| Identity {
        head: git(&worktree, &["rev-parse", "HEAD"]),
        worktree,
    };
    (identity(a), identity(b))
}

/// `cargo test` in `worktree` against the shared `target_dir`: the source
/// its test binary says it was built from.
fn cargo_test(worktree: &Path, target_dir: &Path) -> String {
    let output = Command::new(&Cargo::default().program)
        .args(["test", "--offline", "-q", "--", "--nocapture"])
        .current_dir(worktree)
        .env("CARGO_TARGET_DIR", target_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("built_from="));
    line.unwrap_or_else(|| panic!("no report in {stdout}"))
        .to_owned()
}

/// The real cargo behind a script that counts its invocations and keeps it
/// offline.
fn counting_cargo(dir: &Path) -> (Cargo, PathBuf) {
    let log = dir.join("cargo-calls");
    let program = dir.join("counting-cargo");
    let real = Cargo::default().program;
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nCARGO_NET_OFFLINE=true exec '{}' \"$@\"\n",
        log.display(),
        real.display()
    );
    fs::write(&program, script).unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    (Cargo { program }, log)
}

fn calls(log: &Path) -> usize {
    fs::read_to_string(log).map_or(0, |text| text.lines().count())
}

#[test]
fn switching_worktrees_builds_from_the_current_source() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (a, b) = two_worktrees(&root);
    let (home, shared) = (root.join("home"), root.join("shared-target"));
    let (cargo, log) = counting_cargo(&root);

    assert_eq!(cargo_test(&a.worktree, &shared), "worktree-a");
    assert_eq!(
        cargo_test(&b.worktree, &shared),
        "worktree-a",
        "the stale-artifact bug reproduces: B runs a binary compiled from A"
    );

    let outcome = cargo
        .ensure_fresh(&home, &shared, &b, &Target::Worktree, &CancelToken::new())
        .unwrap();
    assert_eq!(
        outcome,
        Freshness::Refreshed {
            cleaned: vec!["probe".into()]
        }
    );
    assert_eq!(calls(&log), 2, "one metadata, one clean");
    assert_eq!(cargo_test(&b.worktree, &shared), "worktree-b");

    let missing = Cargo {
        program: root.join("no-cargo-here"),
    };
    let again = missing
        .ensure_fresh(&home, &shared, &b, &Target::Worktree, &CancelToken::new())
        .unwrap();
    assert_eq!(
        again,
        Freshness::Unchanged,
        "no subprocess when the identity matches"
    );
    assert_eq!(
        cargo
            .ensure_fresh(&home, &shared, &b, &Target::Worktree, &CancelToken::new())
            .unwrap(),
        again
    );
    assert_eq!(calls(&log), 2);

    let manifest = Target::for_commands(&["cargo test --manifest-path=Cargo.toml"]);
    let back = cargo
        .ensure_fresh(&home, &shared, &a, &manifest, &CancelToken::new())
        .unwrap();
    assert_eq!(
        back,
        Freshness::Refreshed {
            cleaned: vec!["probe".into()]
        }
    );
    assert_eq!(cargo_test(&a.worktree, &shared), "worktree-a");
    assert_eq!(
        ensure_fresh(&home, &shared, &a, &Target::Worktree, &CancelToken::new()).unwrap(),
        again
    );
    assert_eq!(calls(&log), 4);
}
