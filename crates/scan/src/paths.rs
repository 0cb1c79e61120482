//! Turning caller-supplied paths into cache keys and invalidation targets.
//!
//! Both resolve relative paths against the process's current directory and
//! canonicalise, so `dir/sub/..`, a symlinked route and the real path all
//! land on one cache key and one invalidation target.

use std::{
    fs, io,
    path::{Component, Path, PathBuf},
};

use crate::error::{Error, ErrorKind, Result};

/// Resolve a search root: relative to the current directory, it must exist
/// and be a directory (following links), and is returned canonicalised.
pub fn resolve_search_path(path: &Path) -> Result<PathBuf> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid("search path is empty"));
    }
    let absolute = absolute(path).map_err(|err| Error::io(path, err))?;
    let metadata = fs::metadata(&absolute).map_err(|err| Error::io(path, err))?;
    if !metadata.is_dir() {
        return Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{}: not a directory", path.display()),
        ));
    }
    fs::canonicalize(&absolute).map_err(|err| Error::io(path, err))
}

/// The canonical form of a path that may no longer (or not yet) exist.
///
/// The longest existing ancestor is canonicalised and the missing tail
/// re-appended, so a deleted file, a deleted directory or a rename's
/// vanished side still maps onto the cache roots that saw it.
pub fn resolve_invalidation_target(path: &Path) -> Result<PathBuf> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid("invalidation path is empty"));
    }
    let absolute = normalize(&absolute(path).map_err(|err| Error::io(path, err))?);
    let mut existing = absolute.as_path();
    let mut tail = Vec::new();
    loop {
        if let Ok(canonical) = fs::canonicalize(existing) {
            return Ok(tail
                .iter()
                .rev()
                .fold(canonical, |acc, name| acc.join(name)));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                existing = parent;
            }
            _ => return Ok(absolute),
        }
    }
}

fn absolute(path: &Path) -> io::Result<PathBuf> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
}

/// Lexically drop `.` and resolve `..` (only used for paths whose tail does
/// not exist, where the filesystem cannot resolve them).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_path_errors_name_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        fs::write(&file, "x").unwrap();
        let table = [
            (dir.path().join("missing"), "ENOENT"),
            (file.clone(), "ENOTDIR"),
            (PathBuf::new(), "EINVAL"),
        ];
        for (path, code) in table {
            let err = resolve_search_path(&path).unwrap_err();
            assert_eq!(err.code(), code, "{path:?}");
            assert!(
                err.message().contains(&*path.to_string_lossy()),
                "{}",
                err.message()
            );
        }
    }

    #[test]
    fn search_path_is_canonical() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b")).unwrap();
        let detour = dir.path().join("a/b/../b/./");
        let canonical = fs::canonicalize(dir.path().join("a/b")).unwrap();
        assert_eq!(resolve_search_path(&detour).unwrap(), canonical);
    }

    #[cfg(unix)]
    #[test]
    fn invalidation_target_survives_deletion_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(real.join("src")).unwrap();
        std::os::unix::fs::symlink(real.join("src"), real.join("alias")).unwrap();
        let table = [
            (real.join("src"), real.join("src")),
            (real.join("alias/gone.ts"), real.join("src/gone.ts")),
            (
                real.join("alias/gone/deeper/x.ts"),
                real.join("src/gone/deeper/x.ts"),
            ),
            (real.join("src/new/../x.ts"), real.join("src/x.ts")),
        ];
        for (input, expected) in table {
            assert_eq!(
                resolve_invalidation_target(&input).unwrap(),
                expected,
                "{input:?}"
            );
        }
    }
}
