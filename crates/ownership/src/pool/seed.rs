//! Filling a new member: from the warmest member no cargo is writing, or
//! from nothing.
//!
//! A new member is made only when every member is leased, so its source is
//! normally held by someone. What makes copying it safe is cargo's own lock
//! ([`natives_system::lock::try_cargo_lock`]): every cargo command that writes a
//! profile directory holds `<profile>/.cargo-lock`, so while the seed holds
//! it (shared) no cargo writes there, and one that starts meanwhile waits
//! for the copy. Only profile directories whose lock is held are copied
//! (with the files at the top of the cache and of each target's directory);
//! one laid out after they were listed is simply not copied. The source's
//! identity is read under the locks: a refresh racing the copy only removes
//! output, and an identity it already forgot is not carried over, so the
//! new member's own refresh cleans every workspace package.
//!
//! The seed never waits for a lease. When every warm member is compiling,
//! it waits for the first to finish (within the caller's budget, never
//! longer than a build from nothing would take), because any compile in
//! progress ends sooner than a build from nothing.

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
    lease::POLL_INTERVAL,
};
use natives_system::lock::{self, CargoLock};

mod report;

pub use report::{SeedReport, SeedStrategy};

/// The points of seeding a member, in order, so tests can kill it at each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeedStep {
    /// The member's lease is held, nothing written.
    Leased,
    /// Its `seeding` record is published.
    Marked,
    /// Its directory exists, empty.
    Created,
    /// The copy's sample is copied: the member is partly filled.
    Sampled,
    /// Every file is copied and its identity recorded.
    Copied,
    /// The filesystem is flushed.
    Synced,
    /// Its `ready` record is written.
    Ready,
}

/// A source whose profile directories no cargo is writing while these
/// locks are held.
struct Source<'a> {
    member: &'a MemberView,
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
pub(super) fn seed(seeding: &Seeding<'_>, observe: &mut dyn FnMut(SeedStep)) -> Result<SeedReport> {
    let started = Instant::now();
    fresh::invalidate_identity(seeding.home, seeding.dest)?;
    if seeding.strategy == SeedStrategy::Cold {
        return Ok(cold("cold asked for", 0, started));
    }
    let Some((source, waited)) = pick_source(seeding)? else {
        return Ok(cold(no_source(seeding), elapsed_ms(started), started));
    };
    let identity =
        fresh::read_identity(&LeaseFiles::new(seeding.home, &source.member.dir).identity);
    let plan = clone::plan(&source.member.dir, &source.parts)?;
    let (method, reason) = choose(seeding, &source, &plan)?;
    let Some(method) = method else {
        return Ok(cold(&reason, waited, started));
    };
    let copied = clone::copy(
        &source.member.dir,
        seeding.dest,
        &plan,
        method,
        seeding.cancel,
        &mut || observe(SeedStep::Sampled),
    )?;
    drop(source.locks);
    if let Copied::TooSlow(projected) = copied {
        empty(seeding.dest)?;
        let why = format!(
            "a copy was projected to take {} ms, longer than a build from nothing ({} ms)",
            projected.as_millis(),
            seeding.cold_fill.unwrap_or_default().as_millis()
        );
        return Ok(cold(&why, waited, started));
    }
    finish_copy(seeding, identity.as_ref(), observe)?;
    Ok(SeedReport {
        strategy: match method {
            Method::Reflink => SeedStrategy::Reflink,
            Method::Copy(_) => SeedStrategy::Copy,
        },
        from: Some(source.member.name.clone()),
        reason,
        files: plan.files(),
        bytes: plan.bytes(),
        waited_ms: waited,
        took_ms: elapsed_ms(started),
    })
}

/// Record the identity the copy came from, then flush it all to disk.
fn finish_copy(
    seeding: &Seeding<'_>,
    identity: Option<&Identity>,
    observe: &mut dyn FnMut(SeedStep),
) -> Result<()> {
    if let Some(identity) = identity {
        fresh::record_identity(seeding.home, seeding.dest, identity)?;
    }
    observe(SeedStep::Copied);
    clone::sync_filesystem(seeding.dest)?;
    observe(SeedStep::Synced);
    Ok(())
}

/// How to copy (`None`: build cold instead), and why.
fn choose(
    seeding: &Seeding<'_>,
    source: &Source<'_>,
    plan: &clone::Plan,
) -> Result<(Option<Method>, String)> {
    let probe = plan.first_file().map(|rel| source.member.dir.join(rel));
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

/// The best source no cargo is writing, waiting for one (bounded by the
/// caller's wait and by a build from nothing) while every one is; with the
/// time waited.
fn pick_source<'a>(seeding: &'a Seeding<'_>) -> Result<Option<(Source<'a>, u64)>> {
    let started = Instant::now();
    let warm: Vec<&MemberView> = seeding
        .sources
        .iter()
        .filter(|m| output_layouts(&m.dir).is_ok_and(|l| !l.is_empty()))
        .collect();
    if warm.is_empty() {
        return Ok(None);
    }
    loop {
        for member in &warm {
            if let Some(source) = lock_source(member)? {
                return Ok(Some((source, elapsed_ms(started))));
            }
        }
        seeding.cancel.check()?;
        let waited_enough = seeding
            .cold_fill
            .is_some_and(|bar| started.elapsed() >= bar);
        match seeding.wait.map(CancelToken::check) {
            None | Some(Err(_)) => return Ok(None),
            Some(Ok(())) if waited_enough => return Ok(None),
            Some(Ok(())) => thread::sleep(POLL_INTERVAL),
        }
    }
}

/// `member` with cargo's lock on each of its profile directories held
/// shared; `None` when any is held by a cargo. Profile directories without
/// a lock file (cargo made none) are not copied.
fn lock_source(member: &MemberView) -> Result<Option<Source<'_>>> {
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
    Ok(Some(Source {
        member,
        parts,
        locks,
    }))
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
