//! What the natives crates' tests share, so each test says what its tree
//! holds rather than how to build it.
//!
//! ```
//! let dir = natives_testkit::tree(&[("src/a.rs", "fn a() {}\n"), ("empty/", "")]);
//! assert!(dir.path().join("empty").is_dir());
//! let named = natives_testkit::tree_of_paths(&["x/y.txt"]);
//! assert_eq!(std::fs::read_to_string(named.path().join("x/y.txt")).unwrap(), "x/y.txt");
//! ```

pub mod rg;

use std::{fs, path::Path};

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
