//! Naming directories: one canonical id per folder, one stable file name per id.
//!
//! Two routes to one folder (a symlink, `..`, a relative path) must name one
//! lease or one claim, even before the folder exists, so every directory is
//! first reduced to [`dir_id`]. Records are then named by [`slug`], the
//! SHA-256 of that id: stable across Rust releases and machines (unlike the
//! standard library's hasher), and safe as a file name whatever the path holds.

use std::{
    env,
    ffi::OsString,
    os::unix::ffi::OsStrExt,
    path::{Component, Path, PathBuf},
};

use natives_core::{Error, Result};
use nix::unistd::{User, getuid};
use sha2::{Digest, Sha256};

use crate::process::hex;

/// The environment variable naming the home of every natives record.
pub const HOME_ENV: &str = "NATIVES_HOME";

/// A directory's canonical id: `path` made absolute, its longest existing
/// prefix canonicalised (symlinks resolved), the rest appended with `.` and
/// `..` resolved by name (nothing there exists, so nothing can be a link).
pub fn dir_id(path: &Path) -> Result<PathBuf> {
    // An empty path would silently name the current directory.
    if path.as_os_str().is_empty() {
        return Err(Error::invalid("an empty path names no directory"));
    }
    let absolute = if path.is_absolute() {
        path.to_owned()
    } else {
        env::current_dir()
            .map_err(|err| Error::io(path, err))?
            .join(path)
    };
    for existing in absolute.ancestors() {
        if let Ok(canonical) = existing.canonicalize() {
            let tail = absolute.strip_prefix(existing).unwrap_or(Path::new(""));
            return Ok(append_lexically(canonical, tail));
        }
    }
    Err(Error::invalid(format!(
        "{}: no part of this path exists",
        path.display()
    )))
}

fn append_lexically(mut base: PathBuf, tail: &Path) -> PathBuf {
    for component in tail.components() {
        match component {
            Component::ParentDir => {
                base.pop();
            }
            Component::Normal(name) => base.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    base
}

/// The stable record name for a canonical directory id: 64 hex digits of
/// SHA-256 over the path's bytes.
pub fn slug(id: &Path) -> String {
    hex(&Sha256::digest(id.as_os_str().as_bytes()))
}

/// The home of every natives record: `explicit` if given, else
/// `$NATIVES_HOME`, else `~/.natives`.
pub fn home(explicit: Option<&Path>) -> Result<PathBuf> {
    match explicit {
        Some(home) => Ok(home.to_owned()),
        None => home_in(|name| env::var_os(name)),
    }
}

/// The home [`home`] finds without an explicit one, with the variables
/// read through `var`: a front whose runtime keeps its own copy of the
/// environment hands them over.
pub fn home_in(var: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    if let Some(home) = var(HOME_ENV).filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    let user_home = var("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| Error::invalid(format!("neither {HOME_ENV} nor HOME is set")))?;
    Ok(PathBuf::from(user_home).join(".natives"))
}

/// The current user's home directories, canonical: `$HOME` and the one the
/// user database names, when they exist (one entry when they agree).
pub fn user_homes() -> Vec<PathBuf> {
    let from_env = env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    let from_passwd = User::from_uid(getuid()).ok().flatten().map(|user| user.dir);
    let mut homes: Vec<PathBuf> = [from_env, from_passwd]
        .into_iter()
        .flatten()
        .filter_map(|home| home.canonicalize().ok())
        .collect();
    homes.dedup();
    homes
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn slugs_are_sha256_of_the_path_bytes() {
        let table = [
            (
                "/srv/cargo-target",
                "4a3ba9b1aa19e040c58c2401d7ad755e44629abec757a00e446ef0c5dc16ddfa",
            ),
            (
                "/",
                "8a5edab282632443219e051e4ade2d1d5bbc671c781051bf1437897cbdfea0f1",
            ),
            (
                "/home/ana/projetos/ação/target",
                "91cef16f46d5241da0c73e2141a5bcf2f1169c3623c2498929cf23b185bbe169",
            ),
        ];
        for (path, expected) in table {
            assert_eq!(slug(Path::new(path)), expected, "{path}");
        }
    }

    #[test]
    fn every_route_to_a_folder_has_one_id() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        symlink(root.join("real"), root.join("link")).unwrap();
        let expected = root.join("real/missing/deeper");
        let routes = [
            root.join("real/missing/deeper"),
            root.join("link/missing/deeper"),
            root.join("link/./missing/x/../deeper"),
            root.join("real/../link/missing/deeper"),
        ];
        for route in routes {
            assert_eq!(dir_id(&route).unwrap(), expected, "{}", route.display());
        }
        assert_eq!(dir_id(&root.join("link")).unwrap(), root.join("real"));
    }

    #[test]
    fn an_empty_path_is_refused() {
        assert_eq!(dir_id(Path::new("")).unwrap_err().code(), "EINVAL");
    }

    #[test]
    fn an_explicit_home_wins() {
        assert_eq!(home(Some(Path::new("/h"))).unwrap(), PathBuf::from("/h"));
    }
}
