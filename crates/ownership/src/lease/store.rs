//! The lease store under a natives home: where a cache directory's lease
//! files are, and how liveness is judged there. Its own module so that
//! taking leases (acquire.rs), listing them (inventory.rs) and pruning a
//! cache (prune.rs), each a module below lease.rs, extend the store
//! without importing the module that declares them.

use std::path::{Path, PathBuf};

use natives_core::Result;

use crate::layout::{self, LeaseFiles};
use natives_system::{
    lock::{self, LockTrust},
    paths,
};

/// The lease store under one natives home.
#[derive(Clone, Debug)]
pub struct Leases {
    home: PathBuf,
    trust: LockTrust,
}

impl Leases {
    /// The store under `home` (see [`paths::home`]), with lock trust
    /// detected from the filesystem it is (or will be) on. Reading creates
    /// nothing; the first acquisition creates the store, user-only.
    pub fn open(home: &Path) -> Result<Leases> {
        let leases = layout::leases_dir(home);
        let existing = leases
            .ancestors()
            .find(|dir| dir.is_dir())
            .unwrap_or(Path::new("/"));
        Ok(Leases {
            home: home.to_owned(),
            trust: lock::trust(existing)?,
        })
    }

    /// The same store, judging liveness as `trust` says rather than as
    /// detected (for filesystems detection gets wrong, and for tests).
    pub fn with_trust(mut self, trust: LockTrust) -> Leases {
        self.trust = trust;
        self
    }

    /// The home this store lives under.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// How this store judges liveness.
    pub fn trust(&self) -> &LockTrust {
        &self.trust
    }

    /// `cache_dir`'s canonical id, and where its lease's files are.
    pub(super) fn files(&self, cache_dir: &Path) -> Result<(PathBuf, LeaseFiles)> {
        let id = paths::dir_id(cache_dir)?;
        let files = LeaseFiles::new(&self.home, &id);
        Ok((id, files))
    }

    /// [`Leases::files`], with the store's directories created.
    pub(super) fn files_for_writing(&self, cache_dir: &Path) -> Result<(PathBuf, LeaseFiles)> {
        LeaseFiles::create_dirs(&self.home)?;
        self.files(cache_dir)
    }
}
