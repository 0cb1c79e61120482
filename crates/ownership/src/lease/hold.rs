//! What a lease means to the code around a build: the hold a task gets when
//! the lease stayed busy past its budget, and who may be handed the cache.

use std::path::{Path, PathBuf};

use natives_core::Result;

use natives_system::paths;

/// Prefix of the hold a task gets when its run stopped because this lease
/// stayed busy past the task's resource-wait budget. Whatever releases held
/// tasks parses it back with [`parse_resource_hold`] and asks
/// [`super::Leases::in_use`] whether the lease is free yet.
pub const RESOURCE_HOLD: &str = "resource:build-cache:";

/// The hold for a task waiting on `cache_dir`'s lease.
pub fn resource_hold(cache_dir: &Path) -> Result<String> {
    Ok(format!(
        "{RESOURCE_HOLD}{}",
        paths::dir_id(cache_dir)?.display()
    ))
}

/// The cache directory a hold made by [`resource_hold`] waits on; `None` for
/// any other hold.
pub fn parse_resource_hold(hold: &str) -> Option<PathBuf> {
    hold.strip_prefix(RESOURCE_HOLD)
        .filter(|dir| dir.starts_with('/'))
        .map(PathBuf::from)
}

/// The environment to hand a child so it builds into `cache_dir`:
/// `CARGO_TARGET_DIR` only when the child's sandbox may write there (the
/// directory lies within one of `writable_roots`), and nothing otherwise.
///
/// A read-only seat that inherited the variable would try to write, be
/// refused by its own sandbox, and report the refusal as a defect in the
/// code it reviews; without it, cargo uses the child's own target directory.
pub fn cargo_target_env(
    cache_dir: &Path,
    writable_roots: &[PathBuf],
) -> Result<Vec<(String, PathBuf)>> {
    let cache = paths::dir_id(cache_dir)?;
    for root in writable_roots {
        if cache.starts_with(paths::dir_id(root)?) {
            return Ok(vec![("CARGO_TARGET_DIR".to_owned(), cache)]);
        }
    }
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_names_its_cache_directory() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().canonicalize().unwrap().join("target");
        let hold = resource_hold(&cache).unwrap();
        assert!(hold.starts_with(RESOURCE_HOLD));
        assert_eq!(parse_resource_hold(&hold), Some(cache));
        for other in [
            "",
            "resource:build-cache:",
            "resource:build-cache:relative",
            "resource:gpu:/x",
        ] {
            assert_eq!(parse_resource_hold(other), None, "{other:?}");
        }
    }

    #[test]
    fn only_a_seat_that_may_write_the_cache_gets_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let cache = root.join("shared/target");
        let table: [(&[PathBuf], bool); 4] = [
            (&[], false),
            (&[root.join("worktree")], false),
            (&[root.join("worktree"), root.join("shared")], true),
            (std::slice::from_ref(&root), true),
        ];
        for (roots, handed) in table {
            let env = cargo_target_env(&cache, roots).unwrap();
            let expected = if handed {
                vec![("CARGO_TARGET_DIR".to_owned(), cache.clone())]
            } else {
                Vec::new()
            };
            assert_eq!(env, expected, "{roots:?}");
        }
        // A sibling whose name only starts like the root is not inside it.
        assert!(
            cargo_target_env(&root.join("shared-2/t"), &[root.join("shared")])
                .unwrap()
                .is_empty()
        );
    }
}
