//! Changes to several files that happen all together or not at all.
//!
//! A patch that modifies one file, deletes another and renames a third must
//! not stop halfway. Every path is resolved (and confinement checked) before
//! anything changes; then the changes are made in order, each recorded with
//! how to undo it. If one fails, the ones already made are undone in reverse:
//! overwritten files get their old bytes back, created files and
//! directories are removed, renamed entries move back, and deleted files —
//! which until the end are only hidden under a temporary name beside
//! themselves — reappear. A crash midway can leave such a hidden file; it
//! holds the deleted bytes, so nothing is lost.

use std::{
    collections::HashMap,
    path::{Component, Path, PathBuf},
};

use natives_core::{
    Error, ErrorKind, Result,
    resolve::{Last, Location, Scope, names_a_directory},
};
use nix::{
    errno::Errno,
    sys::stat::{SFlag, fstat},
    unistd::{UnlinkatFlags, unlinkat},
};

use crate::{
    crash,
    read::{Limit, Stamp, read_at},
    sys::{errno_error, file_kind},
    write::{
        Expect, NewContents, check_expectation, hidden_name, remove_dirs, rename_no_replace,
        sync_dir, write_at,
    },
};

#[cfg(test)]
mod tests;

/// What a caller asks of [`apply`]. Field docs give the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Refuse (`OutsideRoot`, before anything changes) a path whose real
    /// location leaves the directory it is relative to (see [`Scope::new`]).
    /// Default: `true`: the paths a model chose stay inside the directory
    /// unless a caller lifts the confinement.
    pub confine: bool,
}

impl Default for ApplyOptions {
    fn default() -> ApplyOptions {
        ApplyOptions { confine: true }
    }
}

/// One change to make.
#[derive(Clone, Debug)]
pub enum Change {
    /// Create or replace the file at `path` (links followed) with `data`;
    /// `executable` gives it execute permission wherever it has read
    /// permission, or takes it away (`None`: an existing file keeps its mode,
    /// a new one gets 0o666 less the umask).
    Write {
        /// The file to write (relative to the scope's directory, or absolute).
        path: PathBuf,
        /// Its new contents.
        data: Vec<u8>,
        /// What must be there when the write lands.
        expect: Expect,
        /// Set or clear the execute bits; `None` leaves the mode alone.
        executable: Option<bool>,
    },
    /// Delete the entry at `path` (a link is deleted, not its target).
    Delete {
        /// The entry to delete.
        path: PathBuf,
        /// What must be there (the file a link leads to is not looked at).
        expect: Expect,
    },
    /// Move the entry at `from` (a link moves as a link) to `to`, which must
    /// not exist. An `Unchanged` expectation is checked against the file
    /// the entry leads to (through a link), as [`read_file`](crate::read_file) saw it.
    Rename {
        /// The entry to move.
        from: PathBuf,
        /// Where it goes; must not exist.
        to: PathBuf,
        /// The version the entry's file must still be.
        expect: Expect,
    },
}

impl Change {
    fn paths(&self) -> Vec<(&Path, Last)> {
        match self {
            Change::Write { path, .. } => vec![(path, Last::Follow)],
            Change::Delete { path, .. } => vec![(path, Last::Entry)],
            Change::Rename { from, to, .. } => vec![(from, Last::Entry), (to, Last::Entry)],
        }
    }
}

/// What one change did.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The real path the change left: the file written, the entry deleted,
    /// the rename's destination.
    pub path: PathBuf,
    /// A write created the file.
    pub created: bool,
}

/// What a batch did.
#[derive(Debug)]
pub struct Applied {
    /// One outcome per change, in order.
    pub outcomes: Vec<Outcome>,
    /// Every real path whose entry appeared, changed or vanished (created
    /// directories included), for the caller to invalidate caches with.
    pub touched: Vec<PathBuf>,
}

/// Make every change in `changes`, in order, or none of them.
///
/// Refusals (nothing changed): a path outside a confined scope
/// (`OutsideRoot`), an expectation not met (`Changed`, `AlreadyExists`), a
/// target that is a directory, a FIFO or device, read-only or hard-linked,
/// a write to a path ending in `/` (`IsADirectory`), and one file named by
/// two different paths in the batch (`InvalidInput`, see [`check_batch`]).
/// If undoing a failed batch itself fails, the error says which paths could
/// not be restored. Either way the shared scan cache is invalidated for every
/// path the batch touched.
pub fn apply(scope: &Scope, changes: &[Change]) -> Result<Applied> {
    check_batch(scope, changes)?;
    let mut journal = Journal::default();
    for (index, change) in changes.iter().enumerate() {
        let keep_undo = index + 1 < changes.len();
        if let Err(err) = journal.make(scope, change, keep_undo) {
            let touched = journal.touched.clone();
            let err = journal.undo(err);
            invalidate_scans(&touched);
            return Err(err);
        }
    }
    let applied = journal.commit();
    invalidate_scans(&applied.touched);
    Ok(applied)
}

/// Resolve every path of the batch before anything changes, and refuse
/// one file reached by two different paths (`b`, a link to `a`, and `a`;
/// `dir/../a` and `sub/a`): a caller that plans a batch by its paths (a
/// patch applies its sections one after the other) would otherwise plan
/// two files where there is one and write one's content over the other's.
/// One path given twice (`.` and repeated `/` aside) is one file.
fn check_batch(scope: &Scope, changes: &[Change]) -> Result<()> {
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
        for (path, last) in change.paths() {
            let location = scope.locate(path, last)?;
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

/// Drop the cached scans that saw these paths, so no search answers from
/// before the change (or before its undoing).
fn invalidate_scans(touched: &[PathBuf]) {
    for path in touched {
        if natives_scan::invalidate(Some(path)).is_err() {
            let _ = natives_scan::invalidate(None);
        }
    }
}

/// How to take one change back.
enum Undo {
    /// Put the old bytes back over what was written.
    Restore {
        path: PathBuf,
        original: Vec<u8>,
        written: Stamp,
    },
    /// Remove a file that was created.
    Remove { path: PathBuf, written: Stamp },
    /// Remove a directory that was created (if still empty).
    Rmdir { path: PathBuf },
    /// Move a renamed entry back.
    MoveBack { from: PathBuf, to: PathBuf },
    /// Un-hide a deleted entry.
    Unhide { hidden: PathBuf, path: PathBuf },
}

#[derive(Default)]
struct Journal {
    undo: Vec<Undo>,
    outcomes: Vec<Outcome>,
    touched: Vec<PathBuf>,
}

impl Journal {
    fn make(&mut self, scope: &Scope, change: &Change, keep_undo: bool) -> Result<()> {
        match change {
            Change::Write {
                path,
                data,
                expect,
                executable,
            } => {
                let contents = NewContents {
                    data,
                    expect: *expect,
                    executable: *executable,
                };
                self.write(scope, path, &contents, keep_undo)
            }
            Change::Delete { path, expect } => self.delete(scope, path, *expect),
            Change::Rename { from, to, expect } => self.rename(scope, from, to, *expect),
        }
    }

    fn write(
        &mut self,
        scope: &Scope,
        path: &Path,
        contents: &NewContents<'_>,
        keep_undo: bool,
    ) -> Result<()> {
        let mut location = scope.locate(path, Last::Follow)?;
        // The old bytes are kept only when a later change could fail and need them back.
        let original = match keep_undo && location.stat()?.is_some() {
            true => Some(read_at(&location, path, Limit::default())?.bytes),
            false => None,
        };
        let written = write_at(&mut location, path, contents)?;
        self.created_dirs(&written.created_dirs);
        let path = written.path.clone();
        if written.created {
            self.undo.push(Undo::Remove {
                path,
                written: written.stamp,
            });
        } else if let Some(original) = original {
            self.undo.push(Undo::Restore {
                path,
                original,
                written: written.stamp,
            });
        }
        self.done(written.path, written.created);
        Ok(())
    }

    fn delete(&mut self, scope: &Scope, path: &Path, expect: Expect) -> Result<()> {
        let location = scope.locate(path, Last::Entry)?;
        let stat = location.stat()?;
        check_expectation(stat.as_ref(), expect, path)?;
        let stat = stat.ok_or_else(|| crate::read::not_found(path))?;
        if file_kind(&stat) == SFlag::S_IFDIR {
            return Err(Error::new(
                ErrorKind::IsADirectory,
                format!("{}: is a directory; only files are deleted", path.display()),
            ));
        }
        let dir = location.dir().ok_or_else(|| crate::read::not_found(path))?;
        let hidden = hidden_name(location.name(), "deleted");
        rename_no_replace(dir, location.name(), dir, &hidden)
            .map_err(|errno| errno_error(path, errno))?;
        crash::point("deleted file hidden");
        sync_dir(dir);
        let real = location.real_path();
        self.undo.push(Undo::Unhide {
            hidden: real.with_file_name(&hidden),
            path: real.clone(),
        });
        self.done(real, false);
        Ok(())
    }

    fn rename(&mut self, scope: &Scope, from: &Path, to: &Path, expect: Expect) -> Result<()> {
        let source = scope.locate(from, Last::Entry)?;
        let stat = source.stat()?.ok_or_else(|| crate::read::not_found(from))?;
        // The expected version is of the file the entry leads to, as a read sees it.
        if let Expect::Unchanged(_) = expect {
            let followed = scope.locate(from, Last::Follow)?.stat()?;
            check_expectation(followed.as_ref(), expect, from)?;
        }
        if file_kind(&stat) == SFlag::S_IFDIR {
            return Err(Error::new(
                ErrorKind::IsADirectory,
                format!("{}: is a directory; only files are renamed", from.display()),
            ));
        }
        let mut target = scope.locate(to, Last::Entry)?;
        if target.stat()?.is_some() {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "{}: already exists; {} was not renamed",
                    to.display(),
                    from.display()
                ),
            ));
        }
        let created = target.create_missing_dirs(|_| crash::point("directory created"))?;
        let moved = move_entry(&source, &target, to);
        if moved.is_err() {
            remove_dirs(&created);
        }
        moved?;
        self.created_dirs(&created);
        let (old, new) = (source.real_path(), target.real_path());
        self.undo.push(Undo::MoveBack {
            from: old.clone(),
            to: new.clone(),
        });
        self.touched.push(old);
        self.done(new, false);
        Ok(())
    }

    fn created_dirs(&mut self, dirs: &[PathBuf]) {
        for dir in dirs {
            self.undo.push(Undo::Rmdir { path: dir.clone() });
        }
        // The outermost is enough to invalidate what lies below it.
        self.touched.extend(dirs.first().cloned());
    }

    fn done(&mut self, path: PathBuf, created: bool) {
        self.touched.push(path.clone());
        self.outcomes.push(Outcome { path, created });
    }

    /// Undo everything made so far, newest first; `cause` is why.
    fn undo(self, cause: Error) -> Error {
        let failures: Vec<String> = self
            .undo
            .into_iter()
            .rev()
            .filter_map(|undo| {
                let undone = undo.run();
                crash::point("change undone");
                undone.err().map(|err| err.to_string())
            })
            .collect();
        if failures.is_empty() {
            return cause;
        }
        Error::new(
            cause.kind(),
            format!(
                "{}; undoing the changes already made failed: {}",
                cause.message(),
                failures.join("; ")
            ),
        )
    }

    /// Keep every change: hidden deleted files go for good.
    fn commit(self) -> Applied {
        for undo in &self.undo {
            if let Undo::Unhide { hidden, .. } = undo {
                let _ = std::fs::remove_file(hidden);
                crash::point("hidden file removed");
            }
        }
        Applied {
            outcomes: self.outcomes,
            touched: self.touched,
        }
    }
}

impl Undo {
    fn run(self) -> Result<()> {
        match self {
            Undo::Restore {
                path,
                original,
                written,
            } => {
                let mut location = Scope::unconfined(Path::new("/"))?.locate(&path, Last::Entry)?;
                let contents = NewContents {
                    data: &original,
                    expect: Expect::Unchanged(written),
                    executable: None,
                };
                write_at(&mut location, &path, &contents).map(drop)
            }
            Undo::Remove { path, written } => remove_written(&path, written),
            Undo::Rmdir { path } => {
                remove_dirs(&[path]);
                Ok(())
            }
            Undo::MoveBack { from, to } => move_back(&to, &from),
            Undo::Unhide { hidden, path } => move_back(&hidden, &path),
        }
    }
}

/// Remove a file this batch created, unless someone replaced it since.
fn remove_written(path: &Path, written: Stamp) -> Result<()> {
    let location = Scope::unconfined(Path::new("/"))?.locate(path, Last::Entry)?;
    check_expectation(location.stat()?.as_ref(), Expect::Unchanged(written), path)?;
    let dir = location.dir().ok_or_else(|| crate::read::not_found(path))?;
    unlinkat(dir, location.name(), UnlinkatFlags::NoRemoveDir)
        .map_err(|errno| errno_error(path, errno))
}

/// Move `from` back to `to`, never over something that took its place.
fn move_back(from: &Path, to: &Path) -> Result<()> {
    let scope = Scope::unconfined(Path::new("/"))?;
    let source = scope.locate(from, Last::Entry)?;
    let target = scope.locate(to, Last::Entry)?;
    move_entry(&source, &target, to)
}

/// Rename `source`'s entry to `target`'s name, refusing to replace one.
fn move_entry(source: &Location, target: &Location, given: &Path) -> Result<()> {
    let (Some(from_dir), Some(to_dir)) = (source.dir(), target.dir()) else {
        return Err(crate::read::not_found(given));
    };
    rename_no_replace(from_dir, source.name(), to_dir, target.name()).map_err(
        |errno| match errno {
            Errno::EEXIST => Error::new(
                ErrorKind::AlreadyExists,
                format!("{}: already exists", given.display()),
            ),
            errno => errno_error(given, errno),
        },
    )?;
    crash::point("entry moved");
    sync_dir(to_dir);
    if !std::ptr::eq(from_dir, to_dir) {
        sync_dir(from_dir);
    }
    Ok(())
}
