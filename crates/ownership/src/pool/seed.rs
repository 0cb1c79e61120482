//! Filling a new member: from the warmest member, or from nothing.
//!
//! A new member is made only when every member is leased, so its source is
//! normally held by someone building in it, and nobody is to wait: not the
//! seed for the holder's cargo, nor the holder's cargo for the seed. So no
//! lock is taken. The copy is made in two passes ([`clone::update`]): the
//! first copies the source while its holder may be building in it; the
//! second walks the source again, keeps only what is known unchanged since
//! before the first began, and leaves out every unit that changed, which
//! cargo's fingerprints make the new member rebuild (see `clone::InFlux`):
//! what the holder was compiling during the copy is compiled again in the
//! new member, the rest is warm. Only profile directories where cargo made
//! its lock file are copied (with the files at the top of the cache and of
//! each target's directory).
//!
//! The source's identity is read before the first pass and again after the
//! last listing, and carried over only when both read the same: a refresh
//! forgets it before it cleans the workspace's packages and records the new
//! one after, so an identity unchanged across the copy describes every
//! workspace output the last listing found. Otherwise none is carried over,
//! and the new member's own refresh cleans every workspace package.
//!
//! The seed never waits for a lease, for another seed or for a cargo. The
//! source is the best warm member no cargo is writing when the seed starts
//! (it changes least during the copy), else the best warm member.

use std::{
    fs,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};

use super::{
    clone::{self, Copied, Method},
    member::MemberView,
};
use crate::{
    fresh::{self, Identity, output_layouts},
    layout::{LeaseFiles, PoolFiles},
};
use natives_system::{
    crash,
    lock::{self, HeldLock},
};

mod report;

pub use report::{SeedReport, SeedStrategy};

/// The crash points of making a member, in order (see
/// [`natives_system::crash`]): tests kill a real process at each one. The
/// first pass's sample (`clone::SAMPLED`) comes between `CREATED` and
/// `COPIED_ONCE`.
pub(super) mod points {
    /// The member's lease is held, nothing written.
    pub const LEASED: &str = "pool member leased";
    /// Its `seeding` record is published.
    pub const MARKED: &str = "pool member marked seeding";
    /// Its directory exists, empty.
    pub const CREATED: &str = "pool member directory created";
    /// The first pass is done; the source is about to be walked again.
    pub const COPIED_ONCE: &str = "pool seed first pass done";
    /// The copy is brought up to date and its identity recorded.
    pub const COPIED: &str = "pool seed copied";
    /// The filesystem is flushed.
    pub const SYNCED: &str = "pool seed synced";
    /// Its `ready` record is written.
    pub const READY: &str = "pool member ready";
}

/// What of a source a copy takes.
pub(super) struct Parts {
    /// The files at the top of the cache and of each target's directory,
    /// and the profile directories.
    pub all: Vec<PathBuf>,
    /// The profile directories (where cargo made its lock file).
    pub profiles: Vec<PathBuf>,
}

/// What a seed is given.
pub(super) struct Seeding<'a> {
    pub home: &'a Path,
    pub dest: &'a Path,
    pub strategy: SeedStrategy,
    /// Ready members, best source first.
    pub sources: &'a [MemberView],
    /// What a build from nothing took here, if measured.
    pub cold_fill: Option<Duration>,
    /// The pool's files (each member's reading lock).
    pub files: &'a PoolFiles,
    pub cancel: &'a CancelToken,
}

/// Fill `seeding.dest` (which exists and is empty) and record the identity
/// it was built from.
pub(super) fn seed(seeding: &Seeding<'_>) -> Result<SeedReport> {
    let started = Instant::now();
    fresh::invalidate_identity(seeding.home, seeding.dest)?;
    if seeding.strategy == SeedStrategy::Cold {
        return Ok(cold("cold asked for", started));
    }
    let Some((member, _reading)) = pick_source(seeding)? else {
        return Ok(cold(no_source(seeding), started));
    };
    let identity_file = LeaseFiles::new(seeding.home, &member.dir).identity;
    let identity = fresh::read_identity(&identity_file);
    let Some(parts) = source_parts(&member.dir)? else {
        let why = format!("{} holds no build cargo locked", member.name);
        return Ok(cold(&why, started));
    };
    let first = match first_pass(seeding, member, &parts.all)? {
        Ok(first) => first,
        Err(why) => return Ok(cold(&why, started)),
    };
    crash::point(points::COPIED_ONCE);
    let list = || clone::plan(&member.dir, &parts.all);
    let places = clone::Places {
        source: &member.dir,
        dest: seeding.dest,
        profiles: &parts.profiles,
        list: &list,
    };
    let copied = (&first.plan, &first.copied, first.since);
    let (listed, left_out) = clone::update(&places, copied, first.method, seeding.cancel)?;
    let unchanged =
        identity.filter(|was| fresh::read_identity(&identity_file).as_ref() == Some(was));
    finish_copy(seeding, unchanged.as_ref())?;
    Ok(SeedReport {
        strategy: match first.method {
            Method::Reflink => SeedStrategy::Reflink,
            Method::Copy(_) => SeedStrategy::Copy,
        },
        from: Some(member.name.clone()),
        reason: first.reason,
        files: listed.files() - left_out.files,
        bytes: listed.bytes() - left_out.bytes,
        left_out: left_out.files,
        took_ms: elapsed_ms(started),
    })
}

/// What the first pass copied, without the source's lock.
struct FirstPass {
    /// When it began, by the filesystem's clock.
    since: clone::Since,
    plan: clone::Plan,
    copied: clone::Stamps,
    method: Method,
    /// Why this method.
    reason: String,
}

/// Copy `member` into the new member without its lock; or why not (a
/// build from nothing is faster), with the new member emptied again.
fn first_pass(
    seeding: &Seeding<'_>,
    member: &MemberView,
    parts: &[PathBuf],
) -> Result<std::result::Result<FirstPass, String>> {
    let since = clone::fs_clock(seeding.dest)?;
    let plan = clone::plan(&member.dir, parts)?;
    let (method, reason) = choose(seeding, &member.dir, &plan)?;
    let Some(method) = method else {
        return Ok(Err(reason));
    };
    let copied = clone::copy(
        &member.dir,
        seeding.dest,
        &plan.files_only(),
        method,
        seeding.cancel,
    )?;
    Ok(match copied {
        Copied::Whole(copied) => Ok(FirstPass {
            since,
            plan,
            copied,
            method,
            reason,
        }),
        Copied::TooSlow(projected) => {
            empty(seeding.dest)?;
            Err(too_slow(seeding, projected))
        }
    })
}

fn too_slow(seeding: &Seeding<'_>, projected: Duration) -> String {
    format!(
        "a copy was projected to take {} ms, longer than a build from nothing ({} ms)",
        projected.as_millis(),
        seeding.cold_fill.unwrap_or_default().as_millis()
    )
}

/// Record the identity the copy came from, then flush it all to disk.
fn finish_copy(seeding: &Seeding<'_>, identity: Option<&Identity>) -> Result<()> {
    if let Some(identity) = identity {
        fresh::record_identity(seeding.home, seeding.dest, identity)?;
    }
    crash::point(points::COPIED);
    clone::sync_filesystem(seeding.dest)?;
    crash::point(points::SYNCED);
    Ok(())
}

/// How to copy (`None`: build cold instead), and why.
fn choose(
    seeding: &Seeding<'_>,
    source: &Path,
    plan: &clone::Plan,
) -> Result<(Option<Method>, String)> {
    let probe = plan.first_file().map(|rel| source.join(rel));
    let reflinks = match &probe {
        Some(file) => clone::reflink_works(file, seeding.dest)?,
        None => false,
    };
    Ok(match seeding.strategy {
        SeedStrategy::Reflink if !reflinks => return Err(clone::no_reflink(seeding.dest)),
        SeedStrategy::Reflink => (Some(Method::Reflink), "reflink asked for".to_owned()),
        SeedStrategy::Copy => (Some(Method::Copy(None)), "copy asked for".to_owned()),
        _ if reflinks => (
            Some(Method::Reflink),
            "the filesystem clones files".to_owned(),
        ),
        _ => match seeding.cold_fill {
            Some(bar) => (
                Some(Method::Copy(Some(bar))),
                format!(
                    "no reflinks here; a copy was projected faster than a build from nothing ({} ms)",
                    bar.as_millis()
                ),
            ),
            None => (
                Some(Method::Copy(None)),
                "no reflinks here; no build from nothing measured yet to weigh a copy against"
                    .to_owned(),
            ),
        },
    })
}

/// The best warm member no cargo is writing now, else the best warm
/// member, with its reading lock held shared (so no prune removes it
/// while it is copied; one being removed is passed over); `None` when no
/// member is warm.
fn pick_source<'a>(seeding: &'a Seeding<'_>) -> Result<Option<(&'a MemberView, HeldLock)>> {
    let mut warm = Vec::new();
    for member in seeding.sources {
        if !output_layouts(&member.dir).is_ok_and(|l| !l.is_empty()) {
            continue;
        }
        if let Some(reading) = lock::try_shared(&seeding.files.reading(&member.name))? {
            warm.push((member, reading));
        }
    }
    for at in 0..warm.len() {
        if idle(warm[at].0)? {
            return Ok(Some(warm.swap_remove(at)));
        }
    }
    Ok(warm.into_iter().next())
}

/// Whether no cargo holds the lock of any of `member`'s profile
/// directories now.
fn idle(member: &MemberView) -> Result<bool> {
    let Some(parts) = source_parts(&member.dir)? else {
        return Ok(false);
    };
    for profile in &parts.profiles {
        let lock = member.dir.join(profile).join(".cargo-lock");
        match lock::try_cargo_lock(&lock, false) {
            Ok(Some(_)) => {}
            Ok(None) => return Ok(false),
            // Removed since it was seen: a cargo clean is at work.
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(false),
            Err(err) => return Err(err),
        }
    }
    Ok(true)
}

/// What of the cache `dir` a copy takes: the profile directories where
/// cargo made its lock file, with the files at the top of the cache and of
/// each target's directory; `None` when there is no such profile
/// directory (a profile directory cargo never locked holds no build).
pub(super) fn source_parts(dir: &Path) -> Result<Option<Parts>> {
    let layouts = match output_layouts(dir) {
        Ok(layouts) => layouts,
        Err(err) if err.kind() == ErrorKind::Unsupported => return Ok(None),
        Err(err) => return Err(err),
    };
    let mut all = top_files(dir, Path::new(""))?;
    let mut profiles = Vec::new();
    for layout in layouts {
        let profile = layout.dir(Path::new(""));
        if !dir.join(&profile).join(".cargo-lock").is_file() {
            continue;
        }
        if let Some(target) = &layout.target {
            all.extend(top_files(dir, Path::new(target))?);
        }
        all.push(profile.clone());
        profiles.push(profile);
    }
    if profiles.is_empty() {
        return Ok(None);
    }
    all.sort();
    all.dedup();
    Ok(Some(Parts { all, profiles }))
}

/// The regular files directly in `root/rel` (relative to `root`).
fn top_files(root: &Path, rel: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join(rel);
    let mut files = Vec::new();
    for item in fs::read_dir(&dir).map_err(|err| Error::io(&dir, err))? {
        let item = item.map_err(|err| Error::io(&dir, err))?;
        if item
            .file_type()
            .map_err(|err| Error::io(&dir, err))?
            .is_file()
        {
            files.push(rel.join(item.file_name()));
        }
    }
    Ok(files)
}

/// Remove everything in `dir` (a copy given up), keeping `dir`.
fn empty(dir: &Path) -> Result<()> {
    for item in fs::read_dir(dir).map_err(|err| Error::io(dir, err))? {
        let path = item.map_err(|err| Error::io(dir, err))?.path();
        let removed = if path.is_dir() && !path.is_symlink() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(|err| Error::io(&path, err))?;
    }
    Ok(())
}

/// Why no member could be copied.
fn no_source(seeding: &Seeding<'_>) -> &'static str {
    if seeding.sources.is_empty() {
        "no ready member to copy"
    } else {
        "every ready member was empty"
    }
}

fn cold(why: &str, started: Instant) -> SeedReport {
    SeedReport {
        strategy: SeedStrategy::Cold,
        from: None,
        reason: why.to_owned(),
        files: 0,
        bytes: 0,
        left_out: 0,
        took_ms: elapsed_ms(started),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}
