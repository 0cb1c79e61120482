//! Real repositories for the claims tests: a main checkout with a linked
//! worktree, a bare repository with one, a bogus `.git` file, a forged
//! back-pointer and symlinked routes, all built with the `git` CLI.

use std::{
    fs,
    os::unix::fs::symlink,
    path::{Path, PathBuf},
    process::Command,
};

/// Run `git` in `cwd`, failing the test on error.
pub fn git(cwd: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The fixture's directories, by role; all canonical.
pub struct Repos {
    _temp: tempfile::TempDir,
    /// The fixture's root.
    pub root: PathBuf,
}

impl Repos {
    /// `root/<rel>`.
    pub fn at(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

/// Build:
/// - `plain/sub`: no repository;
/// - `solo/src`: a repository without worktrees;
/// - `main/src/deep` with linked worktree `wt` (and `wt/src/deep`);
/// - `bare.git` (a bare clone of `main`) with linked worktree `bare-wt`;
/// - `bogus/sub` under a `.git` file pointing nowhere;
/// - `impostor`, whose `.git` file points at `wt`'s git dir (which points back
///   to `wt`, not to it);
/// - `module`, whose `.git` file points at a git dir without `commondir`;
/// - symlinks `link-deep` → `main/src/deep`, `link-wt` → `wt`, `link-solo` → `solo`.
pub fn repos() -> Repos {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    for dir in [
        "plain/sub",
        "solo/src",
        "main/src/deep",
        "bogus/sub",
        "impostor",
        "module",
        "modules/m",
    ] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    for repo in ["solo", "main"] {
        git(&root, &["init", "-q", repo]);
        fs::write(root.join(repo).join("README"), "x").unwrap();
        git(&root.join(repo), &["add", "README"]);
        git(&root.join(repo), &["commit", "-q", "-m", "first"]);
    }
    git(&root.join("main"), &["worktree", "add", "-q", "../wt"]);
    fs::create_dir_all(root.join("wt/src/deep")).unwrap();
    git(&root, &["clone", "-q", "--bare", "main", "bare.git"]);
    git(
        &root.join("bare.git"),
        &["worktree", "add", "-q", "../bare-wt"],
    );
    fs::write(
        root.join("bogus/.git"),
        "gitdir: /nonexistent/worktrees/x\n",
    )
    .unwrap();
    let wt_git_dir = root.join("main/.git/worktrees/wt");
    fs::write(
        root.join("impostor/.git"),
        format!("gitdir: {}\n", wt_git_dir.display()),
    )
    .unwrap();
    fs::write(root.join("module/.git"), "gitdir: ../modules/m\n").unwrap();
    symlink(root.join("main/src/deep"), root.join("link-deep")).unwrap();
    symlink(root.join("wt"), root.join("link-wt")).unwrap();
    symlink(root.join("solo"), root.join("link-solo")).unwrap();
    Repos { _temp: temp, root }
}
