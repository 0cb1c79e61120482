//! Filling a new member: from the warmest member no cargo is writing, or
//! from nothing.
//!
//! A new member is made only when every member is leased, so its source is
//! normally held by someone building in it. What makes the copy safe is
//! cargo's own lock ([`natives_system::lock::try_cargo_lock`]): every cargo
//! command that writes a profile directory holds `<profile>/.cargo-lock`.
//! Holding it (shared) for a whole copy would make the source's holder wait
//! for every seed made from its member (seconds for a plain copy of a
//! large target directory, once per seed), so the copy is made in two
//! passes ([`clone::update`]): the first without the lock, while the holder
//! builds; the second under it, copying anew only what changed or may have
//! changed during the first, and removing what the source no longer holds.
//! A cargo that starts meanwhile waits for that second pass only. Only
//! profile directories whose lock is held are kept (with the files at the
//! top of the cache and of each target's directory). The source's identity
//! is read under the locks: a refresh racing the copy only removes output,
//! and an identity it already forgot is not carried over, so the new
//! member's own refresh cleans every workspace package.
//!
//! The seed never waits for a lease, nor for another seed. The source is
//! the best warm member no cargo is writing when the seed starts, else the
//! best warm member. When a cargo holds the source's lock at the second
//! pass, the seed waits for it to finish (within the caller's budget, never
//! longer than a build from nothing would take), because any compile in
//! progress ends sooner than a build from nothing; it looks often, so that
//! it takes the lock between two cargo commands of the holder.

use std::{
    fs,
    path::{Path, PathBuf},
    thread,
    time::{Duration, Instant},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};

use super::{
    clone::{self, Copied, Method},
    member::MemberView,
};
use crate::{
    fresh::{self, Identity, output_layouts},
    layout::LeaseFiles,
};
use natives_system::{
    crash,
    lock::{self, CargoLock},
};

mod report;

pub use report::{SeedReport, SeedStrategy};

/// The crash points of making a member, in order (see
/// [`natives_system::crash`]): tests kill a real process at each one. The
/// first pass's sample (`clone::SAMPLED`) comes between `CREATED` and
/// `LOCKED`.
pub(super) mod points {
    /// The member's lease is held, nothing written.
    pub const LEASED: &str = "pool member leased";
    /// Its `seeding` record is published.
    pub const MARKED: &str = "pool member marked seeding";
    /// Its directory exists, empty.
    pub const CREATED: &str = "pool member directory created";
    /// The source's lock is held for the second pass.
    pub const LOCKED: &str = "pool seed source locked";
    /// Every file is copied and its identity recorded.
    pub const COPIED: &str = "pool seed copied";
    /// The filesystem is flushed.
    pub const SYNCED: &str = "pool seed synced";
    /// Its `ready` record is written.
    pub const READY: &str = "pool member ready";
}

/// How often the second pass looks at the source's lock while a cargo
/// holds it: often enough to take it in the gap between two cargo commands
/// of its holder (each spends far longer than this starting up).
const LOCK_POLL: Duration = Duration::from_millis(5);

/// A source whose profile directories no cargo is writing while these
/// locks are held.
struct Source {
    parts: Vec<PathBuf>,
    locks: Vec<CargoLock>,
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
    /// Bounds the wait for a source; `None`: no wait.
    pub wait: Option<&'a CancelToken>,
    pub cancel: &'a CancelToken,
}

/// Fill `seeding.dest` (which exists and is empty) and record the identity
/// it was built from.
pub(super) fn seed(seeding: &Seeding<'_>) -> Result<SeedReport> {
    let started = Instant::now();
    fresh::invalidate_identity(seeding.home, seeding.dest)?;
    if seeding.strategy == SeedStrategy::Cold {
        return Ok(cold("cold asked for", 0, started));
    }
    let Some(member) = pick_source(seeding)? else {
        return Ok(cold(no_source(seeding), 0, started));
    };
    let first = match first_pass(seeding, member)? {
        Ok(first) => first,
        Err(why) => return Ok(cold(&why, 0, started)),
    };
    let Some((source, waited)) = lock_for_update(seeding, member)? else {
        empty(seeding.dest)?;
        let why = format!("{} was compiling past the wait", member.name);
        return Ok(cold(&why, elapsed_ms(started), started));
    };
    crash::point(points::LOCKED);
    let identity = fresh::read_identity(&LeaseFiles::new(seeding.home, &member.dir).identity);
    let plan = clone::plan(&member.dir, &source.parts)?;
    let places = (member.dir.as_path(), seeding.dest);
    let copied = (&first.plan, &first.copied, first.since);
    clone::update(places, copied, &plan, first.method, seeding.cancel)?;
    drop(source.locks);
    finish_copy(seeding, identity.as_ref())?;
    Ok(SeedReport {
        strategy: match first.method {
            Method::Reflink => SeedStrategy::Reflink,
            Method::Copy(_) => SeedStrategy::Copy,
        },
        from: Some(member.name.clone()),
        reason: first.reason,
        files: plan.files(),
        bytes: plan.bytes(),
        waited_ms: waited,
        took_ms: elapsed_ms(started),
    })
}

/// What the first pass copied, without the source's lock.
struct FirstPass {
    /// When it began, by the filesystem's clock.
    since: (i64, i64),
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
) -> Result<std::result::Result<FirstPass, String>> {
    let since = clone::fs_clock(seeding.dest)?;
    let plan = clone::plan(&member.dir, &unlocked_parts(&member.dir)?)?;
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
/// member; `None` when no member is warm.
fn pick_source<'a>(seeding: &'a Seeding<'_>) -> Result<Option<&'a MemberView>> {
    let warm: Vec<&MemberView> = seeding
        .sources
        .iter()
        .filter(|m| output_layouts(&m.dir).is_ok_and(|l| !l.is_empty()))
        .collect();
    for member in &warm {
        if lock_source(member)?.is_some() {
            return Ok(Some(member));
        }
    }
    Ok(warm.first().copied())
}

/// What a copy without the source's lock takes: the files at the top of
/// the cache and of each target's directory, and every profile directory.
fn unlocked_parts(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut parts = top_files(dir, Path::new(""))?;
    for layout in output_layouts(dir)? {
        if let Some(target) = &layout.target {
            parts.extend(top_files(dir, Path::new(target))?);
        }
        parts.push(layout.dir(Path::new("")));
    }
    parts.sort();
    parts.dedup();
    Ok(parts)
}

/// `member`'s profile directories locked against cargo for the second
/// pass, waiting while a cargo writes them (bounded by the caller's wait
/// and by a build from nothing); with the time waited. `None` when the
/// wait ends first.
fn lock_for_update(seeding: &Seeding<'_>, member: &MemberView) -> Result<Option<(Source, u64)>> {
    let started = Instant::now();
    loop {
        if let Some(source) = lock_source(member)? {
            return Ok(Some((source, elapsed_ms(started))));
        }
        seeding.cancel.check()?;
        let waited_enough = seeding
            .cold_fill
            .is_some_and(|bar| started.elapsed() >= bar);
        match seeding.wait.map(CancelToken::check) {
            None | Some(Err(_)) => return Ok(None),
            Some(Ok(())) if waited_enough => return Ok(None),
            Some(Ok(())) => thread::sleep(LOCK_POLL),
        }
    }
}

/// `member` with cargo's lock on each of its profile directories held
/// shared; `None` when any is held by a cargo. Profile directories without
/// a lock file (cargo made none) are not copied.
fn lock_source(member: &MemberView) -> Result<Option<Source>> {
    let layouts = match output_layouts(&member.dir) {
        Ok(layouts) => layouts,
        Err(err) if err.kind() == ErrorKind::Unsupported => return Ok(None),
        Err(err) => return Err(err),
    };
    let mut locks = Vec::new();
    let mut parts = top_files(&member.dir, Path::new(""))?;
    for layout in layouts {
        let dir = layout.dir(Path::new(""));
        match lock::try_cargo_lock(&member.dir.join(&dir).join(".cargo-lock"), false) {
            Ok(Some(lock)) => locks.push(lock),
            Ok(None) => return Ok(None),
            Err(err) if err.kind() == ErrorKind::NotFound => continue,
            Err(err) => return Err(err),
        }
        if let Some(target) = &layout.target {
            parts.extend(top_files(&member.dir, Path::new(target))?);
        }
        parts.push(dir);
    }
    if locks.is_empty() {
        return Ok(None);
    }
    parts.sort();
    parts.dedup();
    Ok(Some(Source { parts, locks }))
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
        "every ready member was compiling or empty"
    }
}

fn cold(why: &str, waited_ms: u64, started: Instant) -> SeedReport {
    SeedReport {
        strategy: SeedStrategy::Cold,
        from: None,
        reason: why.to_owned(),
        files: 0,
        bytes: 0,
        waited_ms,
        took_ms: elapsed_ms(started),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}
