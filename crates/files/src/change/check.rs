//! What a batch is checked for before anything changes, and where its
//! journal goes.

use std::{
    collections::HashMap,
    path::{Component, Path, PathBuf},
};

use natives_core::{
    Error, ErrorKind, Result,
    resolve::{Last, Location, Scope, names_a_directory},
};
use nix::sys::stat::fstat;

use super::request::Change;
use crate::{
    journal::{JOURNAL_DIR, Journal},
    lossy::{Doing, refuse_lossy_copy},
    sys::errno_error,
};

impl Change {
    /// Each path the change names, how its last component resolves, and
    /// whether an absent one would be created.
    fn paths(&self) -> Vec<(&Path, Last, Doing)> {
        match self {
            Change::Write { path, .. } => vec![(path, Last::Follow, Doing::Creating)],
            Change::Delete { path, .. } => vec![(path, Last::Entry, Doing::Reading)],
            Change::Rename { from, to, .. } => vec![
                (from, Last::Entry, Doing::Reading),
                (to, Last::Entry, Doing::Creating),
            ],
        }
    }
}

/// Resolve every path of the batch before anything changes, and refuse
/// one file reached by two different paths (`b`, a link to `a`, and `a`;
/// `dir/../a` and `sub/a`): a caller that plans a batch by its paths (a
/// patch applies its sections one after the other) would otherwise plan
/// two files where there is one and write one's content over the other's.
/// One path given twice (`.` and repeated `/` aside) is one file. A path
/// that names nothing is refused when it is a lossy copy of one that does
/// (see `lossy`).
pub(super) fn check_batch(scope: &Scope, changes: &[Change]) -> Result<()> {
    let mut named: HashMap<(u64, u64, PathBuf), &Path> = HashMap::new();
    for change in changes {
        if let Change::Write { path, .. } = change
            && names_a_directory(path)
        {
            return Err(Error::new(
                ErrorKind::IsADirectory,
                format!(
                    "{}: ends in `/`, so it names a directory; a file is not written there",
                    path.display()
                ),
            ));
        }
        for (path, last, doing) in change.paths() {
            let location = scope.locate(path, last)?;
            if matches!(location.stat(), Ok(None)) {
                refuse_lossy_copy(&location, path, doing)?;
            }
            let first = *named.entry(identity(&location, path)?).or_insert(path);
            if !same_path(first, path) {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{} and {} are one file ({}); a batch names each file by one path",
                        first.display(),
                        path.display(),
                        location.real_path().display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The same path text, `.` components and repeated `/` aside.
fn same_path(a: &Path, b: &Path) -> bool {
    let named = |path| Path::components(path).filter(|c| *c != Component::CurDir);
    named(a).eq(named(b))
}

/// What a location is on the filesystem whatever path led to it: the
/// device and inode of the deepest existing directory on the way, and the
/// names from there.
fn identity(location: &Location, given: &Path) -> Result<(u64, u64, PathBuf)> {
    let (dir, dir_path) = location.existing_dir();
    let stat = fstat(dir).map_err(|errno| errno_error(given, errno))?;
    let real = location.real_path();
    let names = real.strip_prefix(dir_path).unwrap_or(&real).to_path_buf();
    Ok((stat.st_dev, stat.st_ino, names))
}

/// The real directories the batch's paths lie in (the deepest existing one
/// on the way to each); a path that does not resolve is left to
/// [`check_batch`] to refuse.
pub(super) fn directories(scope: &Scope, changes: &[Change]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = changes
        .iter()
        .flat_map(Change::paths)
        .filter_map(|(path, last, _)| scope.locate(path, last).ok())
        .map(|location| location.existing_dir().1.to_path_buf())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The journal of a batch in `dirs`: in their deepest common directory,
/// kept in memory when that directory cannot hold one.
pub(super) fn journal_for(scope: &Scope, dirs: &[PathBuf]) -> Journal {
    let Some(first) = dirs.first() else {
        return Journal::default();
    };
    let mut root = first.clone();
    for dir in &dirs[1..] {
        while !dir.starts_with(&root) {
            root.pop();
        }
    }
    match scope.locate(&root.join(JOURNAL_DIR), Last::Entry) {
        Ok(location) => {
            let (dir, path) = location.existing_dir();
            Journal::open(dir, path)
        }
        Err(_) => Journal::default(),
    }
}
