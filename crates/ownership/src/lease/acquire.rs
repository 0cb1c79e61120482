//! Taking and letting go of leases: one attempt, a bounded wait, and the
//! guard that releases on drop.

use std::{
    path::{Path, PathBuf},
    thread,
    time::Duration,
};

use natives_core::{CancelToken, Error, ErrorKind, Result};

use super::{
    inventory,
    record::{Busy, Holder, LeaseRecord, Owner, Role, Status},
    slot::{HeldSlot, Slot, Taken},
    store::Leases,
};
use crate::{
    fresh::{self, Build, Freshness, Identity, Refresh},
    layout::LeaseFiles,
};
use natives_system::process;

/// How often a waiting borrower tries again. A dead holder's kernel lock is
/// free within milliseconds, so a SIGKILLed holder's lease is taken over
/// within one interval; shorter would only spin on a live holder.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// What one acquisition attempt returned.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "the guard is the common answer; boxing it would allocate on every acquisition"
)]
pub enum AcquireOutcome {
    /// The lease is ours.
    Acquired(Guard),
    /// Someone else has it, or its state is unknown.
    Busy(Busy),
}

/// A held lease. Releases on drop, so a panicking or early-returning holder
/// never leaves the cache marked busy; [`Guard::release`] reports errors.
#[derive(Debug)]
pub struct Guard {
    record: LeaseRecord,
    reclaimed: Option<LeaseRecord>,
    role: Role,
    home: PathBuf,
    files: LeaseFiles,
    cache: Option<HeldSlot>,
    output: Option<HeldSlot>,
}

impl Guard {
    /// The record this guard wrote.
    pub fn record(&self) -> &LeaseRecord {
        &self.record
    }

    /// The dead owner's record this acquisition replaced, if it reclaimed one.
    pub fn reclaimed(&self) -> Option<&LeaseRecord> {
        self.reclaimed.as_ref()
    }

    /// The cache directory's canonical id.
    pub fn dir(&self) -> &Path {
        &self.record.dir
    }

    /// Which lease this is: `Build` (also for maintenance) or `Cleanup`.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Whether this guard also holds the output lease (maintenance, cleanup).
    pub fn holds_outputs(&self) -> bool {
        self.output.is_some()
    }

    /// The home this lease lives under.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Make sure a build from `identity` into this cache cannot reuse
    /// output compiled from another source ([`fresh::ensure_fresh`]); runs
    /// no subprocess when the recorded identity already matches.
    pub fn ensure_fresh(
        &self,
        identity: &Identity,
        build: &Build,
        cancel: &CancelToken,
    ) -> Result<Freshness> {
        fresh::ensure_fresh(&self.home, &self.record.dir, identity, build, cancel)
    }

    /// Release now, reporting any error (dropping releases too, silently).
    /// Only a record still carrying this guard's nonce is deleted.
    pub fn release(mut self) -> Result<()> {
        self.release_held(Remember::Release)
    }

    /// Release the lease on a cache directory this holder removed whole:
    /// its catalog entry is removed instead of noting the release, so the
    /// inventory does not list a directory that is gone. The entry goes
    /// while the lease is still held, since only a holder writes it.
    pub fn release_removed(mut self) -> Result<()> {
        self.release_held(Remember::Nothing)
    }

    fn release_held(&mut self, remember: Remember) -> Result<()> {
        let mut result = Ok(());
        if let Some(cache) = self.cache.take() {
            result = match remember {
                Remember::Release => inventory::note_release(&self.files, &self.record),
                Remember::Nothing => inventory::forget(&self.files),
            };
            result = cache.release().map(drop).and(result);
        }
        if let Some(output) = self.output.take() {
            result = output.release().map(drop).and(result);
        }
        result
    }
}

/// What the catalog keeps of a released lease.
#[derive(Clone, Copy)]
enum Remember {
    /// The owner, and when it let go.
    Release,
    /// Nothing: the cache directory is gone.
    Nothing,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.release_held(Remember::Release);
    }
}

impl Leases {
    /// Take the lease on `cache_dir` for `owner` if nobody live holds it,
    /// reclaiming a dead owner's lease first. One attempt: see
    /// [`Leases::wait_for`] to wait. Refused while process cleanup still
    /// owns the cache's outputs.
    pub fn try_acquire(&self, cache_dir: &Path, owner: &Owner) -> Result<AcquireOutcome> {
        let (id, files) = self.files_for_writing(cache_dir)?;
        let record = LeaseRecord::new(id, fresh_nonce(owner)?);
        let taken = Slot::cache(&files, self.trust())
            .try_take(&record, || self.outputs_owned_by_cleanup(&files))?;
        Ok(match taken {
            Taken::Busy(busy) => AcquireOutcome::Busy(busy),
            Taken::Held(cache, reclaimed) => {
                inventory::note_acquire(&files, &record)?;
                let held = Held {
                    record,
                    reclaimed,
                    role: Role::Build,
                    files,
                    cache: Some(cache),
                    output: None,
                };
                AcquireOutcome::Acquired(self.guard(held))
            }
        })
    }

    /// Take both the cache lease and the output lease, for an operation that
    /// deletes from the cache. Refused while anyone builds or cleans up.
    pub fn try_acquire_maintenance(
        &self,
        cache_dir: &Path,
        owner: &Owner,
    ) -> Result<AcquireOutcome> {
        let mut guard = match self.try_acquire(cache_dir, owner)? {
            AcquireOutcome::Acquired(guard) => guard,
            busy => return Ok(busy),
        };
        let output =
            Slot::output(&guard.files, self.trust()).try_take(&guard.record, || Ok(None))?;
        Ok(match output {
            Taken::Held(slot, _) => {
                guard.output = Some(slot);
                AcquireOutcome::Acquired(guard)
            }
            Taken::Busy(busy) => AcquireOutcome::Busy(busy),
        })
    }

    /// Take the output lease on `cache_dir` for process cleanup, which holds
    /// it while it terminates a build's tool descendants. While it is held,
    /// no build is admitted to the cache and no maintenance runs.
    pub fn try_acquire_output(&self, cache_dir: &Path, owner: &Owner) -> Result<AcquireOutcome> {
        let (id, files) = self.files_for_writing(cache_dir)?;
        let record = LeaseRecord::new(id, fresh_nonce(owner)?);
        Ok(
            match Slot::output(&files, self.trust()).try_take(&record, || Ok(None))? {
                Taken::Busy(busy) => AcquireOutcome::Busy(busy),
                Taken::Held(output, reclaimed) => AcquireOutcome::Acquired(self.guard(Held {
                    record,
                    reclaimed,
                    role: Role::Cleanup,
                    files,
                    cache: None,
                    output: Some(output),
                })),
            },
        )
    }

    /// Acquire the lease, waiting out a busy owner but never past `budget`
    /// (the caller's own timeout, not a second clock). The `ETIMEDOUT` error
    /// names who still holds it.
    pub fn wait_for(&self, cache_dir: &Path, owner: &Owner, budget: Duration) -> Result<Guard> {
        self.wait_within(
            cache_dir,
            owner,
            &CancelToken::new().with_timeout(Some(budget)),
        )
    }

    /// Acquire the lease, waiting out a busy owner until `token` stops. Its
    /// deadline counts from wherever the caller set it (a JS call, say), not
    /// from when the wait began; once it passes the wait fails with
    /// `ETIMEDOUT` naming who still holds the lease, and a cancel fails it
    /// with `ABORT_ERR`. The token is looked at once per poll; nothing is
    /// held when it stops. A token without a deadline waits until cancelled.
    pub fn wait_within(
        &self,
        cache_dir: &Path,
        owner: &Owner,
        token: &CancelToken,
    ) -> Result<Guard> {
        loop {
            match token.check() {
                Err(stopped) if stopped.kind() == ErrorKind::Aborted => return Err(stopped),
                _ => {}
            }
            let busy = match self.try_acquire(cache_dir, owner)? {
                AcquireOutcome::Acquired(guard) => return Ok(guard),
                AcquireOutcome::Busy(busy) => busy,
            };
            match token.check() {
                Err(stopped) if stopped.kind() == ErrorKind::TimedOut => {
                    return Err(timed_out(cache_dir, &busy));
                }
                Err(stopped) => return Err(stopped),
                Ok(()) => {}
            }
            thread::sleep(token.within(POLL_INTERVAL));
        }
    }

    /// The wait an acquisition with `budget` makes, its deadline counted
    /// from now (call this where the caller's clock starts, a JS call say):
    /// none for no budget or a zero one (one attempt, `EBUSY` when busy),
    /// otherwise `token` bounded by the budget (`ETIMEDOUT` once it passes).
    pub fn budget_wait(token: &CancelToken, budget: Option<Duration>) -> Option<CancelToken> {
        budget
            .filter(|budget| !budget.is_zero())
            .map(|budget| token.clone().with_timeout(Some(budget)))
    }

    /// Acquire the lease for a build and, holding it, make the cache fresh
    /// for the build's source when `refresh` names one (by default the
    /// owner's worktree at its head, when the owner names both), cleaning
    /// what `build` builds from every layout in the cache. `wait` bounds the
    /// wait for a busy cache as [`Leases::wait_within`] does (its deadline
    /// counts from wherever the caller set it); `None` makes one attempt:
    /// `EBUSY` naming the holder when busy. `cancel` stops the wait
    /// (`ABORT_ERR`) and the refresh (killing a running cargo). A failed
    /// refresh releases the lease.
    pub fn acquire_for_build(
        &self,
        cache_dir: &Path,
        owner: &Owner,
        refresh: Refresh,
        build: &Build,
        wait: Option<&CancelToken>,
        cancel: &CancelToken,
    ) -> Result<(Guard, Option<Freshness>)> {
        cancel.check()?;
        let guard = match wait {
            Some(wait) => self.wait_within(cache_dir, owner, wait)?,
            None => match self.try_acquire(cache_dir, owner)? {
                AcquireOutcome::Acquired(guard) => guard,
                AcquireOutcome::Busy(busy) => return Err(busy.to_error(cache_dir)),
            },
        };
        let freshness = refresh
            .identity(owner)
            .map(|identity| guard.ensure_fresh(&identity, build, cancel))
            .transpose()?;
        Ok((guard, freshness))
    }

    /// Refuse admission while process cleanup holds the output lease, or
    /// while its record cannot be read.
    fn outputs_owned_by_cleanup(&self, files: &LeaseFiles) -> Result<Option<Busy>> {
        Ok(match Slot::output(files, self.trust()).status()? {
            Status::Active(record) => Some(Busy::Active(Box::new(Holder {
                role: Role::Cleanup,
                record,
            }))),
            Status::Unknown(why) => Some(Busy::Unknown(format!("output lease: {why}"))),
            Status::Free | Status::Stale(_) => None,
        })
    }

    fn guard(&self, held: Held) -> Guard {
        Guard {
            record: held.record,
            reclaimed: held.reclaimed,
            role: held.role,
            home: self.home().to_owned(),
            files: held.files,
            cache: held.cache,
            output: held.output,
        }
    }
}

/// What a successful acquisition holds, before it becomes a [`Guard`].
struct Held {
    record: LeaseRecord,
    reclaimed: Option<LeaseRecord>,
    role: Role,
    files: LeaseFiles,
    cache: Option<HeldSlot>,
    output: Option<HeldSlot>,
}

/// `owner` with a nonce naming this one acquisition. Every acquisition
/// passes here, so this is where an owner that names nobody is refused.
fn fresh_nonce(owner: &Owner) -> Result<Owner> {
    owner.check()?;
    Ok(Owner {
        nonce: process::nonce(),
        ..owner.clone()
    })
}

fn timed_out(cache_dir: &Path, busy: &Busy) -> Error {
    Error::new(
        ErrorKind::TimedOut,
        format!(
            "{}: build cache still {} when the wait's budget ran out",
            cache_dir.display(),
            busy.describe(),
        ),
    )
}
