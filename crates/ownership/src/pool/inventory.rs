//! What a pool holds: its members, who holds each, what each was last built
//! from, how much disk each takes and when each was last used.
//!
//! Sizes are measured by walking each member: `logical` is the bytes its
//! files hold, `allocated` the blocks the filesystem gave them and its
//! directories (a file with several names in one member counted once). Where members share
//! extents (a reflink seed), each member's `allocated` counts the shared
//! blocks as its own, so the pool's sum overstates its real use; a budget
//! judged by that sum prunes early, never late.

use std::{
    collections::HashSet,
    fs, io,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
};

use natives_core::{Error, Result};
use serde::{Serialize, Serializer, ser::SerializeMap};

use super::{
    PoolDir,
    member::{self, MemberState, MemberView, Recorded},
    seed::SeedReport,
};
use crate::{
    fresh::Identity,
    lease::{Leases, Owner, Status},
};

/// Disk use of one tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Bytes its files hold.
    pub logical: u64,
    /// Bytes the filesystem allocated for them.
    pub allocated: u64,
    /// Files (each counted once, whatever its names).
    pub files: u64,
}

/// Where a pool member stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberStatus {
    /// In its life as its record says.
    State(MemberState),
    /// A directory with a member's name that no record names: not the
    /// pool's, never touched.
    Unregistered,
    /// A record nobody can read (why): never touched automatically.
    Unknown(String),
}

/// Shown as `state` (its name) and, for an unreadable record, `reason`.
impl Serialize for MemberStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("state", self.name())?;
        if let MemberStatus::Unknown(why) = self {
            map.serialize_entry("reason", why)?;
        }
        map.end()
    }
}

impl MemberStatus {
    /// The status as every front shows it.
    pub fn name(&self) -> &'static str {
        match self {
            MemberStatus::State(state) => state.name(),
            MemberStatus::Unregistered => "unregistered",
            MemberStatus::Unknown(_) => "unknown",
        }
    }
}

/// One member of a pool, as found (the shape every front shows).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolMember {
    /// Its name (`member-<n>`).
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Where it stands.
    #[serde(flatten)]
    pub status: MemberStatus,
    /// Its lease: `free`, `active`, `stale` or `unknown`.
    pub lease: &'static str,
    /// Who holds it, when someone does.
    pub holder: Option<Owner>,
    /// The source last built into it.
    pub identity: Option<Identity>,
    /// Its disk use (zero when its directory is missing).
    pub usage: Usage,
    /// When it was last let go, ms since the epoch.
    pub last_used_ms: Option<u64>,
    /// When it was created, ms since the epoch.
    pub created_at_ms: Option<u64>,
    /// How it was filled.
    pub seed: Option<SeedReport>,
}

/// A pool, as found (the shape every front shows).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolInventory {
    /// The pool directory, canonical.
    pub dir: PathBuf,
    /// Its size (K) as last given to an acquisition.
    pub size: Option<usize>,
    /// Its disk budget as last given.
    pub budget_bytes: Option<u64>,
    /// How long a member created cold was first held (a build from
    /// nothing), when measured.
    pub cold_fill_ms: Option<u64>,
    /// Its members, by name.
    pub members: Vec<PoolMember>,
}

impl PoolInventory {
    /// Disk use of every member together (see the module docs).
    pub fn usage(&self) -> Usage {
        self.members.iter().fold(Usage::default(), |sum, m| Usage {
            logical: sum.logical + m.usage.logical,
            allocated: sum.allocated + m.usage.allocated,
            files: sum.files + m.usage.files,
        })
    }
}

impl Leases {
    /// Every member of the pool at `pool` with its holder, identity, disk
    /// use and last use. Reads only.
    pub fn pool_inventory(&self, pool: &Path) -> Result<PoolInventory> {
        let pool = PoolDir::new(self.home(), pool)?;
        let record = member::read_pool(&pool.files.record);
        let members = member::list(self.home(), &pool.id, &pool.files)?
            .into_iter()
            .map(|view| self.describe(view))
            .collect::<Result<Vec<_>>>()?;
        Ok(PoolInventory {
            dir: pool.id,
            size: record.as_ref().map(|r| r.size),
            budget_bytes: record.as_ref().and_then(|r| r.budget_bytes),
            cold_fill_ms: record.and_then(|r| r.cold_fill_ms),
            members,
        })
    }

    fn describe(&self, view: MemberView) -> Result<PoolMember> {
        let lease = self.classify(&view.dir)?;
        let holder = match &lease {
            Status::Active(Some(record)) | Status::Stale(record) => Some(record.owner.clone()),
            _ => None,
        };
        let (status, record) = match view.record {
            Recorded::Absent => (MemberStatus::Unregistered, None),
            Recorded::Unreadable(why) => (MemberStatus::Unknown(why), None),
            Recorded::Member(record) => (MemberStatus::State(record.state), Some(record)),
        };
        Ok(PoolMember {
            usage: usage(&view.dir)?,
            name: view.name,
            dir: view.dir,
            status,
            lease: lease.name(),
            holder,
            identity: view.identity,
            last_used_ms: record.as_ref().map(|r| r.last_used_ms),
            created_at_ms: record.as_ref().map(|r| r.created_at_ms),
            seed: record.and_then(|r| r.seed),
        })
    }
}

/// Disk use of the tree at `dir`, links not followed; zero when missing.
pub fn usage(dir: &Path) -> Result<Usage> {
    let mut total = Usage::default();
    let mut seen = HashSet::new();
    walk(dir, &mut total, &mut seen)?;
    Ok(total)
}

fn walk(path: &Path, total: &mut Usage, seen: &mut HashSet<(u64, u64)>) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(Error::io(path, err)),
    };
    if meta.is_dir() {
        total.allocated += meta.blocks() * 512;
        let listing = match fs::read_dir(path) {
            Ok(listing) => listing,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(Error::io(path, err)),
        };
        for item in listing {
            walk(
                &item.map_err(|err| Error::io(path, err))?.path(),
                total,
                seen,
            )?;
        }
    } else if seen.insert((meta.dev(), meta.ino())) {
        total.allocated += meta.blocks() * 512;
        if meta.is_file() {
            total.logical += meta.len();
            total.files += 1;
        }
    }
    Ok(())
}
