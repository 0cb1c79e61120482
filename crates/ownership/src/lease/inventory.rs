//! What is registered right now: every lease file on disk (the cache
//! lease's and the output lease's), and every cache directory ever leased
//! under the home with its last known owner.
//!
//! A lease record exists only while its lease is held (release deletes it),
//! so a catalog entry per cache directory remembers the last owner after
//! release. The catalog is written only by the lease's holder, so it needs no
//! lock of its own.

use std::{collections::BTreeSet, fs, io, path::PathBuf};

use natives_core::{Error, Result};
use serde::{Deserialize, Serialize};

use super::{
    record::{LeaseRecord, Owner, RECORD_VERSION, Status},
    slot::Slot,
    store::Leases,
};
use crate::{
    fresh::{self, Identity},
    layout::{self, LeaseFiles},
};
use natives_system::{durable, process::now_ms};

/// One cache directory's state, as registered under the home. Every lease
/// file is reported, including ones nobody can act on, because this answers
/// "what is registered", not "what can safely be touched".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The cache directory (`None` if neither record nor catalog names it).
    pub dir: Option<PathBuf>,
    /// The stable name of its records.
    pub slug: String,
    /// Where its lease stands.
    pub status: EntryStatus,
    /// The current holder, or the last known one (process cleanup's, for a
    /// cache held only through its output lease).
    pub owner: Option<Owner>,
    /// When the current or last holder acquired it (ms since the epoch).
    pub since_ms: Option<u64>,
    /// When the last holder released it, if it was released.
    pub released_at_ms: Option<u64>,
    /// Whether process cleanup (or maintenance) holds its output lease.
    pub outputs_held: bool,
    /// The source last built into it, if recorded.
    pub identity: Option<Identity>,
}

/// [`Entry::status`]'s possible values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryStatus {
    /// Nobody holds it; `owner` is the last known one, from the catalog.
    Free,
    /// A live owner holds it.
    Active,
    /// Its holder died without releasing; the next acquirer reclaims it.
    Stale,
    /// Its record cannot be read (why).
    Unknown(String),
}

impl EntryStatus {
    /// The status as the word every front shows (as [`Status::name`]).
    pub fn name(&self) -> &'static str {
        match self {
            EntryStatus::Free => "free",
            EntryStatus::Active => "active",
            EntryStatus::Stale => "stale",
            EntryStatus::Unknown(_) => "unknown",
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogRecord {
    version: u32,
    dir: PathBuf,
    last_owner: Owner,
    acquired_at_ms: u64,
    released_at_ms: Option<u64>,
}

impl Leases {
    /// Every cache directory registered under this home, in slug order.
    pub fn inventory(&self) -> Result<Vec<Entry>> {
        slugs(self.home())?
            .into_iter()
            .map(|slug| self.entry(slug))
            .collect()
    }

    fn entry(&self, slug: String) -> Result<Entry> {
        let files = LeaseFiles::for_slug(self.home(), &slug);
        let catalog = read_catalog(&files);
        let outputs = Slot::output(&files, self.trust()).status()?;
        let outputs_held = outputs.in_use();
        let mut entry = Entry {
            dir: catalog.as_ref().map(|c| c.dir.clone()),
            slug,
            status: EntryStatus::Free,
            owner: catalog.as_ref().map(|c| c.last_owner.clone()),
            since_ms: catalog.as_ref().map(|c| c.acquired_at_ms),
            released_at_ms: catalog.as_ref().and_then(|c| c.released_at_ms),
            outputs_held,
            identity: fresh::read_identity(&files.identity),
        };
        match Slot::cache(&files, self.trust()).status()? {
            Status::Free => {}
            Status::Active(record) => {
                entry.status = EntryStatus::Active;
                entry.describe_holder(record);
            }
            Status::Stale(record) => {
                entry.status = EntryStatus::Stale;
                entry.describe_holder(Some(record));
            }
            Status::Unknown(why) => entry.status = EntryStatus::Unknown(why),
        }
        entry.describe_cleanup(outputs);
        Ok(entry)
    }
}

impl Entry {
    fn describe_holder(&mut self, record: Option<LeaseRecord>) {
        self.released_at_ms = None;
        if let Some(record) = record {
            self.dir = Some(record.dir);
            self.owner = Some(record.owner);
            self.since_ms = Some(record.acquired_at_ms);
        }
    }

    /// A cache registered only through its output lease (process cleanup
    /// of a cache no build leased under this home) is named, and its owner
    /// told, by the output lease's record.
    fn describe_cleanup(&mut self, outputs: Status) {
        let record = match outputs {
            Status::Active(record) => record,
            Status::Stale(record) => Some(record),
            Status::Free | Status::Unknown(_) => None,
        };
        if let Some(record) = record.filter(|_| self.dir.is_none() && self.owner.is_none()) {
            self.dir = Some(record.dir);
            self.owner = Some(record.owner);
            self.since_ms = Some(record.acquired_at_ms);
        }
    }
}

/// Remember `record`'s owner as the cache's last known one.
pub(super) fn note_acquire(files: &LeaseFiles, record: &LeaseRecord) -> Result<()> {
    write_catalog(files, record, None)
}

/// Remember that `record`'s owner released the cache just now.
pub(super) fn note_release(files: &LeaseFiles, record: &LeaseRecord) -> Result<()> {
    write_catalog(files, record, Some(now_ms()))
}

/// Forget the cache: it was removed whole.
pub(super) fn forget(files: &LeaseFiles) -> Result<()> {
    durable::remove(&files.catalog).map(drop)
}

fn write_catalog(
    files: &LeaseFiles,
    record: &LeaseRecord,
    released_at_ms: Option<u64>,
) -> Result<()> {
    let catalog = CatalogRecord {
        version: RECORD_VERSION,
        dir: record.dir.clone(),
        last_owner: record.owner.clone(),
        acquired_at_ms: record.acquired_at_ms,
        released_at_ms,
    };
    let mut bytes = serde_json::to_vec_pretty(&catalog).expect("a catalog record serialises");
    bytes.push(b'\n');
    durable::replace(&files.catalog, &bytes)
}

/// The catalog entry, if there is a readable one: it is only a memory of
/// the last owner, so an unreadable one is reported as absent.
fn read_catalog(files: &LeaseFiles) -> Option<CatalogRecord> {
    let bytes = durable::read(&files.catalog).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// The records whose name gives a cache directory's slug: the cache lease's
/// and the output lease's (a cache process cleanup holds may never have had
/// a build lease here), and catalog entries.
const RECORD_SUFFIXES: [&str; 2] = [".output.json", ".json"];

/// The slugs of every lease record (cache or output) and catalog entry
/// under `home`.
fn slugs(home: &std::path::Path) -> Result<BTreeSet<String>> {
    let mut slugs = BTreeSet::new();
    for dir in [layout::leases_dir(home), layout::catalog_dir(home)] {
        let listing = match fs::read_dir(&dir) {
            Ok(listing) => listing,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(Error::io(&dir, err)),
        };
        for item in listing {
            let name = item.map_err(|err| Error::io(&dir, err))?.file_name();
            let Some(name) = name.to_str() else { continue };
            let slug = RECORD_SUFFIXES
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix).filter(|slug| is_slug(slug)));
            if let Some(slug) = slug {
                slugs.insert(slug.to_owned());
            }
        }
    }
    Ok(slugs)
}

fn is_slug(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
