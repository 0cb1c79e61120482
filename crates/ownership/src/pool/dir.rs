//! A pool's directory: its canonical id, its records and the lock short
//! decisions are made under. Its own module so that the pool (pool.rs) and
//! its inventory (inventory.rs) both take it from below.

use std::{
    fs,
    path::{Path, PathBuf},
    time::Duration,
};

use natives_core::{CancelToken, Error, Result};

use super::member::{self, MemberView};
use crate::layout::PoolFiles;
use natives_system::{lock, paths::dir_id};

/// How long a pool's lock may be held by another before it counts as
/// stuck: it guards a few record reads and writes, never a copy or a build.
const POOL_LOCK_LIMIT: Duration = Duration::from_secs(30);

/// A pool directory: its canonical id and its records.
#[derive(Clone, Debug)]
pub(super) struct PoolDir {
    /// The natives home its records live under.
    pub(super) home: PathBuf,
    /// The pool directory's canonical id.
    pub(super) id: PathBuf,
    /// Where its records are.
    pub(super) files: PoolFiles,
}

impl PoolDir {
    /// The pool at `pool`, its records under `home`.
    pub(super) fn new(home: &Path, pool: &Path) -> Result<PoolDir> {
        let id = dir_id(pool)?;
        Ok(PoolDir {
            home: home.to_owned(),
            files: PoolFiles::new(home, &id),
            id,
        })
    }

    /// The pool, its directory and its records' directory created.
    pub(super) fn create(home: &Path, pool: &Path) -> Result<PoolDir> {
        fs::create_dir_all(pool).map_err(|err| Error::io(pool, err))?;
        let pool = PoolDir::new(home, pool)?;
        pool.files.create_dirs()?;
        Ok(pool)
    }

    /// Hold the pool's lock, for a short decision.
    pub(super) fn lock(&self, cancel: &CancelToken) -> Result<lock::HeldLock> {
        lock::wait_exclusive(&self.files.lock, cancel, POOL_LOCK_LIMIT)
    }

    /// How long a build from nothing took, when one was measured.
    pub(super) fn cold_fill(&self) -> Option<Duration> {
        member::read_pool(&self.files.record)?
            .cold_fill_ms
            .map(Duration::from_millis)
    }

    /// Every member, as its record and directory show it.
    pub(super) fn members(&self) -> Result<Vec<MemberView>> {
        member::list(&self.home, &self.id, &self.files)
    }
}
