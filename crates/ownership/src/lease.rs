//! Build-cache leases: who is using a shared `CARGO_TARGET_DIR` right now,
//! made durable and cheap to ask.
//!
//! One cache directory, many borrowers (candidate builds, reviews, a human by
//! hand), sometimes from different worktrees. A borrower takes the lease with
//! [`Leases::try_acquire`] or [`Leases::wait_for`] and holds it for the whole
//! build through a [`Guard`], which releases on drop.
//!
//! # Why this cannot hand one cache to two holders
//!
//! The holder keeps an exclusive kernel lock on the lease's sidecar lock file for
//! the whole borrow ([`natives_system::lock`]); the kernel decides who holds it and
//! frees it the instant its holder dies, however it dies. The JSON record
//! beside it ([`LeaseRecord`]) is written only by whoever holds that lock, so
//! reclaiming a dead owner's lease is "take the lock, overwrite the record":
//! there is no check-then-delete window for a second reclaimer to slip into,
//! and a reused pid cannot keep a dead owner's lease alive. Release deletes
//! the record only if it still carries the holder's own nonce.
//!
//! A record that cannot be parsed is [`Status::Unknown`]: never reclaimed
//! automatically and never rewritten, because a lease nobody can read is not
//! evidence that the directory is free.
//!
//! On a filesystem whose locks cannot be trusted ([`natives_system::lock::trust`]),
//! the record is the lease: published with create-exclusive, judged alive by
//! [`pid_alive`](natives_system::process::pid_alive), reclaimed only when its owner ran on this
//! host and is certainly dead, under a reclaim lock beside the record that
//! serialises reclaimers. Such a holder takes no kernel lock, so where one host sees a
//! local filesystem and another reaches it over the network, a free kernel
//! lock is not enough: a record whose owner may still be alive is respected
//! in both modes.
//!
//! # Process cleanup
//!
//! Killing a build's tool descendants happens under a second, *output* lease
//! ([`Leases::try_acquire_output`]). Admission checks it too: reclaiming a
//! dead owner's lease does not allow reusing outputs that cleanup still owns,
//! and destructive maintenance ([`Leases::try_acquire_maintenance`]) holds
//! both. Cleanup must take the output lease while the build's own lease is
//! still held (by the build, or by whoever acts for it); taken only after
//! the build's lease was dropped, a new borrower could be admitted first.

mod acquire;
mod hold;
mod inventory;
mod prune;
mod record;
mod slot;
mod store;

use std::{fs, io, path::Path};

use natives_core::{Error, ErrorKind, Result};

pub use acquire::{AcquireOutcome, Guard, POLL_INTERVAL};
pub use hold::{RESOURCE_HOLD, cargo_target_env, parse_resource_hold, resource_hold};
pub use inventory::{Entry, EntryStatus};
pub(crate) use prune::repository_within;
pub use prune::{Kept, KeptReason, OutputFile, PrunePlan, PruneReport};
pub use record::{Busy, Holder, LeaseRecord, LeaseStatus, Owner, Released, Role, Status};
pub use store::Leases;

/// What [`Leases::inspect`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    /// The cache lease's status.
    pub status: Status,
    /// Held, unknown, or its outputs owned by process cleanup.
    pub in_use: bool,
}

impl Leases {
    /// Where `cache_dir`'s lease stands right now. Read-only, except that
    /// probing a kernel lock takes it for an instant.
    pub fn classify(&self, cache_dir: &Path) -> Result<Status> {
        let (_, files) = self.files(cache_dir)?;
        slot::Slot::cache(&files, self.trust()).status()
    }

    /// Whether `cache_dir` is in use: held by a live owner, in a state nobody
    /// can vouch for ([`Status::Unknown`] counts as in use), or with outputs
    /// that process cleanup still owns.
    pub fn in_use(&self, cache_dir: &Path) -> Result<bool> {
        Ok(self.inspect(cache_dir)?.in_use)
    }

    /// Where `cache_dir`'s lease stands and whether the cache is in use (see
    /// [`Leases::in_use`]), the cache lease read once.
    pub fn inspect(&self, cache_dir: &Path) -> Result<Inspection> {
        let status = self.classify(cache_dir)?;
        let in_use = status.in_use() || self.outputs_in_use(cache_dir)?;
        Ok(Inspection { status, in_use })
    }

    /// Whether process cleanup (or maintenance) holds `cache_dir`'s output
    /// lease, or its record cannot be read.
    pub fn outputs_in_use(&self, cache_dir: &Path) -> Result<bool> {
        let (_, files) = self.files(cache_dir)?;
        Ok(slot::Slot::output(&files, self.trust()).status()?.in_use())
    }

    /// Whether a task held by `hold` (see [`resource_hold`]) can be released
    /// now: the lease it waits on is no longer in use. `EINVAL` for a hold
    /// that is not a build-cache hold.
    pub fn hold_releasable(&self, hold: &str) -> Result<bool> {
        let dir = parse_resource_hold(hold)
            .ok_or_else(|| Error::invalid(format!("not a build-cache hold: {hold:?}")))?;
        Ok(!self.in_use(&dir)?)
    }

    /// Release `cache_dir`'s lease on a human's behalf, for an owner that
    /// is gone: refused with `EBUSY` (naming the holder) while a live owner
    /// holds it. A dead owner's record is removed; an unreadable one is
    /// renamed aside rather than deleted, so no bytes are lost. Without a
    /// record, nothing is created in the home.
    pub fn release_unowned(&self, cache_dir: &Path) -> Result<Released> {
        // With no record there is nothing to release: nothing is created.
        let (_, files) = self.files(cache_dir)?;
        match fs::symlink_metadata(&files.record) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Released::Nothing),
            Err(err) => return Err(Error::io(&files.record, err)),
            Ok(_) => {}
        }
        let (_, files) = self.files_for_writing(cache_dir)?;
        let released = slot::Slot::cache(&files, self.trust()).clear_unowned()?;
        if let Ok(Released::Dead(record)) = &released {
            inventory::note_release(&files, record)?;
        }
        released.map_err(|busy| {
            Error::new(
                ErrorKind::Busy,
                format!(
                    "{}: build cache {}; not released",
                    cache_dir.display(),
                    busy.describe()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests;
