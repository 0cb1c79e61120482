//! Turning caller-supplied paths into cache keys and invalidation targets.
//!
//! Both resolve relative paths against the process's current directory as
//! the filesystem does, so `dir/sub/..`, a symlinked route and the real path
//! all land on one cache key and one invalidation target. A symlink named by
//! an invalidation is the exception that gets two targets: the link where it
//! lives and the destination it resolves to.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use natives_core::resolve::{Last, Scope};

use crate::error::{Error, ErrorKind, Result};

/// Resolve a search root: relative to the current directory, it must exist
/// and be a directory (following links), and is returned canonicalised.
pub fn resolve_search_path(path: &Path) -> Result<PathBuf> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid("search path is empty").with_option("path", ""));
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

/// Every path a mutation at `path` may have changed the view of, for
/// [`crate::ScanCache::invalidate`]; `path` may no longer (or not yet) exist.
///
/// The first target is where the entry itself lives: the directory holding
/// it resolved as the filesystem resolves it (links followed, `..` applied
/// to the real directory reached, never folded by text) and its own name
/// kept, so a symlink is the link, in the directory that holds it, and not
/// what it points to. When `path` leads somewhere else (it is a symlink,
/// dangling or not), that destination follows: a write through a link
/// changes (or creates) the destination.
///
/// Components past a missing one are kept by name, so a deleted file, a
/// deleted directory or a rename's vanished side still maps onto the cache
/// roots that saw it; where the walk cannot go on (a loop, a file where a
/// directory should be, a path past `PATH_MAX`), the deepest directory it
/// reached is the target, which holds whatever the path could name. Each
/// component costs one lookup relative to a held directory handle, so a
/// path of any length is answered at once (see [`natives_core::resolve`]).
pub fn resolve_invalidation_targets(path: &Path) -> Result<Vec<PathBuf>> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid("invalidation path is empty"));
    }
    let cwd = std::env::current_dir().map_err(|err| Error::io(path, err))?;
    let scope = Scope::unconfined(&cwd)?;
    let location = scope.reach(path, Last::Entry)?;
    let destination = scope.reach(path, Last::Follow)?;
    Ok([location.clone()]
        .into_iter()
        .chain((destination != location).then_some(destination))
        .collect())
}

fn absolute(path: &Path) -> io::Result<PathBuf> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
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
    fn invalidation_target_survives_deletion_and_symlinked_routes() {
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
            (PathBuf::from("/"), PathBuf::from("/")),
        ];
        for (input, expected) in table {
            assert_eq!(
                resolve_invalidation_targets(&input).unwrap(),
                [expected],
                "{input:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_a_target_where_it_lives_and_where_it_points() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(real.join("a")).unwrap();
        fs::create_dir_all(real.join("b/sub")).unwrap();
        fs::write(real.join("b/file"), "x").unwrap();
        symlink("../b/file", real.join("a/link")).unwrap();
        symlink(real.join("b/sub"), real.join("a/dir-link")).unwrap();
        symlink("link", real.join("a/chain")).unwrap();
        symlink("missing", real.join("a/dangling")).unwrap();
        symlink(real.join("a"), real.join("route")).unwrap();
        let table = [
            ("a/link", vec!["a/link", "b/file"]),
            ("a/dir-link", vec!["a/dir-link", "b/sub"]),
            ("a/chain", vec!["a/chain", "b/file"]),
            // A write through a dangling link creates its destination.
            ("a/dangling", vec!["a/dangling", "a/missing"]),
            // Through a linked directory: the link's own place is its real parent.
            ("route/link", vec!["a/link", "b/file"]),
            ("route", vec!["route", "a"]),
            // `..` after a linked directory is the parent of its destination, not of the link.
            ("a/dir-link/../file", vec!["b/file"]),
        ];
        for (input, expected) in table {
            let expected: Vec<PathBuf> = expected.iter().map(|rel| real.join(rel)).collect();
            assert_eq!(
                resolve_invalidation_targets(&real.join(input)).unwrap(),
                expected,
                "{input}"
            );
        }
    }

    #[test]
    fn a_path_past_path_max_is_answered_with_a_directory_that_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(dir.path()).unwrap();
        let long = real.join("d/".repeat(2_400) + "f");
        let targets = resolve_invalidation_targets(&long).unwrap();
        assert_eq!(targets.len(), 1);
        assert!(targets[0].as_os_str().len() <= natives_core::resolve::MAX_PATH_BYTES);
        assert!(targets[0].starts_with(&real) && long.starts_with(&targets[0]));
    }
}
