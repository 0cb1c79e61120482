//! Undoing and finishing each step of a batch, the same whether its process
//! is still running or died: every file moved or removed must still be the
//! one the journal names, or it is left where it is and reported.

use std::path::{Path, PathBuf};

use natives_core::{
    Error, ErrorKind, Result,
    resolve::{Last, Location, Scope},
};
use nix::{
    fcntl::renameat,
    sys::stat::FileStat,
    unistd::{UnlinkatFlags, unlinkat},
};

use super::record::{Backup, Ident, Step};
use crate::sys::{errno_error, rename_no_replace, sync_dir};
use natives_system::crash;

/// Undo `steps`, newest first; what could not be undone, in words.
pub(super) fn undo_all(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .rev()
        .filter_map(|step| {
            let undone = undo(step);
            crash::point("change undone");
            undone.err().map(|err| err.to_string())
        })
        .collect()
}

/// Drop what `steps` kept for undoing them (old files, deleted files); what
/// could not be dropped, in words.
pub(super) fn finish_all(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .filter_map(|step| {
            let finished = finish(step);
            crash::point("change finished");
            finished.err().map(|err| err.to_string())
        })
        .collect()
}

fn undo(step: &Step) -> Result<()> {
    match step {
        Step::Mkdir(path) => {
            // Only if still empty: anything put in it since stays.
            let _ = std::fs::remove_dir(path);
            Ok(())
        }
        Step::Write {
            target,
            temp,
            copy,
            old,
            placing,
        } => undo_write(target, temp, copy, *old, placing.as_ref()),
        Step::Delete {
            path,
            hidden,
            entry,
        } => move_back(hidden, path, entry),
        Step::Rename { from, to, entry } => move_back(to, from, entry),
    }
}

fn finish(step: &Step) -> Result<()> {
    match step {
        Step::Write {
            temp,
            old: Some(old),
            placing: Some((_, Backup::Swapped)),
            ..
        } => remove_if(temp, |stat| old.same_inode(stat)),
        Step::Write {
            copy,
            placing: Some((_, Backup::Copied { ident })),
            ..
        } => remove_if(copy, |stat| ident.matches(stat)),
        Step::Delete { hidden, entry, .. } => remove_if(hidden, |stat| entry.same_inode(stat)),
        _ => Ok(()),
    }
}

/// Take a write back: the old file returns to `target` if the new one got
/// there, and the temporary file and any copy go.
fn undo_write(
    target: &Path,
    temp: &Path,
    copy: &Path,
    old: Option<Ident>,
    placing: Option<&(Ident, Backup)>,
) -> Result<()> {
    let now = locate(target)?;
    let current = now.stat()?;
    let placed = match (placing, &current) {
        (Some((new, _)), Some(stat)) => new.same_inode(stat),
        _ => false,
    };
    if !placed {
        // Never put in place: the temporary file holds only new bytes (unless it holds the old
        // file), and a copy of the old file only bytes the old file still has.
        remove_if(temp, |stat| old.is_none_or(|old| !old.same_inode(stat)))?;
        let still_old = current
            .as_ref()
            .zip(old)
            .is_some_and(|(stat, old)| old.same_inode(stat));
        if still_old {
            remove_if(copy, |_| true)?;
        }
        return Ok(());
    }
    let Some((new, backup)) = placing else {
        return Ok(());
    };
    match backup {
        Backup::None => remove_if(target, |stat| new.matches(stat)),
        Backup::Swapped => restore(temp, target, |stat| {
            old.is_some_and(|old| old.same_inode(stat))
        }),
        Backup::Copied { ident } => restore(copy, target, |stat| ident.matches(stat)),
    }
}

/// Move `kept` over `target` (the batch's own new file), when `kept` is the
/// file the journal says.
fn restore(kept: &Path, target: &Path, is_kept: impl Fn(&FileStat) -> bool) -> Result<()> {
    let source = locate(kept)?;
    match source.stat()? {
        Some(stat) if is_kept(&stat) => {}
        _ => {
            return Err(left(
                target,
                &format!("the old file is no longer at {}", kept.display()),
            ));
        }
    }
    let destination = locate(target)?;
    let (Some(from), Some(to)) = (source.dir(), destination.dir()) else {
        return Err(left(target, "its directory is gone"));
    };
    renameat(from, source.name(), to, destination.name())
        .map_err(|errno| errno_error(target, errno))?;
    crash::point("old file restored");
    sync_dir(to);
    Ok(())
}

/// Move `from` back to `to` when `from` is `entry` and nothing took `to`.
fn move_back(from: &Path, to: &Path, entry: &Ident) -> Result<()> {
    let source = locate(from)?;
    match source.stat()? {
        Some(stat) if entry.same_inode(&stat) => {}
        // Never moved, or already back.
        _ => return Ok(()),
    }
    let destination = locate(to)?;
    let (Some(from_dir), Some(to_dir)) = (source.dir(), destination.dir()) else {
        return Err(left(
            to,
            &format!("its directory is gone; it is kept as {}", from.display()),
        ));
    };
    rename_no_replace(from_dir, source.name(), to_dir, destination.name()).map_err(|errno| {
        left(
            to,
            &format!(
                "{} ({errno}); it is kept as {}",
                "it could not be put back",
                from.display()
            ),
        )
    })?;
    crash::point("entry moved back");
    sync_dir(to_dir);
    Ok(())
}

/// Unlink the entry at `path` when it is there and `is_it` says it is the
/// file the journal names; a different file there is an error, and stays.
fn remove_if(path: &Path, is_it: impl Fn(&FileStat) -> bool) -> Result<()> {
    let location = locate(path)?;
    let Some(stat) = location.stat()? else {
        return Ok(());
    };
    if !is_it(&stat) {
        return Err(left(path, "it is not the file the batch made or kept"));
    }
    let dir = location.dir().ok_or_else(|| crate::read::not_found(path))?;
    unlinkat(dir, location.name(), UnlinkatFlags::NoRemoveDir)
        .map_err(|errno| errno_error(path, errno))?;
    crash::point("kept file removed");
    Ok(())
}

fn locate(path: &Path) -> Result<Location> {
    Scope::unconfined(Path::new("/"))?.locate(path, Last::Entry)
}

fn left(path: &Path, why: &str) -> Error {
    Error::new(
        ErrorKind::Changed,
        format!("{}: {why}; left as it is", path.display()),
    )
}

/// Every real path `steps` name, for checking they lie where the journal
/// may act.
pub(super) fn paths(steps: &[Step]) -> Vec<PathBuf> {
    steps
        .iter()
        .flat_map(|step| match step {
            Step::Mkdir(path) => vec![path.clone()],
            Step::Write {
                target, temp, copy, ..
            } => vec![target.clone(), temp.clone(), copy.clone()],
            Step::Delete { path, hidden, .. } => vec![path.clone(), hidden.clone()],
            Step::Rename { from, to, .. } => vec![from.clone(), to.clone()],
        })
        .collect()
}
