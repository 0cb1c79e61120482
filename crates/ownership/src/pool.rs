//! Build-cache pools: K cache directories for one workspace, so that N
//! agents build at once, none waits while the pool has room, none builds
//! from nothing once a member is warm, and none runs a stale binary.
//!
//! A lease makes one shared `CARGO_TARGET_DIR` safe, but serialises its
//! borrowers. A pool is a directory of members (`<pool>/member-<n>`), each
//! a cache directory leased like any other ([`crate::lease`]), so the
//! guarantees of a lease hold per member: one holder at a time, a dead
//! holder's member taken over, the member refreshed for the holder's source
//! ([`crate::fresh`]) on every layout cargo laid out.
//!
//! [`Leases::acquire_from_pool`] leases a free ready member at once, the
//! one closest to the owner's source (its worktree at its head first, then
//! the same head, then the same worktree, then the most recently used).
//! When none is free and the pool has fewer than K members, it creates one,
//! filled from the warmest member no cargo is writing (`seed`) and then
//! refreshed for the owner, so a new member compiles only the workspace's
//! own crates. When the pool is full and every member busy, it waits within
//! the caller's budget, as a lease does. It returns the lease with the
//! environment to build with (`CARGO_TARGET_DIR` and cargo's build
//! directory, both the member, so no configuration sends intermediate
//! output to a directory the members would share).
//!
//! # Crash safety
//!
//! A member's record (`member`) says whether it is `seeding`, `ready` or
//! `discarding`; only a `ready` member is leased. `ready` is written only
//! after every copied byte and the identity the copy came from are flushed
//! to disk. A member whose filler died is discarded whole by the next
//! acquisition or prune (`discard`), in an order that a kill at any step
//! leaves it unleasable and finished by the next pass.
//!
//! # Disk
//!
//! A seed shares its source's blocks where the filesystem clones files, and
//! on XFS a member let go shares the blocks its own builds wrote alike with
//! the other ready members' (`dedupe`), so members that differ by one
//! crate's build take little more than one. With a budget (judged by what the members take on disk together, blocks
//! they share counted once), idle ready members beyond it are removed least
//! recently used first, under their maintenance lease and the prune guard, never
//! one that is leased, that a cargo is writing or that a seed is copying (a
//! seed holds the member's reading lock shared, which no cargo takes); an
//! acquisition
//! prunes after it has its member, and [`Leases::prune_pool`] prunes on
//! demand. [`Leases::pool_inventory`] shows members, holders, identities,
//! sizes and last use.
//!
//! Short decisions (which member to lease or create) are made under a
//! pool lock ([`natives_system::lock::wait_exclusive`]), never held across a copy,
//! a refresh or a wait.

mod clone;
mod dedupe;
mod dir;
mod discard;
mod extents;
mod inventory;
mod member;
mod seed;

use std::{
    collections::HashSet,
    fs,
    path::{Path, PathBuf},
    thread,
    time::{Duration, Instant},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};

pub use inventory::{MemberStatus, PoolInventory, PoolMember, Usage, usage};
pub use member::MemberState;
pub use seed::{SeedReport, SeedStrategy};

use self::{
    dir::PoolDir,
    extents::Footprint,
    member::{MemberRecord, MemberView, PoolRecord, Recorded},
    seed::Seeding,
};
use crate::{
    fresh::{Build, Freshness, Refresh, Target},
    lease::{AcquireOutcome, Guard, LeaseRecord, Leases, Owner, POLL_INTERVAL},
};
use natives_system::{crash, durable, paths::dir_id, process::now_ms};

/// How many members a pool has at most unless told otherwise.
pub const DEFAULT_POOL_SIZE: usize = 4;

/// How many names past the members' count a new member may be given: a
/// few names may be held by leases taken outside the pool.
const NAME_SLACK: usize = 16;

/// What an acquisition from a pool is asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// At most this many members (K). Default: [`DEFAULT_POOL_SIZE`].
    pub size: usize,
    /// Prune idle members beyond this many bytes once a member is held.
    /// Default: none (no pruning).
    pub budget_bytes: Option<u64>,
    /// How a new member is filled. Default: [`SeedStrategy::Auto`].
    pub seed: SeedStrategy,
    /// Which source the member is refreshed for. Default: the owner's.
    pub refresh: Refresh,
    /// What the build builds. Default: the worktree's workspace.
    pub workspaces: Target,
}

impl Default for PoolOptions {
    fn default() -> PoolOptions {
        PoolOptions {
            size: DEFAULT_POOL_SIZE,
            budget_bytes: None,
            seed: SeedStrategy::Auto,
            refresh: Refresh::OwnersSource,
            workspaces: Target::Worktree,
        }
    }
}

/// A member held from a pool. Releases on drop; [`PoolLease::release`]
/// reports errors.
#[derive(Debug)]
pub struct PoolLease {
    guard: Option<Guard>,
    pool: PoolDir,
    name: String,
    dir: PathBuf,
    freshness: Option<Freshness>,
    seed: Option<SeedReport>,
    pruned: Option<PoolPruneReport>,
    /// Set for a member created cold: when, to measure a build from nothing.
    cold_since: Option<Instant>,
}

impl PoolLease {
    /// The member's name (`member-<n>`).
    pub fn member(&self) -> &str {
        &self.name
    }

    /// The member's directory, canonical.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The environment to build with: `CARGO_TARGET_DIR` and
    /// `CARGO_BUILD_BUILD_DIR`, both the member.
    pub fn env(&self) -> Vec<(String, PathBuf)> {
        pool_env(&self.dir)
    }

    /// The member's lease record.
    pub fn record(&self) -> Option<&LeaseRecord> {
        self.guard.as_ref().map(Guard::record)
    }

    /// The dead owner's record this acquisition replaced, if any.
    pub fn reclaimed(&self) -> Option<&LeaseRecord> {
        self.guard.as_ref().and_then(Guard::reclaimed)
    }

    /// What the refresh did, when one was asked for.
    pub fn freshness(&self) -> Option<&Freshness> {
        self.freshness.as_ref()
    }

    /// How the member was filled, when this acquisition created it.
    pub fn seed(&self) -> Option<&SeedReport> {
        self.seed.as_ref()
    }

    /// What the prune to the budget did, when a budget was given.
    pub fn pruned(&self) -> Option<&PoolPruneReport> {
        self.pruned.as_ref()
    }

    /// Let the member go, recording when it was used, after sharing the
    /// blocks its files hold alike with the other ready members' where the
    /// filesystem can (see `dedupe`; a drop lets go without it).
    pub fn release(mut self) -> Result<()> {
        if self.guard.is_some() {
            self.share_blocks();
        }
        self.release_held()
    }

    fn release_held(&mut self) -> Result<()> {
        let Some(guard) = self.guard.take() else {
            return Ok(());
        };
        let used = self.note_use();
        let measured = match self.cold_since.take() {
            Some(since) => self.pool.note_cold_fill(since.elapsed()),
            None => Ok(()),
        };
        guard.release().and(used).and(measured)
    }

    /// Share the blocks the member's files hold alike with the other ready
    /// members' (see `dedupe`), while it is still ours, so no cargo writes
    /// it meanwhile.
    fn share_blocks(&self) {
        dedupe::share_alike(&self.dir, || {
            let members = self.pool.members().unwrap_or_default().into_iter();
            let ready = members.filter(|m| m.in_state(MemberState::Ready).is_some());
            ready
                .map(|m| m.dir)
                .filter(|dir| *dir != self.dir)
                .collect()
        });
    }

    /// Write the member's last use (it is still ours, so nobody else does).
    fn note_use(&self) -> Result<()> {
        let path = self.pool.files.member(&self.name);
        match member::read_member(&path)? {
            Recorded::Member(record) if record.state == MemberState::Ready => {
                let used = MemberRecord {
                    last_used_ms: now_ms(),
                    ..record
                };
                durable::replace(&path, &used.to_bytes())
            }
            _ => Ok(()),
        }
    }
}

impl Drop for PoolLease {
    fn drop(&mut self) {
        let _ = self.release_held();
    }
}

/// The environment a build in the member `dir` is given.
pub fn pool_env(dir: &Path) -> Vec<(String, PathBuf)> {
    ["CARGO_TARGET_DIR", "CARGO_BUILD_BUILD_DIR"]
        .map(|name| (name.to_owned(), dir.to_owned()))
        .to_vec()
}

/// One member removed by a prune.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PrunedMember {
    /// Its name.
    pub name: String,
    /// What it took.
    pub usage: Usage,
}

/// What a prune of a pool did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolPruneReport {
    /// What the ready members took on disk before (shared blocks once).
    pub bytes_before: u64,
    /// What the ready members take on disk after (shared blocks once).
    pub bytes_after: u64,
    /// Idle members removed to fit the budget, least recently used first.
    pub pruned: Vec<PrunedMember>,
    /// Members left half-seeded or half-removed by a process that died,
    /// removed whole.
    pub discarded: Vec<String>,
    /// Members beyond the budget that were kept, with why.
    pub kept: Vec<KeptMember>,
}

/// A member beyond the budget that a prune kept.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeptMember {
    /// Its name.
    pub name: String,
    /// Why it was kept (busy: who holds it; refused: which rule).
    pub why: String,
}

impl PoolDir {
    /// Record `options`' settings (keeping what was measured).
    fn note_settings(&self, options: &PoolOptions) -> Result<()> {
        let old = member::read_pool(&self.files.record);
        let mut record = PoolRecord::new(self.id.clone(), options.size, options.budget_bytes);
        record.cold_fill_ms = old.as_ref().and_then(|r| r.cold_fill_ms);
        if old.as_ref() == Some(&record) {
            return Ok(());
        }
        member::write_pool(&self.files.record, &record)
    }

    /// Record how long a build from nothing took.
    fn note_cold_fill(&self, took: Duration) -> Result<()> {
        let _lock = self.lock(&CancelToken::new())?;
        let mut record = member::read_pool(&self.files.record)
            .unwrap_or_else(|| PoolRecord::new(self.id.clone(), DEFAULT_POOL_SIZE, None));
        record.cold_fill_ms = Some(took.as_millis() as u64);
        member::write_pool(&self.files.record, &record)
    }
}

/// What one look at the pool under its lock found.
#[expect(
    clippy::large_enum_variant,
    reason = "made once per look at the pool, and moved once"
)]
enum Attempt {
    /// A ready member, now leased.
    Free(Guard, MemberView),
    /// A new member, leased and marked `seeding`; with the ready members,
    /// best source first.
    New {
        guard: Guard,
        name: String,
        sources: Vec<MemberView>,
    },
    /// Full, every member busy (who holds them).
    Full(String),
}

/// Members held for removal, with their records re-read under the hold.
type Leftovers = Vec<(discard::Doomed, MemberRecord)>;

impl Leases {
    /// Lease a member of the pool at `pool` (created if missing) for
    /// `owner`, and refresh it for the owner's source (see the module
    /// docs). `wait` bounds the wait while the pool is full and busy, as
    /// [`Leases::wait_within`] does;
    /// `None` makes one attempt: `EBUSY` naming the holders when full.
    /// `cancel` stops the wait (`ABORT_ERR`), a seed and a refresh. A failed
    /// refresh releases the member.
    pub fn acquire_from_pool(
        &self,
        pool: &Path,
        owner: &Owner,
        options: &PoolOptions,
        wait: Option<&CancelToken>,
        cancel: &CancelToken,
    ) -> Result<PoolLease> {
        cancel.check()?;
        owner.check()?;
        if options.size == 0 {
            return Err(Error::invalid("a pool's size must be at least 1"));
        }
        let pool = PoolDir::create(self.home(), pool)?;
        let mut lease = self.take_member(&pool, owner, options, wait, cancel)?;
        let build = Build {
            workspaces: options.workspaces.clone(),
            build_dir: Some(lease.dir.clone()),
        };
        if let (Some(guard), Some(identity)) =
            (&lease.guard, options.refresh.clone().identity(owner))
        {
            lease.freshness = Some(guard.ensure_fresh(&identity, &build, cancel)?);
        }
        if let Some(budget) = options.budget_bytes {
            lease.pruned = Some(self.prune_within(&pool, budget, owner)?);
        }
        Ok(lease)
    }

    /// Prune the pool at `pool` to `budget` bytes: members left half-done
    /// by a dead process are removed whole, then idle ready members least
    /// recently used first, as `owner`, until the rest fits (see the module
    /// docs). Never a leased member.
    pub fn prune_pool(&self, pool: &Path, budget: u64, owner: &Owner) -> Result<PoolPruneReport> {
        owner.check()?;
        let pool = PoolDir::new(self.home(), pool)?;
        self.prune_within(&pool, budget, owner)
    }

    /// What [`Leases::prune_pool`] would remove now: idle ready members
    /// (nobody holds their lease), least recently used first, until the
    /// rest fits `budget`. Holds and removes nothing (a dry run).
    pub fn plan_pool_prune(&self, pool: &Path, budget: u64) -> Result<Vec<PrunedMember>> {
        let pool = PoolDir::new(self.home(), pool)?;
        let members = pool.members()?;
        let measured = measure_ready(&members)?;
        let mut left: Vec<bool> = vec![true; measured.len()];
        let mut doomed = Vec::new();
        for (i, (view, used, _)) in measured.iter().enumerate() {
            if remaining(&measured, &left) <= budget {
                break;
            }
            if self.classify(&view.dir)?.in_use() || self.outputs_in_use(&view.dir)? {
                continue;
            }
            left[i] = false;
            doomed.push(PrunedMember {
                name: view.name.clone(),
                usage: *used,
            });
        }
        Ok(doomed)
    }

    /// A free member leased, or a new one created and filled; waiting
    /// while the pool is full and busy.
    fn take_member(
        &self,
        pool: &PoolDir,
        owner: &Owner,
        options: &PoolOptions,
        wait: Option<&CancelToken>,
        cancel: &CancelToken,
    ) -> Result<PoolLease> {
        loop {
            let (attempt, leftovers) = self.attempt(pool, owner, options, cancel)?;
            finish_discards(pool, leftovers)?;
            let busy = match attempt {
                Attempt::Free(guard, view) => return Ok(pool.lease(guard, &view.name, None)),
                Attempt::New {
                    guard,
                    name,
                    sources,
                } => return self.create(pool, guard, &name, &sources, options, cancel),
                Attempt::Full(busy) => busy,
            };
            wait_while_full(pool, options.size, &busy, wait, cancel)?;
        }
    }

    /// One look at the pool under its lock: leftovers held for removal, and
    /// a free member leased, a new one marked, or why neither.
    fn attempt(
        &self,
        pool: &PoolDir,
        owner: &Owner,
        options: &PoolOptions,
        cancel: &CancelToken,
    ) -> Result<(Attempt, Leftovers)> {
        let _lock = pool.lock(cancel)?;
        pool.note_settings(options)?;
        let members = pool.members()?;
        let leftovers = self.hold_leftovers(pool, &members, owner)?;
        let gone: HashSet<&str> = leftovers.iter().map(|(_, r)| r.name.as_str()).collect();
        let ready = ranked(&members, owner);
        for view in &ready {
            if let AcquireOutcome::Acquired(guard) = self.try_acquire(&view.dir, owner)? {
                return Ok((Attempt::Free(guard, (*view).clone()), leftovers));
            }
        }
        let counted = members
            .iter()
            .filter(|m| counts(m) && !gone.contains(m.name.as_str()))
            .count();
        if counted < options.size
            && let Some((guard, name)) = self.mark_new(pool, &members, owner)?
        {
            let sources = ready.into_iter().cloned().collect();
            return Ok((
                Attempt::New {
                    guard,
                    name,
                    sources,
                },
                leftovers,
            ));
        }
        Ok((Attempt::Full(self.holders(&members)?), leftovers))
    }

    /// Leftovers (`seeding` or `discarding` members nobody holds) held for
    /// removal.
    fn hold_leftovers(
        &self,
        pool: &PoolDir,
        members: &[MemberView],
        owner: &Owner,
    ) -> Result<Leftovers> {
        let mut held = Vec::new();
        for view in members.iter().filter(|m| is_leftover(m)) {
            let Ok(doomed) = discard::hold(self, (&pool.id, &pool.files), view, owner)? else {
                continue;
            };
            // Re-read under the hold: its filler may have finished meanwhile.
            if let Recorded::Member(record) = member::read_member(&pool.files.member(&view.name))?
                && record.state != MemberState::Ready
            {
                held.push((doomed, record));
            }
        }
        Ok(held)
    }

    /// Lease the lowest free member name and publish its `seeding` record.
    fn mark_new(
        &self,
        pool: &PoolDir,
        members: &[MemberView],
        owner: &Owner,
    ) -> Result<Option<(Guard, String)>> {
        let taken: HashSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
        let names = (0..=members.len() + NAME_SLACK)
            .map(member::member_name)
            .filter(|name| !taken.contains(name.as_str()));
        for name in names {
            let dir = member::member_dir(&pool.id, &name);
            let AcquireOutcome::Acquired(guard) = self.try_acquire(&dir, owner)? else {
                continue;
            };
            crash::point(seed::points::LEASED);
            let record = MemberRecord::seeding(&name, dir, now_ms());
            if durable::publish(&pool.files.member(&name), &record.to_bytes())? {
                crash::point(seed::points::MARKED);
                return Ok(Some((guard, name)));
            }
        }
        Ok(None)
    }

    /// Make the member `name` (leased and marked), fill it and mark it
    /// ready.
    fn create(
        &self,
        pool: &PoolDir,
        guard: Guard,
        name: &str,
        sources: &[MemberView],
        options: &PoolOptions,
        cancel: &CancelToken,
    ) -> Result<PoolLease> {
        let dir = member::member_dir(&pool.id, name);
        let record_path = pool.files.member(name);
        if let Err(err) = fs::create_dir(&dir) {
            // Not made by the pool: its record goes, the directory stays.
            durable::remove(&record_path)?;
            return Err(Error::io(&dir, err));
        }
        crash::point(seed::points::CREATED);
        let seeding = Seeding {
            home: self.home(),
            dest: &dir,
            strategy: options.seed,
            sources,
            cold_fill: pool.cold_fill(),
            files: &pool.files,
            cancel,
        };
        let report = seed::seed(&seeding)?;
        let Recorded::Member(marked) = member::read_member(&record_path)? else {
            return Err(Error::new(
                ErrorKind::Changed,
                format!("{}: its record changed while it was seeded", dir.display()),
            ));
        };
        let ready = MemberRecord {
            state: MemberState::Ready,
            seed: Some(report.clone()),
            last_used_ms: now_ms(),
            ..marked
        };
        durable::replace(&record_path, &ready.to_bytes())?;
        crash::point(seed::points::READY);
        let cold = report.strategy == SeedStrategy::Cold;
        let mut lease = pool.lease(guard, name, Some(report));
        lease.cold_since = cold.then(Instant::now);
        Ok(lease)
    }

    /// Who holds each member, for the error of a full pool.
    fn holders(&self, members: &[MemberView]) -> Result<String> {
        let mut held = Vec::new();
        for view in members.iter().filter(|m| counts(m)) {
            let status = self.classify(&view.dir)?;
            let who = match &status {
                crate::Status::Active(Some(record)) => record.owner.describe(),
                other => other.name().to_owned(),
            };
            held.push(format!("{} ({who})", view.name));
        }
        Ok(held.join(", "))
    }

    /// Remove leftovers, then idle ready members least recently used
    /// first until the rest fits `budget`.
    fn prune_within(&self, pool: &PoolDir, budget: u64, owner: &Owner) -> Result<PoolPruneReport> {
        let members = pool.members()?;
        let mut report = PoolPruneReport::default();
        for (doomed, record) in self.hold_leftovers(pool, &members, owner)? {
            report.discarded.push(record.name.clone());
            discard::discard(&pool.home, &pool.files, &record, doomed)?;
        }
        let measured = measure_ready(&members)?;
        let mut left: Vec<bool> = vec![true; measured.len()];
        report.bytes_before = remaining(&measured, &left);
        for (i, (view, used, _)) in measured.iter().enumerate() {
            if remaining(&measured, &left) <= budget {
                break;
            }
            match self.prune_member(pool, view, owner)? {
                Ok(()) => {
                    left[i] = false;
                    report.pruned.push(PrunedMember {
                        name: view.name.clone(),
                        usage: *used,
                    });
                }
                Err(kept) => report.kept.push(KeptMember {
                    name: view.name.clone(),
                    why: kept.describe(),
                }),
            }
        }
        report.bytes_after = remaining(&measured, &left);
        Ok(report)
    }

    /// Remove the idle ready member `view`, unless it is in use or was used
    /// since it was listed.
    fn prune_member(
        &self,
        pool: &PoolDir,
        view: &MemberView,
        owner: &Owner,
    ) -> Result<std::result::Result<(), discard::Kept>> {
        let doomed = match discard::hold(self, (&pool.id, &pool.files), view, owner)? {
            Ok(doomed) => doomed,
            Err(kept) => return Ok(Err(kept)),
        };
        let listed = view.in_state(MemberState::Ready);
        match member::read_member(&pool.files.member(&view.name))? {
            Recorded::Member(record) if Some(&record) == listed => {
                discard::discard(&pool.home, &pool.files, &record, doomed)?;
                Ok(Ok(()))
            }
            _ => Ok(Err(discard::Kept::Changed)),
        }
    }
}

impl PoolDir {
    fn lease(&self, guard: Guard, name: &str, seed: Option<SeedReport>) -> PoolLease {
        PoolLease {
            dir: member::member_dir(&self.id, name),
            guard: Some(guard),
            pool: self.clone(),
            name: name.to_owned(),
            freshness: None,
            seed,
            pruned: None,
            cold_since: None,
        }
    }
}

/// Finish removing the leftovers held.
fn finish_discards(pool: &PoolDir, leftovers: Leftovers) -> Result<()> {
    for (doomed, record) in leftovers {
        discard::discard(&pool.home, &pool.files, &record, doomed)?;
    }
    Ok(())
}

/// Wait one poll while the pool is full, or fail: `EBUSY` without a wait,
/// `ETIMEDOUT` once it is spent (both naming the holders), `ABORT_ERR`.
fn wait_while_full(
    pool: &PoolDir,
    size: usize,
    busy: &str,
    wait: Option<&CancelToken>,
    cancel: &CancelToken,
) -> Result<()> {
    cancel.check()?;
    let full = |kind, end: &str| {
        Error::new(
            kind,
            format!(
                "{}: build-cache pool full ({size} members, every one busy: {busy}){end}",
                pool.id.display()
            ),
        )
    };
    let Some(wait) = wait else {
        return Err(full(ErrorKind::Busy, ""));
    };
    match wait.check() {
        Err(stopped) if stopped.kind() == ErrorKind::TimedOut => {
            Err(full(ErrorKind::TimedOut, " when the wait's budget ran out"))
        }
        Err(stopped) => Err(stopped),
        Ok(()) => {
            thread::sleep(wait.within(POLL_INTERVAL));
            Ok(())
        }
    }
}

/// Ready members, closest to `owner`'s source first: its worktree at its
/// head, then the same head, then the same worktree, then the most
/// recently used.
fn ranked<'a>(members: &'a [MemberView], owner: &Owner) -> Vec<&'a MemberView> {
    let worktree = owner.worktree.as_deref().and_then(|w| dir_id(w).ok());
    let head = owner.head.as_deref();
    let closeness = |view: &MemberView| {
        let identity = view.identity.as_ref();
        let same_head = identity.is_some_and(|i| Some(i.head.as_str()) == head);
        let same_tree = identity.is_some_and(|i| Some(&i.worktree) == worktree.as_ref());
        (
            same_head && same_tree,
            same_head,
            same_tree,
            view.last_used_ms(),
        )
    };
    let mut ready: Vec<&MemberView> = members
        .iter()
        .filter(|m| m.in_state(MemberState::Ready).is_some())
        .collect();
    ready.sort_by_key(|view| std::cmp::Reverse(closeness(view)));
    ready
}

/// Whether `view` takes a place among the K: seeding, ready, or unknown.
fn counts(view: &MemberView) -> bool {
    match &view.record {
        Recorded::Member(record) => record.state != MemberState::Discarding,
        Recorded::Unreadable(_) => true,
        Recorded::Absent => false,
    }
}

fn is_leftover(view: &MemberView) -> bool {
    matches!(&view.record, Recorded::Member(r) if r.state != MemberState::Ready)
}

/// The ready members with their disk use, least recently used first.
fn measure_ready(members: &[MemberView]) -> Result<Vec<(&MemberView, Usage, Footprint)>> {
    let mut measured = Vec::new();
    for view in members
        .iter()
        .filter(|m| m.in_state(MemberState::Ready).is_some())
    {
        let (usage, footprint) = inventory::measure(&view.dir)?;
        measured.push((view, usage, footprint));
    }
    measured.sort_by_key(|(view, _, _)| view.last_used_ms());
    Ok(measured)
}

/// What the members `left` marks take on disk together, shared blocks once.
fn remaining(measured: &[(&MemberView, Usage, Footprint)], left: &[bool]) -> u64 {
    let kept = measured
        .iter()
        .zip(left)
        .filter(|(_, kept)| **kept)
        .map(|((_, _, footprint), _)| footprint);
    Footprint::combined(kept)
}

#[cfg(test)]
mod tests;
