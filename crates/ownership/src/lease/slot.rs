//! A slot: one exclusively held name, a lock file plus a record. The cache
//! lease and the output lease are both slots; this is the one place that
//! decides who holds a slot, how it is taken over and how it is let go.

use std::{
    fs,
    path::{Path, PathBuf},
};

use natives_core::{Error, Result};

use super::record::{Busy, Holder, LeaseRecord, Released, Role, Status};
use crate::layout::LeaseFiles;
use natives_system::{
    crash, durable,
    lock::{self, HeldLock, LockTrust},
    process::now_ms,
};

pub(crate) struct Slot<'a> {
    lock: &'a Path,
    record: &'a Path,
    reclaim_lock: &'a Path,
    role: Role,
    trust: &'a LockTrust,
}

/// A slot this process holds, from just before its record is written.
/// Dropped without [`HeldSlot::release`] (a failure after publication, a
/// panic) it lets go all the same: where the record is the lease, a record
/// naming this live process would otherwise keep the slot busy for as long
/// as the process lives.
#[derive(Debug)]
pub(crate) struct HeldSlot {
    lock: Option<HeldLock>,
    record: PathBuf,
    nonce: String,
    released: bool,
}

/// The crash point of a reclaim: the reclaim lock is held and the record is
/// still the dead owner's, about to be removed.
pub(crate) const RECLAIMING: &str = "lease reclaiming";

#[expect(
    clippy::large_enum_variant,
    reason = "moved once per acquisition attempt; boxing would allocate on every success"
)]
pub(crate) enum Taken {
    /// Held now; with the dead owner's record if it was reclaimed.
    Held(HeldSlot, Option<LeaseRecord>),
    Busy(Busy),
}

impl<'a> Slot<'a> {
    pub(crate) fn cache(files: &'a LeaseFiles, trust: &'a LockTrust) -> Slot<'a> {
        Slot {
            lock: &files.lock,
            record: &files.record,
            reclaim_lock: &files.reclaim_lock,
            role: Role::Build,
            trust,
        }
    }

    pub(crate) fn output(files: &'a LeaseFiles, trust: &'a LockTrust) -> Slot<'a> {
        Slot {
            lock: &files.output_lock,
            record: &files.output_record,
            reclaim_lock: &files.output_reclaim_lock,
            role: Role::Cleanup,
            trust,
        }
    }

    /// Where the slot stands right now.
    pub(crate) fn status(&self) -> Result<Status> {
        let bytes = durable::read(self.record)?;
        let held = match self.trust {
            LockTrust::Kernel => Some(lock::is_held(self.lock)?),
            LockTrust::RecordOnly(_) => None,
        };
        Ok(match bytes {
            None if held == Some(true) => Status::Active(None),
            None => Status::Free,
            Some(bytes) => match LeaseRecord::parse(&bytes) {
                Err(fault) => Status::Unknown(fault.to_string()),
                Ok(record) => {
                    // A record-only holder (another host on a shared export)
                    // holds no kernel lock: its record alone says it lives.
                    let alive = held == Some(true) || record.owner.may_be_alive();
                    if alive {
                        Status::Active(Some(record))
                    } else {
                        Status::Stale(record)
                    }
                }
            },
        })
    }

    /// One attempt to take the slot for `record`. `admit` runs once the slot
    /// is exclusively ours and before anything is written: a `Some` refuses.
    pub(crate) fn try_take(
        &self,
        record: &LeaseRecord,
        admit: impl FnOnce() -> Result<Option<Busy>>,
    ) -> Result<Taken> {
        match self.trust {
            LockTrust::Kernel => self.take_locked(record, admit),
            LockTrust::RecordOnly(_) => self.take_by_record(record, admit),
        }
    }

    fn take_locked(
        &self,
        record: &LeaseRecord,
        admit: impl FnOnce() -> Result<Option<Busy>>,
    ) -> Result<Taken> {
        let Some(lock) = lock::try_exclusive(self.lock)? else {
            return self.busy_while_locked().map(Taken::Busy);
        };
        if let Some(busy) = admit()? {
            return Ok(Taken::Busy(busy));
        }
        let previous = match durable::read(self.record)? {
            None => None,
            Some(bytes) => match LeaseRecord::parse(&bytes) {
                Ok(live) if live.owner.may_be_alive() => {
                    return Ok(Taken::Busy(self.active(Some(live))));
                }
                Ok(dead) => Some(dead),
                Err(fault) => return Ok(Taken::Busy(Busy::Unknown(fault.to_string()))),
            },
        };
        let held = self.held(Some(lock), record);
        durable::replace(self.record, &record.to_bytes())?;
        Ok(Taken::Held(held, previous))
    }

    /// Why the slot is busy when its lock is held by someone else.
    fn busy_while_locked(&self) -> Result<Busy> {
        Ok(match durable::read(self.record)? {
            None => self.active(None),
            Some(bytes) => match LeaseRecord::parse(&bytes) {
                Err(fault) => Busy::Unknown(fault.to_string()),
                // The lock is held but the record's owner is gone: someone
                // is taking over right now.
                Ok(record) if !record.owner.may_be_alive() => Busy::Contended,
                Ok(record) => self.active(Some(record)),
            },
        })
    }

    fn take_by_record(
        &self,
        record: &LeaseRecord,
        admit: impl FnOnce() -> Result<Option<Busy>>,
    ) -> Result<Taken> {
        if let Some(busy) = admit()? {
            return Ok(Taken::Busy(busy));
        }
        let Some(bytes) = durable::read(self.record)? else {
            return self.publish(record, None);
        };
        let existing = match LeaseRecord::parse(&bytes) {
            Ok(existing) => existing,
            Err(fault) => return Ok(Taken::Busy(Busy::Unknown(fault.to_string()))),
        };
        if existing.owner.may_be_alive() {
            return Ok(Taken::Busy(self.active(Some(existing))));
        }
        self.reclaim_by_record(record, existing)
    }

    /// Replace a dead owner's record from this host. Only processes on the
    /// dead owner's host ever reclaim it, and they all lock the reclaim lock
    /// beside the record (whatever their own temporary directory), which
    /// serialises every possible reclaimer; under it, the record is checked
    /// to still be the dead one before it is removed.
    fn reclaim_by_record(&self, record: &LeaseRecord, dead: LeaseRecord) -> Result<Taken> {
        let Some(_reclaiming) = lock::try_exclusive(self.reclaim_lock)? else {
            return Ok(Taken::Busy(Busy::Contended));
        };
        let still_dead = durable::read(self.record)?
            .and_then(|bytes| LeaseRecord::parse(&bytes).ok())
            .is_some_and(|now| now.owner.nonce == dead.owner.nonce);
        if !still_dead {
            return Ok(Taken::Busy(Busy::Contended));
        }
        crash::point(RECLAIMING);
        durable::remove(self.record)?;
        self.publish(record, Some(dead))
    }

    /// Clear the slot of an owner that is not alive, on a human's behalf:
    /// `Err(busy)` while a live owner holds it; a dead owner's record is
    /// removed; an unreadable one is renamed aside, never deleted.
    pub(crate) fn clear_unowned(&self) -> Result<Result<Released, Busy>> {
        let serialising = match self.trust {
            LockTrust::Kernel => self.lock,
            LockTrust::RecordOnly(_) => self.reclaim_lock,
        };
        let Some(_lock) = lock::try_exclusive(serialising)? else {
            return match self.trust {
                LockTrust::Kernel => self.busy_while_locked().map(Err),
                // A reclaimer is replacing the record right now.
                LockTrust::RecordOnly(_) => Ok(Err(Busy::Contended)),
            };
        };
        let Some(bytes) = durable::read(self.record)? else {
            return Ok(Ok(Released::Nothing));
        };
        match LeaseRecord::parse(&bytes) {
            // Alive without the kernel lock: a record-only holder.
            Ok(record) if record.owner.may_be_alive() => Ok(Err(self.active(Some(record)))),
            Ok(record) => {
                durable::remove(self.record)?;
                Ok(Ok(Released::Dead(Box::new(record))))
            }
            Err(fault) => {
                let why = fault.to_string();
                let aside = self
                    .record
                    .with_extension(format!("json.unknown-{}", now_ms()));
                fs::rename(self.record, &aside).map_err(|err| Error::io(self.record, err))?;
                Ok(Ok(Released::MovedAside { to: aside, why }))
            }
        }
    }

    fn publish(&self, record: &LeaseRecord, previous: Option<LeaseRecord>) -> Result<Taken> {
        let held = self.held(None, record);
        let published = durable::publish(self.record, &record.to_bytes())?;
        Ok(if published {
            Taken::Held(held, previous)
        } else {
            Taken::Busy(Busy::Contended)
        })
    }

    fn active(&self, record: Option<LeaseRecord>) -> Busy {
        Busy::Active(Box::new(Holder {
            role: self.role,
            record,
        }))
    }

    fn held(&self, lock: Option<HeldLock>, record: &LeaseRecord) -> HeldSlot {
        HeldSlot {
            lock,
            record: self.record.to_owned(),
            nonce: record.owner.nonce.clone(),
            released: false,
        }
    }
}

impl HeldSlot {
    /// Let the slot go: delete the record if it is still this holder's own,
    /// then drop the lock. `Ok(false)` if the record was someone else's.
    pub(crate) fn release(mut self) -> Result<bool> {
        self.let_go()
    }

    fn let_go(&mut self) -> Result<bool> {
        self.released = true;
        let own = durable::read(&self.record)?
            .and_then(|bytes| LeaseRecord::parse(&bytes).ok())
            .is_some_and(|record| record.owner.nonce == self.nonce);
        let removed = own && durable::remove(&self.record)?;
        self.lock.take();
        Ok(removed)
    }
}

impl Drop for HeldSlot {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.let_go();
        }
    }
}
