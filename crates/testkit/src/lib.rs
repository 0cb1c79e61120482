//! What the natives crates' tests share, so each test says what its tree
//! holds rather than how to build it, and a test of something that must not
//! hang fails instead of hanging ([`within`]).
//!
//! ```
//! let dir = natives_testkit::tree(&[("src/a.rs", "fn a() {}\n"), ("empty/", "")]);
//! assert!(dir.path().join("empty").is_dir());
//! let named = natives_testkit::tree_of_paths(&["x/y.txt"]);
//! assert_eq!(std::fs::read_to_string(named.path().join("x/y.txt")).unwrap(), "x/y.txt");
//! ```

pub mod mount;
pub mod rg;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    sync::mpsc::{self, RecvTimeoutError},
    thread,
    time::Duration,
};

use tempfile::TempDir;

/// A fresh temporary directory holding `files`: each relative path with its
/// contents (parents created); a path ending in `/` is an empty directory.
pub fn tree<C: AsRef<[u8]>>(files: &[(&str, C)]) -> TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (rel, contents) in files {
        write(dir.path(), rel, contents);
    }
    dir
}

/// [`tree`] where every file holds its own relative path (so a search for a
/// name finds it in the content too).
pub fn tree_of_paths<P: AsRef<str>>(paths: &[P]) -> TempDir {
    let files: Vec<(&str, &str)> = paths.iter().map(|p| (p.as_ref(), p.as_ref())).collect();
    tree(&files)
}

/// Write `contents` at `rel` under `root`, creating its parents; a `rel`
/// ending in `/` creates that directory instead.
pub fn write(root: &Path, rel: &str, contents: impl AsRef<[u8]>) {
    let path = root.join(rel);
    if rel.ends_with('/') {
        fs::create_dir_all(&path).expect("a fixture directory");
        return;
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("a fixture file's parent");
    }
    fs::write(&path, contents).expect("a fixture file");
}

/// Run `script` with `sh -ec` in `root`: another process changes the tree
/// (what file events and identity checks must notice, as an editor's or a
/// build's changes).
pub fn sh(root: &Path, script: &str) {
    let status = Command::new("sh")
        .arg("-ec")
        .arg(script)
        .current_dir(root)
        .status()
        .expect("sh runs");
    assert!(status.success(), "{script}");
}

/// What `work` returns, run on a thread of its own and waited for at most
/// `limit`: a test of something that must not hang fails (naming `what`)
/// rather than hanging the suite when it regresses. The stuck thread is
/// left behind; the test process ends it.
pub fn within<T: Send + 'static>(
    what: &str,
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(work());
    });
    match finished.recv_timeout(limit) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {limit:?} (it hangs)")
        }
        Err(RecvTimeoutError::Disconnected) => {
            panic!("{what}: panicked")
        }
    }
}

/// The longest path the kernel resolves in one call (Linux's `PATH_MAX`).
pub const PATH_MAX: usize = 4096;

/// A chain of directories under `root` whose last holds `file` with
/// `contents`, its path more than [`PATH_MAX`] bytes below `root`: a walker
/// that names paths whole cannot enter its lower part. Built from the bottom
/// up, each step moving the chain so far under a new top directory, so no
/// call here names a path longer than three names. Returns the file's path
/// relative to `root`.
pub fn beyond_path_max(root: &Path, file: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let name = |level: usize| format!("{level:03}{}", "d".repeat(247));
    let levels = PATH_MAX / name(0).len() + 2;
    let mut chain = PathBuf::from(name(0));
    write(root, &format!("{}/{file}", chain.display()), contents);
    for level in 1..levels {
        let top = root.join(name(level));
        fs::create_dir(&top).expect("a directory of the chain");
        let below = name(level - 1);
        fs::rename(root.join(&below), top.join(&below)).expect("the chain moved down");
        chain = Path::new(&name(level)).join(chain);
    }
    chain.join(file)
}

/// Put a copy of the file `from` at `to` with mode 0755, without ever
/// holding a writable descriptor to `to` in this process: tests run on
/// threads of one process, and a descriptor inherited by a sibling test's
/// child between its fork and exec makes running `to` fail with "text file
/// busy" (`ETXTBSY`). `install`, a process of its own, writes it instead.
pub fn install_executable(from: &Path, to: &Path) {
    let status = Command::new("install")
        .args(["-m", "0755"])
        .arg(from)
        .arg(to)
        .status()
        .expect("install runs");
    assert!(
        status.success(),
        "install {} {}",
        from.display(),
        to.display()
    );
}

/// A script with `text` at `path`, executable, written as
/// [`install_executable`] writes (its text first goes to `path` with the
/// extension `txt`).
pub fn install_script(path: &Path, text: &str) {
    let source = path.with_extension("txt");
    fs::write(&source, text).expect("a script's text");
    install_executable(&source, path);
}
