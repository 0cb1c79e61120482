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
    fs::{self, OpenOptions},
    io,
    os::unix::fs::{MetadataExt, OpenOptionsExt},
    path::{Path, PathBuf},
};

use natives_core::{Error, Result};
use serde::Serialize;

use super::{
    dir::PoolDir,
    extents::Footprint,
    member::{self, MemberState, MemberView, Recorded},
    seed::SeedReport,
};
use crate::{
    fresh::Identity,
    lease::{LeaseStatus, Leases, Owner, Status},
};

/// Disk use of one tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Bytes its files hold.
    pub logical: u64,
    /// Bytes the filesystem allocated for them.
    pub allocated: u64,
    /// Bytes of its files in extents shared with other files.
    pub shared: u64,
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

/// One member of a pool, as found (every front shows it as
/// [`crate::view::PoolMemberView`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolMember {
    /// Its name (`member-<n>`).
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Where it stands.
    pub status: MemberStatus,
    /// Where its lease stands.
    pub lease: LeaseStatus,
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

/// A pool, as found (every front shows it as
/// [`crate::view::PoolInventoryView`]).
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// What every member takes on disk together, shared blocks counted
    /// once.
    pub physical: u64,
    /// Its members, by name.
    pub members: Vec<PoolMember>,
}

impl PoolInventory {
    /// Every member's disk use added up (shared blocks counted per member;
    /// see [`PoolInventory::physical`] for them counted once).
    pub fn usage(&self) -> Usage {
        self.members
            .iter()
            .fold(Usage::default(), |sum, m| sum.plus(m.usage))
    }
}

impl Usage {
    /// Both uses added up.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            logical: self.logical + other.logical,
            allocated: self.allocated + other.allocated,
            shared: self.shared + other.shared,
            files: self.files + other.files,
        }
    }
}

impl Leases {
    /// Every member of the pool at `pool` with its holder, identity, disk
    /// use and last use. Reads only.
    pub fn pool_inventory(&self, pool: &Path) -> Result<PoolInventory> {
        let pool = PoolDir::new(self.home(), pool)?;
        let record = member::read_pool(&pool.files.record);
        let mut members = Vec::new();
        let mut footprints = Vec::new();
        for view in member::list(self.home(), &pool.id, &pool.files)? {
            let (usage, footprint) = measure(&view.dir)?;
            members.push(self.describe(view, usage)?);
            footprints.push(footprint);
        }
        Ok(PoolInventory {
            dir: pool.id,
            size: record.as_ref().map(|r| r.size),
            budget_bytes: record.as_ref().and_then(|r| r.budget_bytes),
            cold_fill_ms: record.and_then(|r| r.cold_fill_ms),
            physical: Footprint::combined(&footprints),
            members,
        })
    }

    fn describe(&self, view: MemberView, usage: Usage) -> Result<PoolMember> {
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
            usage,
            name: view.name,
            dir: view.dir,
            status,
            lease: LeaseStatus::of(&lease),
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
    measure(dir).map(|(usage, _)| usage)
}

/// Disk use of the tree at `dir`, and its blocks for counting shared ones
/// once.
pub(super) fn measure(dir: &Path) -> Result<(Usage, Footprint)> {
    let mut tally = Tally::default();
    tally.walk(dir)?;
    Ok((tally.usage, tally.footprint))
}

#[derive(Default)]
struct Tally {
    usage: Usage,
    footprint: Footprint,
    seen: HashSet<(u64, u64)>,
}

impl Tally {
    fn walk(&mut self, path: &Path) -> Result<()> {
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(Error::io(path, err)),
        };
        let blocks = meta.blocks() * 512;
        if meta.is_dir() {
            self.usage.allocated += blocks;
            self.footprint.add_unique(blocks);
            let listing = match fs::read_dir(path) {
                Ok(listing) => listing,
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(err) => return Err(Error::io(path, err)),
            };
            for item in listing {
                self.walk(&item.map_err(|err| Error::io(path, err))?.path())?;
            }
        } else if self.seen.insert((meta.dev(), meta.ino())) {
            self.usage.allocated += blocks;
            let shared = meta.is_file().then(|| self.map_file(path, meta.dev()));
            match shared.flatten() {
                Some(shared) => self.usage.shared += shared,
                None => self.footprint.add_unique(blocks),
            }
            if meta.is_file() {
                self.usage.logical += meta.len();
                self.usage.files += 1;
            }
        }
        Ok(())
    }

    /// The file's shared bytes from its extent map, or `None` when it has
    /// none to read. Opened without blocking and without following a link,
    /// in case it was replaced by one (or by a FIFO) since it was listed.
    fn map_file(&mut self, path: &Path, dev: u64) -> Option<u64> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path)
            .ok()?;
        file.metadata().ok()?.is_file().then_some(())?;
        self.footprint.add_file(&file, dev)
    }
}
