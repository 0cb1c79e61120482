//! `natives pool status|prune|run`, run as a script would, beside members
//! held by this test process through the library (another process, so a
//! live holder to the binary).

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

mod output;

use natives_ownership::{CancelToken, Leases, Owner, pool::PoolOptions};
use natives_system::paths;
use serde_json::Value;

/// A git worktree, a pool directory and a natives home in one folder.
struct Fixture {
    _root: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    pool: PathBuf,
    worktree: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let worktree = base.join("wt");
        fs::create_dir_all(worktree.join("sub")).unwrap();
        fs::write(worktree.join("sub/file.txt"), "x").unwrap();
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &["commit", "-q", "-m", "one"],
        ] {
            let status = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
                .args(["-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(&worktree)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .unwrap();
            assert!(status.success());
        }
        Fixture {
            home: base.join("home"),
            pool: base.join("pool"),
            root: base,
            worktree,
            _root: root,
        }
    }

    /// `natives pool ARGS` in `dir` with `--home` given: exit code, stdout,
    /// stderr. `tail` comes after the home (a command to run).
    fn natives(&self, dir: &Path, args: &[&str], tail: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_natives"))
            .arg("pool")
            .args(args)
            .arg("--home")
            .arg(&self.home)
            .args(tail)
            .current_dir(dir)
            .env_remove(paths::HOME_ENV)
            .output()
            .unwrap();
        output::outcome(out)
    }

    fn pool_arg(&self) -> &str {
        self.pool.to_str().unwrap()
    }

    fn leases(&self) -> Leases {
        Leases::open(&self.home).unwrap()
    }
}

#[test]
fn run_gives_the_command_a_member_and_its_exit_status() {
    let fx = Fixture::new();
    let (code, stdout, stderr) = fx.natives(
        &fx.worktree.join("sub"),
        &["run", fx.pool_arg(), "--size", "2"],
        &[
            "--",
            "sh",
            "-c",
            "echo $CARGO_TARGET_DIR $CARGO_BUILD_BUILD_DIR; exit 7",
        ],
    );
    assert_eq!(code, 7, "{stderr}");
    let member = fx.pool.join("member-0");
    let member = member.to_str().unwrap();
    assert_eq!(stdout, format!("{member} {member}\n"));
    assert!(stderr.contains("building in member-0"), "{stderr}");
    let inventory = fx.leases().pool_inventory(&fx.pool).unwrap();
    let identity = inventory.members[0].identity.as_ref().unwrap();
    assert_eq!(
        identity.worktree, fx.worktree,
        "refreshed for the worktree's top"
    );
    assert_eq!(
        inventory.members[0].lease.name(),
        "free",
        "released after the command"
    );
}

#[test]
fn run_in_a_full_pool_fails_naming_the_holder_or_waits() {
    let fx = Fixture::new();
    let options = PoolOptions {
        size: 1,
        ..PoolOptions::default()
    };
    let held = fx
        .leases()
        .acquire_from_pool(
            &fx.pool,
            &Owner::current("r", "n", "holder"),
            &options,
            None,
            &CancelToken::new(),
        )
        .unwrap();
    let args = ["run", fx.pool_arg(), "--size", "1", "--wait", "0"];
    let (code, _, stderr) = fx.natives(&fx.worktree, &args, &["--", "true"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("EBUSY") || stderr.contains("pool full"),
        "{stderr}"
    );
    assert!(stderr.contains("r/n/holder"), "{stderr}");
    let (code, stdout, _) = fx.natives(&fx.root, &["status", fx.pool_arg(), "--json"], &[]);
    assert_eq!(code, 0);
    let status: Value = serde_json::from_str(&stdout).unwrap();
    let member = &status["members"][0];
    assert_eq!(member["lease"], "active");
    assert_eq!(member["holder"]["seat"], "holder");
    assert_eq!(member["state"], "ready");
    assert_eq!(member["seed"]["strategy"], "cold");
    let (code, stdout, _) = fx.natives(&fx.root, &["prune", fx.pool_arg(), "--budget", "0"], &[]);
    assert_eq!(code, 1, "a held member stays over the budget: {stdout}");
    assert!(stdout.contains("kept member-0: busy"), "{stdout}");
    drop(held);
    let (code, stdout, _) = fx.natives(&fx.root, &["prune", fx.pool_arg(), "--budget", "0"], &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("removed member-0"), "{stdout}");
    let (code, stdout, _) = fx.natives(&fx.root, &["status", fx.pool_arg()], &[]);
    assert_eq!(code, 1);
    assert!(stdout.starts_with("no members in the pool"), "{stdout}");
}

#[test]
fn run_outside_a_worktree_is_refused_unless_told_not_to_refresh() {
    let fx = Fixture::new();
    let outside = fx.root.join("outside");
    fs::create_dir(&outside).unwrap();
    let args = ["run", fx.pool_arg()];
    let (code, _, stderr) = fx.natives(&outside, &args, &["--", "true"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not in a git worktree") && stderr.contains("--no-refresh"));
    let args = ["run", fx.pool_arg(), "--no-refresh", "--seed", "cold"];
    let (code, _, stderr) = fx.natives(&outside, &args, &["--", "true"]);
    assert_eq!(code, 0, "{stderr}");
    let args = ["run", fx.pool_arg(), "--seed", "hardlink"];
    let (code, _, stderr) = fx.natives(&fx.worktree, &args, &["--", "true"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("\"hardlink\""), "{stderr}");
}
