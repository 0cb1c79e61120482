//! The machine-wide claims store: one record per zone under the natives home.
//!
//! A zone names one memory folder: `memory-dir:<first 32 hex digits of
//! SHA-256 of its dir_id>`. Its record (`claims/memory-dir-<hex>.json`) maps
//! each claiming agent's uid to when, from which channel store, for which
//! account and as which OS user it claimed. Writers of a zone are serialised
//! by an exclusive lock ([`lock`]) on the zone's lock file, waited for only until the
//! caller's deadline and never longer than [`LOCK_WAIT_LIMIT`]; the record
//! itself is replaced through [`durable`], so readers need no
//! lock and never see a torn record. Fields this version does not know are
//! kept on every rewrite, so an older and a newer natives can share a store.
//!
//! Nothing here guesses: a record that does not parse is an error (and stays
//! exactly as it is on disk), and a store on a filesystem whose locks cannot
//! be trusted is refused, because a claim that two writers could interleave
//! proves nothing.

use std::{
    collections::BTreeMap,
    fs, io,
    path::{Path, PathBuf},
    time::Duration,
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::layout::claims_dir;
use natives_system::{
    durable,
    lock::{self, LockTrust},
    paths::slug,
};

/// How zone names begin.
pub const ZONE_PREFIX: &str = "memory-dir:";

/// The longest any caller waits for a zone lock.
pub const LOCK_WAIT_LIMIT: Duration = Duration::from_secs(5);

/// One memory folder's name in the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Zone(String);

impl Zone {
    /// The zone of the folder whose canonical id is `dir_id`.
    pub fn of(dir_id: &Path) -> Zone {
        Zone(format!("{ZONE_PREFIX}{}", &slug(dir_id)[..32]))
    }

    /// A zone given by name (`memory-dir:` and 32 hex digits), if it is one.
    pub fn parse(name: &str) -> Option<Zone> {
        let hex = name.strip_prefix(ZONE_PREFIX)?;
        let valid = hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        valid.then(|| Zone(name.to_owned()))
    }

    /// The zone's name.
    pub fn name(&self) -> &str {
        &self.0
    }

    fn file_stem(&self) -> String {
        self.0.replace(':', "-")
    }
}

/// The two files of one zone.
#[derive(Clone, Debug)]
pub struct ZoneFiles {
    /// Held exclusively by whoever rewrites the record (never deleted).
    pub lock: PathBuf,
    /// The zone's claims.
    pub record: PathBuf,
}

impl ZoneFiles {
    /// The files of `zone` under `home`.
    pub fn new(home: &Path, zone: &Zone) -> ZoneFiles {
        let dir = claims_dir(home);
        let stem = zone.file_stem();
        ZoneFiles {
            lock: dir.join(format!("{stem}.lock")),
            record: dir.join(format!("{stem}.json")),
        }
    }
}

/// One agent's claim on a folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// When it was last made, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The channel store that made it: the only one that may prune it.
    pub origin: String,
    /// The account the agent ran under.
    #[serde(default)]
    pub account: String,
    /// The OS user that made it, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<u32>,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Claim {
    /// Whether this claim, held under `uid`, belongs to someone other than
    /// agent `me` running as OS user `user`.
    pub fn is_foreign(&self, uid: &str, me: &str, user: u32) -> bool {
        uid != me || self.user.is_some_and(|u| u != user)
    }
}

/// One zone's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZoneRecord {
    /// The zone's name.
    pub zone: String,
    /// The folder's canonical id when the record was created, for humans.
    pub dir: String,
    /// Claims by agent uid.
    #[serde(default)]
    pub claims: BTreeMap<String, Claim>,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ZoneRecord {
    fn empty(zone: &Zone, dir: &Path) -> ZoneRecord {
        ZoneRecord {
            zone: zone.name().to_owned(),
            dir: dir.to_string_lossy().into_owned(),
            claims: BTreeMap::new(),
            extra: Map::new(),
        }
    }

    /// The uids of claims foreign to agent `me` running as OS user `user`.
    pub fn foreign_claimants(&self, me: &str, user: u32) -> Vec<String> {
        self.claims
            .iter()
            .filter(|(uid, claim)| claim.is_foreign(uid, me, user))
            .map(|(uid, _)| uid.clone())
            .collect()
    }
}

/// The OS user this process runs as.
pub fn current_user() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// Read `zone`'s record without locking (records are replaced atomically);
/// `None` if the zone has none. The deadline is checked before and after.
pub(crate) fn read(home: &Path, zone: &Zone, deadline: &CancelToken) -> Result<Option<ZoneRecord>> {
    deadline.check()?;
    let record = read_record(&ZoneFiles::new(home, zone).record)?;
    deadline.check()?;
    Ok(record)
}

/// Whether `zone` has a record (of any kind: one that cannot be read is
/// still there). Creates nothing.
pub(crate) fn has_record(home: &Path, zone: &Zone, deadline: &CancelToken) -> Result<bool> {
    deadline.check()?;
    let record = ZoneFiles::new(home, zone).record;
    match fs::symlink_metadata(&record) {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io(&record, err)),
    }
}

/// Change `zone`'s record (created for `dir` if missing) under the zone lock,
/// writing it back only if `change` changed it. The deadline is checked
/// around the lock, the read and the write; a deadline that passes after the
/// write still fails the call, though the write stands.
pub(crate) fn update<T>(
    home: &Path,
    zone: &Zone,
    dir: &Path,
    deadline: &CancelToken,
    change: impl FnOnce(&mut ZoneRecord) -> T,
) -> Result<T> {
    deadline.check()?;
    let files = ZoneFiles::new(home, zone);
    let store = claims_dir(home);
    durable::create_private_dir(&store)?;
    refuse_untrusted_locks(&store)?;
    let _held = lock::wait_exclusive(&files.lock, deadline, LOCK_WAIT_LIMIT)?;
    deadline.check()?;
    let before = read_record(&files.record)?;
    let mut record = before
        .clone()
        .unwrap_or_else(|| ZoneRecord::empty(zone, dir));
    let out = change(&mut record);
    let unchanged = before
        .as_ref()
        .map_or(record.claims.is_empty(), |b| *b == record);
    if !unchanged {
        deadline.check()?;
        durable::replace(&files.record, &encode(&record))?;
        deadline.check()?;
    }
    Ok(out)
}

/// Every record in the store, and those that could not be read.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Readable records, by record file name.
    pub records: Vec<ZoneRecord>,
    /// Record files that could not be read or parsed, with why.
    pub unreadable: Vec<(PathBuf, Error)>,
}

/// Read every zone record under `home` (no locks; no deadline: this is for
/// operators and for pruning, which checks its own deadline per zone).
pub(crate) fn list(home: &Path) -> Result<Listing> {
    let dir = claims_dir(home);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Listing::default()),
        Err(err) => return Err(Error::io(&dir, err)),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|err| Error::io(&dir, err))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(ZONE_PREFIX.replace(':', "-").as_str()) && name.ends_with(".json") {
            paths.push(path);
        }
    }
    paths.sort();
    let mut listing = Listing::default();
    for path in paths {
        match read_record(&path) {
            Ok(Some(record)) => listing.records.push(record),
            Ok(None) => {}
            Err(err) => listing.unreadable.push((path, err)),
        }
    }
    Ok(listing)
}

fn read_record(path: &Path) -> Result<Option<ZoneRecord>> {
    let Some(bytes) = durable::read(path)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|err| {
        Error::new(
            ErrorKind::Io,
            format!(
                "{}: corrupt claims record, left as it is: {err}",
                path.display()
            ),
        )
    })
}

fn encode(record: &ZoneRecord) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(record).expect("a claims record always serialises");
    bytes.push(b'\n');
    bytes
}

fn refuse_untrusted_locks(store: &Path) -> Result<()> {
    match lock::trust(store)? {
        LockTrust::Kernel => Ok(()),
        LockTrust::RecordOnly(filesystem) => Err(Error::new(
            ErrorKind::Io,
            format!(
                "{}: on {filesystem}, where file locks cannot serialise claims",
                store.display()
            ),
        )),
    }
}
