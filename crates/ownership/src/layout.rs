//! Where every record lives under the natives home.
//!
//! ```text
//! <home>/                         0700
//!   cache-leases/<slug>.lock      locked for a whole borrow (never deleted)
//!   cache-leases/<slug>.json      the holder's record, while held
//!   cache-leases/<slug>.reclaim.lock  serialises reclaimers of a dead
//!                                 owner's record where locks cannot be
//!                                 trusted to say who is alive
//!   cache-leases/<slug>.output.lock  locked by process cleanup
//!   cache-leases/<slug>.output.json  who is cleaning up, while held
//!   cache-leases/<slug>.output.reclaim.lock  as `.reclaim.lock`, for it
//!   cache-leases/<slug>.identity.json  the source last built into the cache
//!   cache-leases/catalog/<slug>.json   every cache ever leased, last owner
//!   claims/<zone slug>.json       one claims record per zone
//!   claims/<zone slug>.lock       serialises writers of that record
//!   cache-pools/<pool slug>.lock  serialises a pool's short decisions
//!                                 (which member to lease, to create)
//!   cache-pools/<pool slug>.json  the pool's settings and measurements
//!   cache-pools/<pool slug>/<member>.json  one member's state (seeding,
//!                                 ready, discarding) and last use
//! ```
//!
//! A pool member is a cache directory like any other: its lease, identity
//! and catalog files are the ones above, named by its own slug.
//!
//! Lease files live under the home, never inside the cache directory, so
//! pruning a cache can never delete who holds it.

use std::path::{Path, PathBuf};

use natives_core::Result;

use natives_system::{durable, paths::slug};

/// The directory of lease files under `home`.
pub fn leases_dir(home: &Path) -> PathBuf {
    home.join("cache-leases")
}

/// The directory of catalog records under `home`.
pub fn catalog_dir(home: &Path) -> PathBuf {
    leases_dir(home).join("catalog")
}

/// The directory of claim records under `home`.
pub fn claims_dir(home: &Path) -> PathBuf {
    home.join("claims")
}

/// The directory of build-cache pool records under `home`.
pub fn pools_dir(home: &Path) -> PathBuf {
    home.join("cache-pools")
}

/// Every file that describes one build-cache pool.
#[derive(Clone, Debug)]
pub struct PoolFiles {
    /// Serialises the pool's short decisions.
    pub lock: PathBuf,
    /// The pool's settings and measurements.
    pub record: PathBuf,
    /// Where its members' records are.
    pub members: PathBuf,
}

impl PoolFiles {
    /// The files of the pool whose canonical id is `pool_id`.
    pub fn new(home: &Path, pool_id: &Path) -> PoolFiles {
        let dir = pools_dir(home);
        let slug = slug(pool_id);
        PoolFiles {
            lock: dir.join(format!("{slug}.lock")),
            record: dir.join(format!("{slug}.json")),
            members: dir.join(slug),
        }
    }

    /// The record of the member named `name`.
    pub fn member(&self, name: &str) -> PathBuf {
        self.members.join(format!("{name}.json"))
    }

    /// The lock seeds reading the member named `name` hold shared, and a
    /// prune removing it holds exclusively.
    pub fn reading(&self, name: &str) -> PathBuf {
        self.members.join(format!("{name}.reading"))
    }

    /// Create the directories these files live in (user-only).
    pub fn create_dirs(&self) -> Result<()> {
        durable::create_private_dir(&self.members)
    }
}

/// Every file that describes one cache directory's lease.
#[derive(Clone, Debug)]
pub struct LeaseFiles {
    /// The lock held by the borrower.
    pub lock: PathBuf,
    /// The borrower's record.
    pub record: PathBuf,
    /// Serialises reclaimers of a dead borrower's record (record-only mode).
    pub reclaim_lock: PathBuf,
    /// The lock held by process cleanup.
    pub output_lock: PathBuf,
    /// Process cleanup's record.
    pub output_record: PathBuf,
    /// Serialises reclaimers of a dead cleanup's record (record-only mode).
    pub output_reclaim_lock: PathBuf,
    /// The source identity last built into the cache.
    pub identity: PathBuf,
    /// The catalog entry: the cache directory and its last known owner.
    pub catalog: PathBuf,
}

impl LeaseFiles {
    /// The files for the cache directory whose canonical id is `dir_id`.
    pub fn new(home: &Path, dir_id: &Path) -> LeaseFiles {
        LeaseFiles::for_slug(home, &slug(dir_id))
    }

    /// The files named `slug` (see [`natives_system::paths::slug`]).
    pub fn for_slug(home: &Path, slug: &str) -> LeaseFiles {
        let dir = leases_dir(home);
        LeaseFiles {
            lock: dir.join(format!("{slug}.lock")),
            record: dir.join(format!("{slug}.json")),
            reclaim_lock: dir.join(format!("{slug}.reclaim.lock")),
            output_lock: dir.join(format!("{slug}.output.lock")),
            output_record: dir.join(format!("{slug}.output.json")),
            output_reclaim_lock: dir.join(format!("{slug}.output.reclaim.lock")),
            identity: dir.join(format!("{slug}.identity.json")),
            catalog: catalog_dir(home).join(format!("{slug}.json")),
        }
    }

    /// Create the directories these files live in (user-only).
    pub fn create_dirs(home: &Path) -> Result<()> {
        durable::create_private_dir(&catalog_dir(home))
    }
}
