//! Which directories a prune may touch at all.
//!
//! A prune deletes files, so the directory it is pointed at must be proven
//! to be a build cache before anything is listed: a mistyped path, a folder
//! of documents or a home directory must be refused, not emptied. A
//! directory passes only if it is registered as a build cache under the
//! natives home and laid out as cargo lays out a target directory, and never
//! if it is the root, a user's home, anything holding one of those or the
//! natives home, or a repository.

use std::{
    fs,
    path::{Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result};

use super::output::profile_dirs;
use crate::layout::LeaseFiles;
use natives_system::{durable, paths};

/// The signature line every `CACHEDIR.TAG` starts with (cargo writes one at
/// the top of each target directory it creates).
const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// The largest `CACHEDIR.TAG` read: the signature and a few comment lines
/// fit many times over.
const CACHEDIR_TAG_LIMIT: u64 = 64 << 10;

/// The canonical path of `dir` if a prune may touch it, or why not:
/// `ENOENT`/`ENOTDIR` for a path that is not a directory, `EINVAL` naming
/// the rule it breaks otherwise.
pub(super) fn prunable(dir: &Path, home: &Path) -> Result<PathBuf> {
    prunable_for(dir, home, &paths::user_homes())
}

/// [`prunable`], refusing `user_homes` (canonical), their ancestors and
/// the root as home directories.
pub(super) fn prunable_for(dir: &Path, home: &Path, user_homes: &[PathBuf]) -> Result<PathBuf> {
    let meta = fs::metadata(dir).map_err(|err| Error::io(dir, err))?;
    if !meta.is_dir() {
        let message = format!("{}: not a directory", dir.display());
        return Err(Error::new(ErrorKind::NotADirectory, message));
    }
    let canonical = dir.canonicalize().map_err(|err| Error::io(dir, err))?;
    let refuse = |why: String| {
        Err(Error::invalid(format!(
            "{}: {why}; only a build cache is pruned",
            dir.display()
        )))
    };
    if let Some(why) = root_or_home(&canonical, user_homes) {
        return refuse(why);
    }
    let natives_home = paths::dir_id(home)?;
    if natives_home.starts_with(&canonical) {
        return refuse(format!(
            "contains the natives home {}",
            natives_home.display()
        ));
    }
    if fs::symlink_metadata(canonical.join(".git")).is_ok() {
        return refuse("holds a .git (a repository or worktree)".to_owned());
    }
    if !registered(home, &canonical) {
        return refuse(format!(
            "is not a build cache registered under {}",
            home.display()
        ));
    }
    if !has_cargo_marker(&canonical)? || profile_dirs(&canonical)?.is_empty() {
        return refuse(
            "does not look like a cargo target directory (a CACHEDIR.TAG or \
             .rustc_info.json beside profile directories with a .fingerprint)"
                .to_owned(),
        );
    }
    Ok(canonical)
}

/// Why `canonical` is the root, one of `user_homes` or a directory holding
/// one, if it is.
fn root_or_home(canonical: &Path, user_homes: &[PathBuf]) -> Option<String> {
    if canonical == Path::new("/") {
        return Some("is the root directory".to_owned());
    }
    user_homes.iter().find_map(|user_home| {
        if canonical == user_home {
            Some(format!("is the home directory {}", user_home.display()))
        } else if user_home.starts_with(canonical) {
            Some(format!(
                "contains the home directory {}",
                user_home.display()
            ))
        } else {
            None
        }
    })
}

/// Whether a lease was ever taken on `dir` under `home` (its catalog entry
/// or its lease record exists).
fn registered(home: &Path, dir: &Path) -> bool {
    let files = LeaseFiles::new(home, dir);
    files.catalog.exists() || files.record.exists()
}

/// Whether `dir` holds cargo's `CACHEDIR.TAG` or its `.rustc_info.json`.
/// The tag is read as every record is ([`durable::read_bounded`]): one that
/// is not a regular file or is oddly large fails the prune, naming it.
fn has_cargo_marker(dir: &Path) -> Result<bool> {
    let tag = dir.join("CACHEDIR.TAG");
    if durable::read_bounded(&tag, CACHEDIR_TAG_LIMIT)?
        .is_some_and(|bytes| bytes.starts_with(CACHEDIR_SIGNATURE))
    {
        return Ok(true);
    }
    Ok(fs::symlink_metadata(dir.join(".rustc_info.json")).is_ok_and(|meta| meta.is_file()))
}
