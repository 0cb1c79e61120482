//! Removing a member whole: a half-seeded one whose filler died, or an idle
//! one beyond the pool's disk budget.
//!
//! A member is removed only while its maintenance lease is held (its cache
//! lease and its output lease: nobody builds in it, nobody cleans up after
//! a build in it) and cargo's lock on each of its profile directories is
//! held exclusively (no cargo left running in it, no seed copying from it).
//! A member with cargo output must pass the build-cache prune guard
//! ([`crate::Leases::maintenance_prune`]'s); every member must be the
//! pool's own: a directory `member-<n>` right in the pool, not a link, with
//! a record saying so, holding no git repository at any depth.
//!
//! The removal is ordered so that a kill at any step leaves a member that
//! is never leased and is finished by the next pass: the record is replaced
//! by `discarding` (naming where the directory goes), the directory is
//! renamed there in one step, removed, its identity forgotten, and the
//! record removed last. Its lease is then let go without a catalog entry,
//! so the lease inventory does not list a directory that is gone.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result};

use super::member::{MemberRecord, MemberState, MemberView, Recorded, is_member_name};
use crate::{
    fresh::{self, output_layouts},
    layout::PoolFiles,
    lease::{AcquireOutcome, Guard, Leases, Owner, repository_within},
};
use natives_system::{
    crash, durable,
    lock::{self, CargoLock},
    process,
};

/// The crash points of discarding a member, in order (see
/// [`natives_system::crash`]): tests kill a real process at each one.
pub(super) mod points {
    /// Its record says `discarding`.
    pub const MARKED: &str = "pool member marked discarding";
    /// Its directory is renamed aside.
    pub const MOVED_ASIDE: &str = "pool member moved aside";
    /// The directory aside is removed.
    pub const REMOVED: &str = "pool member removed";
    /// Its record is removed: it is gone.
    pub const FORGOTTEN: &str = "pool member forgotten";
}

/// Why a member was not discarded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Kept {
    /// In use: leased, cleaned up after, or a cargo runs in it.
    Busy(String),
    /// Refused by a guard (why).
    Refused(String),
}

impl Kept {
    pub fn describe(&self) -> String {
        match self {
            Kept::Busy(why) => format!("busy: {why}"),
            Kept::Refused(why) => format!("refused: {why}"),
        }
    }
}

/// A member held for removal: its maintenance lease, and cargo's locks.
pub(super) struct Doomed {
    guard: Guard,
    _cargo: Vec<CargoLock>,
}

/// Hold `member` for removal as `owner`, if nobody uses it and the guards
/// let it go.
pub(super) fn hold(
    leases: &Leases,
    pool: &Path,
    member: &MemberView,
    owner: &Owner,
) -> Result<std::result::Result<Doomed, Kept>> {
    if let Err(why) = owned_by_pool(pool, member) {
        return Ok(Err(Kept::Refused(why)));
    }
    let guard = match leases.try_acquire_maintenance(&member.dir, owner)? {
        AcquireOutcome::Acquired(guard) => guard,
        AcquireOutcome::Busy(busy) => return Ok(Err(Kept::Busy(busy.describe()))),
    };
    let Some(cargo) = cargo_locks(&member.dir)? else {
        return Ok(Err(Kept::Busy("a cargo runs in it".to_owned())));
    };
    if member.in_state(MemberState::Ready).is_some()
        && has_output(&member.dir)
        && let Err(err) = leases.prunable(&member.dir)
    {
        return Ok(Err(Kept::Refused(err.message().to_owned())));
    }
    Ok(Ok(Doomed {
        guard,
        _cargo: cargo,
    }))
}

/// Remove the member `held`, whose record (re-read under the hold) is
/// `record`.
pub(super) fn discard(
    home: &Path,
    files: &PoolFiles,
    record: &MemberRecord,
    held: Doomed,
) -> Result<()> {
    let path = files.member(&record.name);
    let aside = match (&record.state, &record.aside) {
        (MemberState::Discarding, Some(aside)) => aside.clone(),
        _ => {
            let aside = aside_path(&record.dir, &record.name);
            let marked = MemberRecord {
                state: MemberState::Discarding,
                aside: Some(aside.clone()),
                ..record.clone()
            };
            durable::replace(&path, &marked.to_bytes())?;
            aside
        }
    };
    crash::point(points::MARKED);
    match fs::rename(&record.dir, &aside) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(Error::io(&record.dir, err)),
    }
    crash::point(points::MOVED_ASIDE);
    remove_tree(&aside)?;
    crash::point(points::REMOVED);
    fresh::invalidate_identity(home, &record.dir)?;
    durable::remove(&path)?;
    crash::point(points::FORGOTTEN);
    held.guard.release_removed()
}

/// Where `dir` goes while it is removed: beside it, under a name no member
/// has.
fn aside_path(dir: &Path, name: &str) -> PathBuf {
    dir.with_file_name(format!(".{name}.discard-{}", process::nonce()))
}

fn remove_tree(dir: &Path) -> Result<()> {
    match fs::symlink_metadata(dir) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(Error::io(dir, err)),
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(dir).map_err(|err| Error::io(dir, err)),
        Ok(_) => fs::remove_file(dir).map_err(|err| Error::io(dir, err)),
    }
}

/// Why `member` is not the pool's own to remove, if it is not.
fn owned_by_pool(pool: &Path, member: &MemberView) -> std::result::Result<(), String> {
    let Recorded::Member(record) = &member.record else {
        return Err("no readable member record names it".to_owned());
    };
    let named = member.dir.parent() == Some(pool)
        && is_member_name(&member.name)
        && record.dir == member.dir
        && record.name == member.name;
    if !named {
        return Err(format!(
            "{}: not a member directory of {}",
            member.dir.display(),
            pool.display()
        ));
    }
    match fs::symlink_metadata(&member.dir) {
        Ok(meta) if !meta.is_dir() => Err(format!("{}: not a directory", member.dir.display())),
        Ok(_) => holds_no_repository(&member.dir),
        _ => Ok(()),
    }
}

/// Why `dir` may not go whole: a git repository at any depth (a build
/// script's checkout under `build/*/out` may hold commits nobody pushed),
/// or a directory that cannot be looked through.
fn holds_no_repository(dir: &Path) -> std::result::Result<(), String> {
    match repository_within(dir) {
        Ok(None) => Ok(()),
        Ok(Some(repo)) => Err(format!(
            "{}: holds a git repository ({}: a .git, or a bare repository's layout), which may hold commits found nowhere else",
            dir.display(),
            repo.display()
        )),
        Err(err) => Err(format!("{}: not looked through: {err}", dir.display())),
    }
}

/// Cargo's lock on every profile directory of `dir`, held exclusively;
/// `None` when a cargo (or a seed copying it) holds any.
fn cargo_locks(dir: &Path) -> Result<Option<Vec<CargoLock>>> {
    let mut locks = Vec::new();
    for path in lock_files(dir)? {
        match lock::try_cargo_lock(&path, true) {
            Ok(Some(lock)) => locks.push(lock),
            Ok(None) => return Ok(None),
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Ok(Some(locks))
}

/// Every `.cargo-lock` one or two directories down in `dir` (where cargo
/// puts one per profile, for the host and per target), whatever their
/// names: a half-seeded member need not be a layout cargo would make.
fn lock_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for child in subdirectories(dir)? {
        found.push(child.join(".cargo-lock"));
        for grandchild in subdirectories(&child)? {
            found.push(grandchild.join(".cargo-lock"));
        }
    }
    Ok(found
        .into_iter()
        .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .collect())
}

fn subdirectories(dir: &Path) -> Result<Vec<PathBuf>> {
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io(dir, err)),
    };
    let mut dirs = Vec::new();
    for item in listing {
        let item = item.map_err(|err| Error::io(dir, err))?;
        if item
            .file_type()
            .map_err(|err| Error::io(dir, err))?
            .is_dir()
        {
            dirs.push(item.path());
        }
    }
    Ok(dirs)
}

/// Whether cargo laid any output out in `dir`.
fn has_output(dir: &Path) -> bool {
    output_layouts(dir).map_or(true, |layouts| !layouts.is_empty())
}
