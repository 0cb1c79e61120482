//! Real repositories for the tests: a main worktree with a few commits, and
//! the git commands a fixture needs, run with an isolated configuration so
//! the machine's own never leaks in.

use std::{
    fs,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    process::Command,
};

use tempfile::TempDir;

/// A temporary repository (main worktree at `main`) and a place for runs'
/// worktree roots (`runs`), all canonical.
pub(crate) struct Repo {
    _dir: TempDir,
    /// The main worktree.
    pub main: PathBuf,
    /// Where the tests lay runs' worktree roots.
    pub runs: PathBuf,
    /// An empty home for git's user configuration.
    pub home: PathBuf,
}

impl Repo {
    /// A repository on `main` with `README`, `src/lib.rs` and a
    /// `.gitignore` that ignores `target/`.
    pub(crate) fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (main, runs, home) = (base.join("repo"), base.join("runs"), base.join("home"));
        for dir in [&main, &runs, &home] {
            fs::create_dir_all(dir).unwrap();
        }
        let repo = Repo {
            _dir: dir,
            main,
            runs,
            home,
        };
        repo.git(&repo.main, &["init", "-q", "-b", "main"]);
        repo.write(&repo.main, "README", "natives\n");
        repo.write(&repo.main, "src/lib.rs", "pub fn f() {}\n");
        repo.write(&repo.main, ".gitignore", "target/\n");
        repo.commit(&repo.main, "first");
        repo
    }

    /// Run git in `dir` as a fixture would; its trimmed stdout. Panics on
    /// failure, naming the command and its stderr.
    pub(crate) fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.command(dir, args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Whether git in `dir` with `args` succeeds.
    pub(crate) fn git_succeeds(&self, dir: &Path, args: &[&str]) -> bool {
        self.command(dir, args).output().unwrap().status.success()
    }

    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        for (name, _) in std::env::vars_os() {
            if name.as_encoded_bytes().starts_with(b"GIT_") {
                command.env_remove(name);
            }
        }
        command
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .args(args);
        command
    }

    /// Write `contents` at `rel` under `dir`, parents created.
    pub(crate) fn write(&self, dir: &Path, rel: &str, contents: &str) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    /// Commit everything in `dir`; the new commit.
    pub(crate) fn commit(&self, dir: &Path, message: &str) -> String {
        self.git(dir, &["add", "-A"]);
        self.git(dir, &["commit", "-q", "-m", message]);
        self.head(dir)
    }

    /// The commit checked out in `dir`.
    pub(crate) fn head(&self, dir: &Path) -> String {
        self.git(dir, &["rev-parse", "HEAD"])
    }

    /// The commit `refs/heads/BRANCH` points at.
    pub(crate) fn tip(&self, branch: &str) -> String {
        self.git(&self.main, &["rev-parse", &format!("refs/heads/{branch}")])
    }

    /// A new branch `name` at `main`, checked out in a new worktree at
    /// `path`, with one commit of its own; the path.
    pub(crate) fn worktree(&self, path: &Path, name: &str) -> PathBuf {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let shown = path.to_str().unwrap();
        self.git(
            &self.main,
            &["worktree", "add", "-q", "-b", name, shown, "main"],
        );
        self.write(path, &format!("{name}.txt"), &format!("work on {name}\n"));
        self.commit(path, &format!("work on {name}"));
        path.to_owned()
    }

    /// The paths of every worktree git lists.
    pub(crate) fn worktree_paths(&self) -> Vec<PathBuf> {
        let out = self.git(&self.main, &["worktree", "list", "--porcelain"]);
        out.lines()
            .filter_map(|line| line.strip_prefix("worktree "))
            .map(PathBuf::from)
            .collect()
    }
}

/// Every marker of an operation stopped half way, each as real git leaves
/// it (see [`stop_operation`]). Written out rather than taken from
/// [`crate::git::OPERATION_MARKERS`], so that a marker dropped from that
/// list fails the tests that go through this one.
pub(crate) const OPERATIONS: [&str; 8] = [
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_LOG",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
];

/// Stop an operation half way in the worktree `wt` with real git, so that
/// its git directory holds `marker` (one of [`OPERATIONS`]; a stopped
/// rebase also leaves `rebase-merge`, a bisect `BISECT_START`). The
/// worktree first commits an edit of `README` that conflicts with the
/// first commit of a branch `side` made beside it.
pub(crate) fn stop_operation(repo: &Repo, wt: &Path, marker: &str) {
    let head = repo.head(wt);
    let main = &repo.main;
    repo.git(main, &["checkout", "-q", "-b", "side", &head]);
    repo.write(main, "README", "theirs\n");
    let theirs = repo.commit(main, "theirs");
    repo.write(main, "side.txt", "more\n");
    let more = repo.commit(main, "more");
    repo.git(main, &["checkout", "-q", "main"]);
    repo.write(wt, "README", "mine\n");
    repo.commit(wt, "mine");
    let stopped = |args: &[&str]| assert!(!repo.git_succeeds(wt, args), "{marker}: {args:?}");
    match marker {
        "MERGE_HEAD" => stopped(&["merge", "-q", "--no-edit", "side"]),
        "CHERRY_PICK_HEAD" => stopped(&["cherry-pick", &theirs]),
        "REVERT_HEAD" => stopped(&["revert", "--no-edit", &theirs]),
        "REBASE_HEAD" => stopped(&["rebase", "-q", "side"]),
        "BISECT_LOG" => drop(repo.git(wt, &["bisect", "start"])),
        "rebase-merge" => stopped(&["rebase", "-q", "--exec", "false", "HEAD~1"]),
        "rebase-apply" => {
            let patches = repo.runs.parent().unwrap().join("patches");
            let shown = patches.to_str().unwrap();
            repo.git(main, &["format-patch", "-q", "-1", &theirs, "-o", shown]);
            let patch = fs::read_dir(&patches).unwrap().next().unwrap().unwrap();
            stopped(&["am", "-q", patch.path().to_str().unwrap()]);
        }
        "sequencer" => {
            // A sequence of picks whose first conflicted, resolved and
            // committed by hand: only the sequence is left.
            stopped(&["cherry-pick", &theirs, &more]);
            repo.write(wt, "README", "resolved\n");
            repo.git(wt, &["add", "README"]);
            repo.git(wt, &["commit", "-q", "-m", "resolved"]);
        }
        other => panic!("no way to stop at {other}"),
    }
    let git_dir = repo.git(wt, &["rev-parse", "--absolute-git-dir"]);
    assert!(
        Path::new(&git_dir).join(marker).exists(),
        "{marker} not left"
    );
}

/// Every file under `dir` (the top's `.git` left out) with its bytes (a
/// symlink's target, a marker for anything else that is not a regular
/// file), sorted: what a test compares before and after to prove nothing
/// was lost. [`tree_state`] has the modes and the directories too.
pub(crate) fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    tree_state(dir, &[".git"])
        .into_iter()
        .filter(|(_, mode, _)| mode & libc::S_IFMT != libc::S_IFDIR)
        .map(|(path, mode, bytes)| match mode & libc::S_IFMT {
            libc::S_IFREG | libc::S_IFLNK => (path, bytes),
            // A FIFO, socket or device: never read (it could block).
            _ => (path, b"(not a regular file)".to_vec()),
        })
        .collect()
}

/// One entry of a tree on disk: its path, its mode (file type bits
/// included), and its bytes (a file's content, a symlink's target, none
/// for a directory).
pub(crate) type Entry = (PathBuf, u32, Vec<u8>);

/// Every entry under `dir`, directories (empty ones too) and `.git` files
/// included, but none whose path relative to `dir` is in `skip`, sorted.
/// A missing `dir` has none.
pub(crate) fn tree_state(dir: &Path, skip: &[&str]) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let Ok(listing) = fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in listing {
            let name = rel.join(entry.unwrap().file_name());
            if skip.contains(&name.to_string_lossy().as_ref()) {
                continue;
            }
            let path = dir.join(&name);
            let meta = fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_symlink() {
                fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_file() {
                fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                pending.push(name.clone());
            }
            entries.push((name, meta.mode(), bytes));
        }
    }
    entries.sort();
    entries
}

/// What a handover must leave as it found unless it releases: every entry
/// of the worktree, and every file of the repository's git directory but
/// its objects (each ref, each reflog entry, the worktree's
/// administration, the configuration, the indexes), each with its mode and
/// bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct State {
    pub worktree: Vec<Entry>,
    pub git: Vec<Entry>,
}

impl State {
    /// The repository's git directory without the administration of the
    /// worktree named `name` (what stays after it is removed).
    pub(crate) fn git_without(&self, name: &str) -> Vec<Entry> {
        let admin = Path::new("worktrees").join(name);
        self.git
            .iter()
            .filter(|(path, ..)| {
                !path.starts_with(&admin) && path.as_path() != Path::new("worktrees")
            })
            .cloned()
            .collect()
    }
}

impl Repo {
    /// The [`State`] of the worktree `wt` of this repository.
    pub(crate) fn state(&self, wt: &Path) -> State {
        State {
            worktree: tree_state(wt, &[]),
            git: tree_state(&self.main.join(".git"), &["objects"]),
        }
    }

    /// Whether the repository still holds commit `id`.
    pub(crate) fn has_commit(&self, id: &str) -> bool {
        self.git_succeeds(&self.main, &["cat-file", "-e", &format!("{id}^{{commit}}")])
    }
}

/// Die at once, as a crash would (SIGKILL).
pub(crate) fn die() -> ! {
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL).unwrap();
    unreachable!("SIGKILL raised")
}

/// The pids of `parent`'s children (scanned in `/proc`).
pub(crate) fn children_of(parent: u32) -> Vec<i32> {
    let parent = parent.to_string();
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split(' ').nth(1));
        if ppid == Some(parent.as_str()) {
            found.push(pid);
        }
    }
    found
}
