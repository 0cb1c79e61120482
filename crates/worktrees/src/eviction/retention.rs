//! `retention.json`: what one pass unlinked and added, estimated honestly.
//!
//! Source bytes count the copy's regular files only (not its git
//! administration, not directory blocks). Logical bytes are every unlinked
//! name's size. Allocated bytes are `st_blocks * 512`, counted once per
//! inode and only when every link of it was in the copy: a hard link kept
//! elsewhere keeps its blocks. Open handles, shared extents, compression
//! and concurrent writers make even that an estimate, so the report never
//! claims space was freed; the volume's free space before and after is
//! reported beside it, as observed, not attributed to the pass.

use std::{
    collections::{BTreeMap, HashMap},
    fs,
    os::unix::fs::MetadataExt,
    path::Path,
};

use natives_core::{Error, Result};
use serde::Serialize;

use super::record::Entry;

/// The file each pass writes, in the registry's directory.
pub const RETENTION_FILE: &str = "retention.json";

/// The bytes one copy's eviction unlinks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Unlinked {
    pub logical: u64,
    pub allocated: u64,
}

/// The regular files of `inventory`, as [`Unlinked`] counts them.
pub(super) fn unlinked(inventory: &[Entry]) -> Unlinked {
    let files = inventory.iter().filter(|entry| !entry.dir);
    let mut links: HashMap<(u64, u64), (u64, u64, u64)> = HashMap::new();
    let mut logical = 0;
    for entry in files {
        logical += entry.size;
        let seen = links
            .entry((entry.dev, entry.ino))
            .or_insert((0, entry.nlink, entry.blocks));
        seen.0 += 1;
    }
    let allocated = links
        .values()
        .filter(|(names_in_copy, nlink, _)| names_in_copy >= nlink)
        .map(|(_, _, blocks)| blocks * 512)
        .sum();
    Unlinked { logical, allocated }
}

/// The evidence one eviction added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Growth {
    pub logical: u64,
    pub allocated: u64,
}

impl Growth {
    /// The size of the archive at `dir`: its files' bytes and blocks.
    pub(super) fn of(dir: &Path) -> Result<Growth> {
        let mut growth = Growth::default();
        let mut pending = vec![dir.to_owned()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir).map_err(|err| Error::io(&dir, err))? {
                let path = entry.map_err(|err| Error::io(&dir, err))?.path();
                let meta = fs::symlink_metadata(&path).map_err(|err| Error::io(&path, err))?;
                if meta.is_dir() {
                    pending.push(path);
                } else {
                    growth.logical += meta.len();
                    growth.allocated += meta.blocks() * 512;
                }
            }
        }
        Ok(growth)
    }
}

/// One pass's accounting, as `retention.json` holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Retention {
    /// When the pass ended, in milliseconds since the epoch.
    pub at_ms: u64,
    /// Runs visited.
    pub runs_visited: u64,
    /// Bytes of the source files unlinked: every name's size.
    pub source_logical_bytes: u64,
    /// Estimated allocated blocks of the source files unlinked (×512),
    /// hard links counted only when their last link went.
    pub source_allocated_bytes: u64,
    /// Bytes of evidence published.
    pub evidence_logical_bytes: u64,
    /// Allocated blocks of evidence published (×512).
    pub evidence_allocated_bytes: u64,
    /// Copies evicted.
    pub copies_evicted: u64,
    /// Empty run roots removed.
    pub empty_roots_removed: u64,
    /// Copies retained, by each reason given (one copy may count under
    /// several).
    pub blockers: BTreeMap<String, u64>,
    /// The home volume's available bytes when the pass began, as observed.
    pub observed_free_bytes_before: Option<u64>,
    /// The same when it ended: the change is not attributed to the pass
    /// (others write to the volume too).
    pub observed_free_bytes_after: Option<u64>,
}

impl Retention {
    pub(super) fn add_unlinked(&mut self, logical: u64, allocated: u64) {
        self.copies_evicted += 1;
        self.source_logical_bytes += logical;
        self.source_allocated_bytes += allocated;
    }

    pub(super) fn add_growth(&mut self, growth: Growth) {
        self.evidence_logical_bytes += growth.logical;
        self.evidence_allocated_bytes += growth.allocated;
    }
}

/// The bytes available on the volume holding `path`, if it can be told.
pub(super) fn free_bytes(path: &Path) -> Option<u64> {
    let stat = nix::sys::statvfs::statvfs(path).ok()?;
    Some(stat.blocks_available() * stat.fragment_size())
}
