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
    lease::{AcquireOutcome, Busy, Guard, Leases, Owner, repository_within},
};
use natives_system::{
    crash, durable,
    lock::{self, CargoLock, HeldLock},
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
#[derive(Debug)]
pub(super) enum Kept {
    /// Leased, or cleaned up after: who holds it.
    Busy(Busy),
    /// A cargo runs in it (it holds a lock on a profile directory).
    CargoRuns,
    /// A seed is copying it.
    Seeding,
    /// It is not the pool's own to remove whole.
    NotOwned(NotOwned),
    /// The build-cache prune guard refused its output.
    Guarded(Error),
    /// It was used or changed after the prune measured it.
    Changed,
}

impl Kept {
    /// Why, in a line: `busy: ...` or `refused: ...`.
    pub fn describe(&self) -> String {
        match self {
            Kept::Busy(busy) => format!("busy: {}", busy.describe()),
            Kept::CargoRuns => "busy: a cargo runs in it".to_owned(),
            Kept::Seeding => "busy: a seed is copying it".to_owned(),
            Kept::NotOwned(why) => format!("refused: {why}"),
            Kept::Guarded(err) => format!("refused: {}", err.message()),
            Kept::Changed => "used or changed since it was measured".to_owned(),
        }
    }
}

/// Why a directory is not the pool's own to remove whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum NotOwned {
    /// No readable member record names it.
    NoRecord,
    /// Not `member-<n>` right in `pool` as its record says.
    NotAMember {
        /// The directory.
        dir: PathBuf,
        /// The pool it should be in.
        pool: PathBuf,
    },
    /// Something other than a directory where the member's is.
    NotADirectory(PathBuf),
    /// A git repository at any depth (a build script's checkout under
    /// `build/*/out` may hold commits nobody pushed).
    HoldsRepository {
        /// The member's directory.
        dir: PathBuf,
        /// The repository found in it.
        repository: PathBuf,
    },
    /// It could not be looked through (what the system said).
    NotLookedThrough {
        /// The member's directory.
        dir: PathBuf,
        /// Why.
        why: String,
    },
}

impl std::fmt::Display for NotOwned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotOwned::NoRecord => write!(f, "no readable member record names it"),
            NotOwned::NotAMember { dir, pool } => write!(
                f,
                "{}: not a member directory of {}",
                dir.display(),
                pool.display()
            ),
            NotOwned::NotADirectory(dir) => write!(f, "{}: not a directory", dir.display()),
            NotOwned::HoldsRepository { dir, repository } => write!(
                f,
                "{}: holds a git repository ({}: a .git, or a bare repository's layout), which may hold commits found nowhere else",
                dir.display(),
                repository.display()
            ),
            NotOwned::NotLookedThrough { dir, why } => {
                write!(f, "{}: not looked through: {why}", dir.display())
            }
        }
    }
}

/// A member held for removal: its maintenance lease, and cargo's locks.
pub(super) struct Doomed {
    guard: Guard,
    _cargo: Vec<CargoLock>,
    _reading: HeldLock,
}

/// Hold `member` for removal as `owner`, if nobody uses it and the guards
/// let it go.
pub(super) fn hold(
    leases: &Leases,
    (pool, files): (&Path, &PoolFiles),
    member: &MemberView,
    owner: &Owner,
) -> Result<std::result::Result<Doomed, Kept>> {
    if let Err(why) = owned_by_pool(pool, member) {
        return Ok(Err(Kept::NotOwned(why)));
    }
    let guard = match leases.try_acquire_maintenance(&member.dir, owner)? {
        AcquireOutcome::Acquired(guard) => guard,
        AcquireOutcome::Busy(busy) => return Ok(Err(Kept::Busy(busy))),
    };
    let Some(cargo) = cargo_locks(&member.dir)? else {
        return Ok(Err(Kept::CargoRuns));
    };
    let Some(reading) = lock::try_exclusive(&files.reading(&member.name))? else {
        return Ok(Err(Kept::Seeding));
    };
    if member.in_state(MemberState::Ready).is_some()
        && has_output(&member.dir)
        && let Err(err) = leases.prunable(&member.dir)
    {
        return Ok(Err(Kept::Guarded(err)));
    }
    Ok(Ok(Doomed {
        guard,
        _cargo: cargo,
        _reading: reading,
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
fn owned_by_pool(pool: &Path, member: &MemberView) -> std::result::Result<(), NotOwned> {
    let Recorded::Member(record) = &member.record else {
        return Err(NotOwned::NoRecord);
    };
    let named = member.dir.parent() == Some(pool)
        && is_member_name(&member.name)
        && record.dir == member.dir
        && record.name == member.name;
    if !named {
        return Err(NotOwned::NotAMember {
            dir: member.dir.clone(),
            pool: pool.to_path_buf(),
        });
    }
    match fs::symlink_metadata(&member.dir) {
        Ok(meta) if !meta.is_dir() => Err(NotOwned::NotADirectory(member.dir.clone())),
        Ok(_) => holds_no_repository(&member.dir),
        _ => Ok(()),
    }
}

/// Why `dir` may not go whole: a git repository at any depth, or a
/// directory that cannot be looked through.
fn holds_no_repository(dir: &Path) -> std::result::Result<(), NotOwned> {
    match repository_within(dir) {
        Ok(None) => Ok(()),
        Ok(Some(repository)) => Err(NotOwned::HoldsRepository {
            dir: dir.to_path_buf(),
            repository,
        }),
        Err(err) => Err(NotOwned::NotLookedThrough {
            dir: dir.to_path_buf(),
            why: err.to_string(),
        }),
    }
}

/// Cargo's lock on every profile directory of `dir`, held exclusively;
/// `None` when a cargo holds any.
pub(super) fn cargo_locks(dir: &Path) -> Result<Option<Vec<CargoLock>>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a kept member's report says, one line per reason.
    #[test]
    fn each_reason_to_keep_a_member_reads_as_it_did() {
        let dir = PathBuf::from("/pool/member-1");
        let table = [
            (
                Kept::NotOwned(NotOwned::NoRecord),
                "refused: no readable member record names it",
            ),
            (
                Kept::NotOwned(NotOwned::NotAMember {
                    dir: dir.clone(),
                    pool: PathBuf::from("/pool"),
                }),
                "refused: /pool/member-1: not a member directory of /pool",
            ),
            (
                Kept::NotOwned(NotOwned::NotADirectory(dir.clone())),
                "refused: /pool/member-1: not a directory",
            ),
            (
                Kept::NotOwned(NotOwned::NotLookedThrough {
                    dir: dir.clone(),
                    why: "Permission denied".to_owned(),
                }),
                "refused: /pool/member-1: not looked through: Permission denied",
            ),
            (Kept::CargoRuns, "busy: a cargo runs in it"),
            (Kept::Seeding, "busy: a seed is copying it"),
            (Kept::Changed, "used or changed since it was measured"),
        ];
        for (kept, line) in table {
            assert_eq!(kept.describe(), line);
        }
        let repository = Kept::NotOwned(NotOwned::HoldsRepository {
            dir,
            repository: PathBuf::from("/pool/member-1/out/checkout"),
        });
        assert!(repository.describe().starts_with(
            "refused: /pool/member-1: holds a git repository (/pool/member-1/out/checkout: "
        ));
    }
}
