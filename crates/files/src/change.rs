//! Changes to several files that happen all together or not at all.
//!
//! A patch that modifies one file, deletes another and renames a third must
//! not stop halfway. Every path is resolved (and confinement checked) before
//! anything changes; then the changes are made in order, each announced in
//! the batch's journal (journal.rs) before it is made. If one fails, the ones
//! already made are undone in reverse: replaced files are swapped back (the
//! old file was only moved aside, whole), created files and directories are
//! removed, renamed entries move back, and deleted files — which until the
//! end are only hidden under a temporary name beside themselves — reappear.
//! When the process dies midway, the journal stays, and the next batch in
//! that directory (or [`crate::recover`]) finishes the batch if it had
//! committed and rolls it back otherwise: no hidden file outlives a crash
//! for long, and none is removed unless the journal accounts for it.

use std::path::{Path, PathBuf};

use natives_core::{
    Error, ErrorKind, Result,
    resolve::{Last, Location, Scope},
};
use nix::errno::Errno;

use crate::{
    journal::{Ident, Journal, Name, Record, Recovery, recover_near},
    sys::{errno_error, file_kind, rename_no_replace, sync_dir},
    write::{Expect, NewContents, check_expectation, hidden_name, make_dirs, write_at},
};
use natives_system::crash;

mod check;
mod request;
#[cfg(test)]
mod tests;

pub use request::Change;

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
/// a write to a path ending in `/` (`IsADirectory`), one file named by two
/// different paths in the batch (`InvalidInput`), and a path that names
/// nothing but is a lossy copy of one that does, a name that is not UTF-8
/// with U+FFFD for its bytes (`LossyName`: no second file is created beside
/// the real one). If undoing a failed
/// batch itself fails, the error says which paths could not be restored.
/// Either way the shared scan cache is invalidated for every path the batch
/// touched. Before it starts, the batches that died in the directories it
/// is about to change are recovered.
pub fn apply(scope: &Scope, changes: &[Change]) -> Result<Applied> {
    let dirs = check::directories(scope, changes);
    recover_near(
        &dirs,
        scope.root().unwrap_or(Path::new("/")),
        &mut Recovery::default(),
    );
    check::check_batch(scope, changes)?;
    let mut batch = Batch {
        journal: check::journal_for(scope, &dirs),
        outcomes: Vec::new(),
        touched: Vec::new(),
    };
    let made = changes
        .iter()
        .try_for_each(|change| batch.make(scope, change))
        .and_then(|()| batch.journal.commit());
    if let Err(err) = made {
        let failures = batch.journal.roll_back();
        invalidate_scans(&batch.touched);
        return Err(undo_failed(err, &failures));
    }
    invalidate_scans(&batch.touched);
    Ok(Applied {
        outcomes: batch.outcomes,
        touched: batch.touched,
    })
}

/// `cause`, saying what could not be undone after it.
fn undo_failed(cause: Error, failures: &[String]) -> Error {
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

/// Drop the cached scans that saw these paths, so no search answers from
/// before the change (or before its undoing).
fn invalidate_scans(touched: &[PathBuf]) {
    for path in touched {
        if natives_scan::invalidate(Some(path)).is_err() {
            let _ = natives_scan::invalidate(None);
        }
    }
}

/// A batch on its way: the journal of its steps and what it did so far.
struct Batch {
    journal: Journal,
    outcomes: Vec<Outcome>,
    touched: Vec<PathBuf>,
}

impl Batch {
    fn make(&mut self, scope: &Scope, change: &Change) -> Result<()> {
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
                let mut location = scope.locate(path, Last::Follow)?;
                // Touched before it is made: a write that fails midway is undone, and searches must see that.
                self.touched.push(location.real_path());
                let written = write_at(&mut self.journal, &mut location, path, &contents)?;
                self.created_dirs(&written.created_dirs);
                self.outcomes.push(Outcome {
                    path: written.path,
                    created: written.created,
                });
                Ok(())
            }
            Change::Delete { path, expect } => self.delete(scope, path, *expect),
            Change::Rename { from, to, expect } => self.rename(scope, from, to, *expect),
        }
    }

    fn delete(&mut self, scope: &Scope, path: &Path, expect: Expect) -> Result<()> {
        let location = scope.locate(path, Last::Entry)?;
        let stat = location.stat()?;
        check_expectation(stat.as_ref(), expect, path)?;
        let stat = stat.ok_or_else(|| crate::read::not_found(path))?;
        if file_kind(&stat) == nix::sys::stat::SFlag::S_IFDIR {
            return Err(Error::new(
                ErrorKind::IsADirectory,
                format!("{}: is a directory; only files are deleted", path.display()),
            ));
        }
        let dir = location.dir().ok_or_else(|| crate::read::not_found(path))?;
        let hidden = hidden_name(location.name(), "deleted");
        let real = location.real_path();
        self.touched.push(real.clone());
        self.journal.note(Record::Delete {
            path: Name(real.clone()),
            hidden: Name(real.with_file_name(&hidden)),
            entry: Ident::of(&stat),
        })?;
        rename_no_replace(dir, location.name(), dir, &hidden)
            .map_err(|errno| errno_error(path, errno))?;
        crash::point("deleted file hidden");
        sync_dir(dir);
        self.outcomes.push(Outcome {
            path: real,
            created: false,
        });
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
        if file_kind(&stat) == nix::sys::stat::SFlag::S_IFDIR {
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
        let (old, new) = (source.real_path(), target.real_path());
        self.touched.extend([old.clone(), new.clone()]);
        let created = make_dirs(&mut self.journal, &mut target)?;
        self.created_dirs(&created);
        self.journal.note(Record::Rename {
            from: Name(old),
            to: Name(new.clone()),
            entry: Ident::of(&stat),
        })?;
        move_entry(&source, &target, to)?;
        self.outcomes.push(Outcome {
            path: new,
            created: false,
        });
        Ok(())
    }

    fn created_dirs(&mut self, dirs: &[PathBuf]) {
        // The outermost is enough to invalidate what lies below it.
        self.touched.extend(dirs.first().cloned());
    }
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
