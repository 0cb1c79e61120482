//! A pool's members: how they are named, the record that says which state
//! each is in, and the pool's own record.
//!
//! A member is `<pool>/member-<n>`. Its record (under the natives home, see
//! [`crate::layout::PoolFiles`]) is what makes it one: a directory of that
//! name without a record was not made by the pool and is never touched. The
//! record is published `seeding` before the directory is made, replaced by
//! `ready` only once every byte of the seed is on disk, and by `discarding`
//! (naming where the directory is moved aside) before anything is removed;
//! it is removed last. Only `ready` members are leased.

use std::{
    collections::BTreeSet,
    fs, io,
    path::{Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};

use super::seed::SeedReport;
use crate::{
    fresh::{self, Identity},
    layout::{LeaseFiles, PoolFiles},
};
use natives_system::durable;

/// How every member's directory name starts.
pub(crate) const MEMBER_PREFIX: &str = "member-";

/// Records are small; one larger than this is not one of ours.
const RECORD_LIMIT: u64 = 64 * 1024;

/// The record format this crate writes and reads.
const RECORD_VERSION: u32 = 1;

/// Where a member is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemberState {
    /// Being filled: never leased; discarded whole if its filler died.
    Seeding,
    /// Filled: leasable.
    Ready,
    /// Being removed: never leased; the removal is finished by whoever
    /// next holds it.
    Discarding,
}

impl MemberState {
    /// The state as every front shows it.
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Seeding => "seeding",
            MemberState::Ready => "ready",
            MemberState::Discarding => "discarding",
        }
    }
}

/// One member's record, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberRecord {
    /// The record format.
    pub version: u32,
    /// The member's name (`member-<n>`).
    pub name: String,
    /// Its directory, canonical.
    pub dir: PathBuf,
    /// Where it is in its life.
    pub state: MemberState,
    /// When it was created, ms since the epoch.
    pub created_at_ms: u64,
    /// When it was last let go (or became ready), ms since the epoch.
    pub last_used_ms: u64,
    /// How it was filled, once it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<SeedReport>,
    /// Where its directory is moved while it is discarded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aside: Option<PathBuf>,
}

impl MemberRecord {
    pub(super) fn seeding(name: &str, dir: PathBuf, now: u64) -> MemberRecord {
        MemberRecord {
            version: RECORD_VERSION,
            name: name.to_owned(),
            dir,
            state: MemberState::Seeding,
            created_at_ms: now,
            last_used_ms: now,
            seed: None,
            aside: None,
        }
    }

    pub(super) fn to_bytes(&self) -> Vec<u8> {
        to_record_bytes(self)
    }
}

/// What a member's record says, if anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Recorded {
    /// No record: not a member.
    Absent,
    /// A record.
    Member(MemberRecord),
    /// A record nobody can read (why): never touched automatically.
    Unreadable(String),
}

/// One member as found: its name, directory and record.
#[derive(Clone, Debug)]
pub(super) struct MemberView {
    pub name: String,
    pub dir: PathBuf,
    pub record: Recorded,
    /// The source last built into it, if recorded.
    pub identity: Option<Identity>,
}

impl MemberView {
    /// The record, when it is readable and in `state`.
    pub fn in_state(&self, state: MemberState) -> Option<&MemberRecord> {
        match &self.record {
            Recorded::Member(record) if record.state == state => Some(record),
            _ => None,
        }
    }

    pub fn last_used_ms(&self) -> u64 {
        match &self.record {
            Recorded::Member(record) => record.last_used_ms,
            _ => 0,
        }
    }
}

/// The pool's settings as last given, and what it measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PoolRecord {
    pub version: u32,
    pub dir: PathBuf,
    pub size: usize,
    pub budget_bytes: Option<u64>,
    /// How long a member created cold was held the first time: what a
    /// build from nothing costs here, the bar a plain copy must beat.
    pub cold_fill_ms: Option<u64>,
}

impl PoolRecord {
    pub fn new(dir: PathBuf, size: usize, budget_bytes: Option<u64>) -> PoolRecord {
        PoolRecord {
            version: RECORD_VERSION,
            dir,
            size,
            budget_bytes,
            cold_fill_ms: None,
        }
    }
}

/// The pool record at `path`; `None` when absent or unreadable (it holds
/// settings and a measurement, nothing whose loss is unsafe).
pub(super) fn read_pool(path: &Path) -> Option<PoolRecord> {
    let bytes = durable::read_bounded(path, RECORD_LIMIT).ok()??;
    serde_json::from_slice(&bytes).ok()
}

pub(super) fn write_pool(path: &Path, record: &PoolRecord) -> Result<()> {
    durable::replace(path, &to_record_bytes(record))
}

/// The record at `path`.
pub(super) fn read_member(path: &Path) -> Result<Recorded> {
    let bytes = match durable::read_bounded(path, RECORD_LIMIT) {
        Ok(None) => return Ok(Recorded::Absent),
        Ok(Some(bytes)) => bytes,
        Err(err) if matches!(err.kind(), ErrorKind::TooLarge | ErrorKind::NotARegularFile) => {
            return Ok(Recorded::Unreadable(err.message().to_owned()));
        }
        Err(err) => return Err(err),
    };
    Ok(match serde_json::from_slice::<MemberRecord>(&bytes) {
        Ok(record) if record.version == RECORD_VERSION => Recorded::Member(record),
        Ok(record) => Recorded::Unreadable(format!("record version {}", record.version)),
        Err(err) => Recorded::Unreadable(format!("unreadable member record: {err}")),
    })
}

/// The member named `name` of the pool `pool` (canonical).
pub(super) fn member_dir(pool: &Path, name: &str) -> PathBuf {
    pool.join(name)
}

/// The name of member number `index`.
pub(super) fn member_name(index: usize) -> String {
    format!("{MEMBER_PREFIX}{index}")
}

/// Whether `name` is a member's name (`member-<digits>`).
pub(super) fn is_member_name(name: &str) -> bool {
    name.strip_prefix(MEMBER_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Every member of the pool `pool` (canonical): each name with a record,
/// and each directory with a member's name (those without a record are not
/// members, but their names are taken), sorted by name.
pub(super) fn list(home: &Path, pool: &Path, files: &PoolFiles) -> Result<Vec<MemberView>> {
    let mut names = BTreeSet::new();
    for name in names_in(&files.members)? {
        if let Some(name) = name.strip_suffix(".json").filter(|n| is_member_name(n)) {
            names.insert(name.to_owned());
        }
    }
    names.extend(names_in(pool)?.into_iter().filter(|n| is_member_name(n)));
    names
        .into_iter()
        .map(|name| {
            let dir = member_dir(pool, &name);
            let identity = fresh::read_identity(&LeaseFiles::new(home, &dir).identity);
            Ok(MemberView {
                record: read_member(&files.member(&name))?,
                name,
                dir,
                identity,
            })
        })
        .collect()
}

/// The names in `dir` (none if it does not exist).
fn names_in(dir: &Path) -> Result<Vec<String>> {
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io(dir, err)),
    };
    let mut names = Vec::new();
    for item in listing {
        let item = item.map_err(|err| Error::io(dir, err))?;
        if let Some(name) = item.file_name().to_str() {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

fn to_record_bytes(record: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(record).expect("a pool record serialises");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_table() {
        let table = [
            ("member-0", true),
            ("member-12", true),
            ("member-", false),
            ("member-1a", false),
            ("member--1", false),
            (".member-1.discard-x", false),
            ("Member-1", false),
        ];
        for (name, expected) in table {
            assert_eq!(is_member_name(name), expected, "{name}");
        }
        assert_eq!(member_name(3), "member-3");
    }

    #[test]
    fn unreadable_records_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("member-0.json");
        assert_eq!(read_member(&path).unwrap(), Recorded::Absent);
        fs::write(&path, "{").unwrap();
        assert!(matches!(
            read_member(&path).unwrap(),
            Recorded::Unreadable(_)
        ));
        fs::write(&path, vec![b' '; RECORD_LIMIT as usize + 1]).unwrap();
        let Recorded::Unreadable(why) = read_member(&path).unwrap() else {
            panic!("an oversized record was read");
        };
        assert!(why.contains("over the limit"), "{why}");
        let record = MemberRecord::seeding("member-0", dir.path().join("m"), 1);
        fs::write(&path, record.to_bytes()).unwrap();
        assert_eq!(read_member(&path).unwrap(), Recorded::Member(record));
    }
}
