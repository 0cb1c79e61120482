//! A run's archived seat tips (`natives fold RUN --show-seats`), and
//! rebuilding one (`--restore-seat HEAD --dest DIR`).
//!
//! Both read the run's eviction records and validate every archive they
//! name (in a fresh repository, as [`Archive::open`] does), so they work
//! after the original repository is gone and trust nothing unchecked: a
//! record naming another run or seat than its file, or an archive of other
//! commits than its record, is an error (`EBADMSG`). Neither folds nor
//! retires the run, nor writes anything but the new directory.

use std::path::{Path, PathBuf};

use natives_core::{CancelToken, Error, ErrorKind, Result};

use super::record::{self, EvictionRecord, Phase};
use crate::{
    evidence::{Archive, Restored},
    git::Git,
    registry::Registry,
};

/// One archived tip of a run's copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatTip {
    /// The copy's seat name (`review-1`, `candidate-A`).
    pub seat: String,
    /// Where the copy was.
    pub source: PathBuf,
    /// The commit.
    pub head: String,
    /// Its tree.
    pub tree: String,
    /// Where the copy showed it (`HEAD`, `HEAD@{2}`, `ORIG_HEAD`, `base`).
    pub seen_as: Vec<String>,
    /// Whether it was the copy's `HEAD` when archived (else historical).
    pub current: bool,
    /// The bytes of the archived patch from the base, for the current tip.
    pub patch_bytes: Option<u64>,
    /// Where its eviction stands.
    pub phase: Phase,
    /// The archive holding it.
    pub archive: PathBuf,
}

/// Every archived tip of `run`'s copies, historical ones included, in seat
/// order. Errors: the run never recorded (`ENOENT`), a record or archive
/// failing validation (`EBADMSG`).
pub fn show(
    registry: &Registry,
    git: &Git,
    run: &str,
    cancel: &CancelToken,
) -> Result<Vec<SeatTip>> {
    let mut tips = Vec::new();
    for (record, archive) in validated(registry, git, run, cancel)? {
        let manifest = archive.manifest();
        for tip in &manifest.tips {
            let current = tip.commit == manifest.head;
            tips.push(SeatTip {
                seat: record.seat.clone(),
                source: record.path.clone(),
                head: tip.commit.clone(),
                tree: tip.tree.clone(),
                seen_as: tip.seen_as.clone(),
                current,
                patch_bytes: current.then(|| archive.patch().len() as u64),
                phase: record.phase,
                archive: archive.dir().to_owned(),
            });
        }
    }
    Ok(tips)
}

/// Rebuild the archived tip `head` (a full commit id) of one of `run`'s
/// copies as a new repository at `dest` (which must not exist). Errors: as
/// [`show`]; no archive of the run holds `head` (`ENOENT`); `dest` exists
/// (`EEXIST`).
pub fn restore(
    registry: &Registry,
    git: &Git,
    run: &str,
    head: &str,
    dest: &Path,
    cancel: &CancelToken,
) -> Result<Restored> {
    let full = matches!(head.len(), 40 | 64) && head.bytes().all(|b| b.is_ascii_hexdigit());
    if !full {
        return Err(Error::invalid(format!(
            "{head:?}: a seat is restored by its full recorded head (40 or 64 hex digits)"
        )));
    }
    let head = head.to_ascii_lowercase();
    for (_, archive) in validated(registry, git, run, cancel)? {
        if archive.manifest().tips.iter().any(|tip| tip.commit == head) {
            return archive.restore_tip(git, &head, dest, cancel);
        }
    }
    Err(Error::new(
        ErrorKind::NotFound,
        format!("run {run}: no archived seat tip {head}"),
    ))
}

/// Every eviction record of `run` with its archives, each checked.
fn validated(
    registry: &Registry,
    git: &Git,
    run: &str,
    cancel: &CancelToken,
) -> Result<Vec<(EvictionRecord, Archive)>> {
    registry.show(run)?;
    let mut out = Vec::new();
    for (path, record) in record::all(&registry.artifacts(run))? {
        let record = record?;
        let expected = record::path_of(&registry.artifacts(run), &record.seat);
        if record.run != run || expected != path {
            return Err(corrupt(&path, "names another run or seat than its file"));
        }
        for dir in &record.archives {
            if !dir.exists() && record.phase == Phase::Pending {
                continue;
            }
            let archive = Archive::open(git, dir, cancel)?;
            let manifest = archive.manifest();
            if manifest.head != record.head || manifest.base != record.base {
                return Err(corrupt(dir, "is not the archive its eviction record names"));
            }
            out.push((record.clone(), archive));
        }
    }
    Ok(out)
}

fn corrupt(path: &Path, why: &str) -> Error {
    Error::new(ErrorKind::Corrupt, format!("{}: {why}", path.display()))
}
