//! Memory-directory claims: is a memory folder this agent's alone?
//!
//! The Claude CLI keys an agent's memory by account and working directory
//! (in fact by the whole repository), not by agent, so two agents can share
//! one folder without knowing it. An orchestrator may project memory into,
//! capture from or delete in a folder only when it is proven exclusive; a
//! shared folder is left exactly as it is. So a folder is shared unless
//! proven exclusive, and every failure answers "shared" with a reason.
//!
//! [`check_and_claim`] applies, in order:
//! 1. known shared locations — a blank working directory, `$HOME`, an
//!    ancestor of another agent's directory, a folder the CLI keys by a whole
//!    repository ([`claude_layout`]), memory redirected elsewhere
//!    ([`redirect`]);
//! 2. vetoes — another agent that resolves to the same folder by any route;
//! 3. the machine-wide claim in zone `memory-dir:<hash>` of the store under
//!    the natives home ([`store`]). Every spawn records its claim, a shared
//!    one too: agents of other channels are visible only through their
//!    claims. Any claim by another agent, or by the same agent id under
//!    another OS user, makes the folder shared.
//!
//! Inputs are explicit: the caller passes the agent, the other agents its own
//! channel store knows, its store id and a deadline; no global registry of
//! agents is consulted. The deadline is checked around every store access
//! and every git probe; what cannot finish by then is
//! [`SharedReason::Unproven`].
//!
//! A claim is pruned only by the channel store that wrote it, once that store
//! no longer has the agent: another channel cannot tell a live agent of its
//! neighbour's from a deleted one.

pub mod claude_layout;
pub mod redirect;
mod request;
mod rules;
pub mod store;
mod verdict;

#[cfg(test)]
mod test_fixture;
#[cfg(test)]
mod tests;

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};

use self::store::{ZoneRecord, current_user};
pub use self::{
    redirect::MemoryRedirects,
    request::{Agent, ClaimRequest, KnownAgent},
    store::{Claim, Zone},
    verdict::{Exclusivity, SharedReason},
};
use natives_system::paths::dir_id;
use natives_system::process::now_ms;

/// A folder with claims, for the human "release this folder" action.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimedFolder {
    /// The folder's canonical id when first claimed.
    pub dir: String,
    /// Its zone.
    pub zone: String,
    /// Every claim on it, by agent uid.
    pub claims: BTreeMap<String, Claim>,
}

/// Decide whether `request.memory_dir` is exclusive to `request.agent`,
/// recording the agent's claim in the store under `home` whatever the
/// answer. Never fails: an error or a passed deadline answers shared,
/// [`SharedReason::Unproven`].
pub fn check_and_claim(home: &Path, request: &ClaimRequest, deadline: &CancelToken) -> Exclusivity {
    decide_and_claim(home, request, deadline).unwrap_or_else(|err| Exclusivity::unproven(&err))
}

fn decide_and_claim(
    home: &Path,
    request: &ClaimRequest,
    deadline: &CancelToken,
) -> Result<Exclusivity> {
    require("uid", &request.agent.uid)?;
    require("origin", &request.origin)?;
    deadline.check()?;
    let dir = dir_id(&request.memory_dir)?;
    let zone = Zone::of(&dir);
    let store_agents = request.store_agents();
    let claimants = store::update(home, &zone, &dir, deadline, |record| {
        record_claim(record, request, &store_agents)
    })?;
    if let Some((reason, detail)) = rules::known_shared_or_vetoed(request, &dir, deadline)? {
        return Ok(Exclusivity::shared(reason, detail));
    }
    Ok(claimed_verdict(&dir, &claimants))
}

/// Prune `request.origin`'s stale claims, record the agent's claim (unless
/// its uid is held by another OS user, whose claim is kept), and return the
/// foreign claimants left.
fn record_claim(
    record: &mut ZoneRecord,
    request: &ClaimRequest,
    store_agents: &BTreeSet<&str>,
) -> Vec<String> {
    prune(record, &request.origin, store_agents);
    let user = current_user();
    let uid = &request.agent.uid;
    let foreign_holder = record
        .claims
        .get(uid)
        .is_some_and(|claim| claim.is_foreign(uid, uid, user));
    if !foreign_holder {
        let claim = record.claims.entry(uid.clone()).or_insert_with(|| Claim {
            at_ms: 0,
            origin: String::new(),
            account: String::new(),
            user: None,
            extra: Default::default(),
        });
        claim.at_ms = now_ms();
        claim.origin = request.origin.clone();
        claim.account = request.agent.account.clone();
        claim.user = Some(user);
    }
    record.foreign_claimants(uid, user)
}

fn claimed_verdict(dir: &Path, claimants: &[String]) -> Exclusivity {
    if claimants.is_empty() {
        return Exclusivity::Exclusive;
    }
    Exclusivity::shared(
        SharedReason::Claimed,
        format!(
            "{} is also claimed by {}",
            dir.display(),
            claimants.join(", ")
        ),
    )
}

/// Whether `uid` still holds the only claim on `memory_dir`: the read-only
/// re-check before every capture while the agent runs. The full check ran at
/// spawn; this sees any agent that has claimed the folder since, and a
/// release by a human. Never fails: errors answer [`SharedReason::Unproven`].
pub fn held_exclusively(
    home: &Path,
    memory_dir: &Path,
    uid: &str,
    deadline: &CancelToken,
) -> Exclusivity {
    held(home, memory_dir, uid, deadline).unwrap_or_else(|err| Exclusivity::unproven(&err))
}

fn held(home: &Path, memory_dir: &Path, uid: &str, deadline: &CancelToken) -> Result<Exclusivity> {
    require("uid", uid)?;
    deadline.check()?;
    let dir = dir_id(memory_dir)?;
    let record = store::read(home, &Zone::of(&dir), deadline)?;
    let user = current_user();
    let mine = record
        .as_ref()
        .and_then(|r| r.claims.get(uid))
        .is_some_and(|claim| !claim.is_foreign(uid, uid, user));
    if !mine {
        return Ok(Exclusivity::shared(
            SharedReason::Unproven,
            format!("{uid} holds no claim on {} (released?)", dir.display()),
        ));
    }
    let claimants = record.map_or_else(Vec::new, |r| r.foreign_claimants(uid, user));
    Ok(claimed_verdict(&dir, &claimants))
}

/// Who is releasing a claim, which decides whose claims it may remove.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Releaser {
    /// The OS user running this process: a claim recorded as another user's
    /// is refused with `EPERM` naming that user. The default.
    #[default]
    ClaimOwner,
    /// An operator overriding that check: any user's claim is removed.
    Operator,
}

/// Remove `uid`'s claim on `memory_dir` — a human released the folder.
/// Returns whether there was one. The agent claims it again at its next
/// spawn there. Only the OS user that made the claim may remove it, unless
/// `releaser` is [`Releaser::Operator`]: an agent id names an agent, not a
/// user, and another user's agent may still be using the folder.
pub fn release(
    home: &Path,
    memory_dir: &Path,
    uid: &str,
    deadline: &CancelToken,
    releaser: Releaser,
) -> Result<bool> {
    let dir = dir_id(memory_dir)?;
    release_in_zone(home, &Zone::of(&dir), &dir, uid, deadline, releaser)
}

/// [`release`] of the folder a person names: a path, or a zone name as
/// `claims list` shows it (for a folder whose path no longer resolves as it
/// did). Every front releases through this, so the rule that tells a zone
/// from a folder lives here.
pub fn release_named(
    home: &Path,
    named: &str,
    uid: &str,
    deadline: &CancelToken,
    releaser: Releaser,
) -> Result<bool> {
    match Zone::parse(named) {
        Some(zone) => release_in_zone(home, &zone, Path::new(""), uid, deadline, releaser),
        None => release(home, Path::new(named), uid, deadline, releaser),
    }
}

/// [`release`] by zone, for a folder whose path no longer resolves as it did.
pub fn release_in_zone(
    home: &Path,
    zone: &Zone,
    dir: &Path,
    uid: &str,
    deadline: &CancelToken,
    releaser: Releaser,
) -> Result<bool> {
    require("uid", uid)?;
    // With no record there is no claim: nothing to lock, nothing to create.
    if !store::has_record(home, zone, deadline)? {
        return Ok(false);
    }
    store::update(home, zone, dir, deadline, |record| {
        let Some(claim) = record.claims.get(uid) else {
            return Ok(false);
        };
        if releaser == Releaser::ClaimOwner {
            refuse_another_users_claim(record, uid, claim)?;
        }
        record.claims.remove(uid);
        Ok(true)
    })?
}

fn refuse_another_users_claim(record: &ZoneRecord, uid: &str, claim: &Claim) -> Result<()> {
    let me = current_user();
    match claim.user {
        Some(owner) if owner != me => Err(Error::new(
            ErrorKind::NotOwner,
            format!(
                "{uid}'s claim on {} was made by OS user {owner}, not by this one ({me}): \
                 only that user may release it, unless an operator overrides the check",
                record.dir
            ),
        )),
        _ => Ok(()),
    }
}

/// Every folder on this machine `uid` holds a claim on, with the others
/// there. Records that cannot be read are skipped here; [`list`] reports them.
pub fn claims_of(home: &Path, uid: &str) -> Result<Vec<ClaimedFolder>> {
    Ok(list(home)?
        .folders
        .into_iter()
        .filter(|folder| folder.claims.contains_key(uid))
        .collect())
}

/// Every claimed folder in the store under `home`, and the records that
/// could not be read.
#[derive(Debug, Default)]
pub struct ClaimsListing {
    /// Folders with at least one claim, in zone order.
    pub folders: Vec<ClaimedFolder>,
    /// Record files that could not be read, with why.
    pub unreadable: Vec<(PathBuf, Error)>,
}

/// List the store: every folder with claims.
pub fn list(home: &Path) -> Result<ClaimsListing> {
    let listing = store::list(home)?;
    let folders = listing
        .records
        .into_iter()
        .filter(|record| !record.claims.is_empty())
        .map(|record| ClaimedFolder {
            dir: record.dir,
            zone: record.zone,
            claims: record.claims,
        })
        .collect();
    Ok(ClaimsListing {
        folders,
        unreadable: listing.unreadable,
    })
}

/// Whether another agent uses `memory_dir`: it has claimed it (in any
/// channel), or one of `others` (the caller's store) resolves to it.
/// Read-only, for offering a folder for adoption, which must exclude shared
/// folders. Errors answer `true`: a folder not proven unused is used.
pub fn used_by_another(
    home: &Path,
    memory_dir: &Path,
    uid: &str,
    others: &[KnownAgent],
    deadline: &CancelToken,
) -> bool {
    used(home, memory_dir, uid, others, deadline).unwrap_or(true)
}

fn used(
    home: &Path,
    memory_dir: &Path,
    uid: &str,
    others: &[KnownAgent],
    deadline: &CancelToken,
) -> Result<bool> {
    deadline.check()?;
    let dir = dir_id(memory_dir)?;
    for other in others.iter().filter(|other| other.uid != uid) {
        if let Some(theirs) = other.memory_dir.as_deref()
            && dir_id(theirs)? == dir
        {
            return Ok(true);
        }
    }
    let record = store::read(home, &Zone::of(&dir), deadline)?;
    Ok(record.is_some_and(|r| !r.foreign_claimants(uid, current_user()).is_empty()))
}

/// Remove, in every zone, the claims written by the channel store `origin`
/// for agents it no longer has (`store_agents` is every agent it has).
/// Returns how many were removed. Claims of other stores are never touched.
pub fn prune_stale(
    home: &Path,
    origin: &str,
    store_agents: &[String],
    deadline: &CancelToken,
) -> Result<usize> {
    require("origin", origin)?;
    let keep: BTreeSet<&str> = store_agents.iter().map(String::as_str).collect();
    let mut pruned = 0;
    for record in store::list(home)?.records {
        let Some(zone) = Zone::parse(&record.zone) else {
            continue;
        };
        let stale = record
            .claims
            .iter()
            .any(|(uid, claim)| claim_is_stale(uid, claim, origin, &keep));
        if stale {
            pruned += store::update(home, &zone, Path::new(&record.dir), deadline, |r| {
                prune(r, origin, &keep)
            })?;
        }
    }
    Ok(pruned)
}

/// Whether a claim can be shown to be stale: only the store that wrote it can
/// say its agent is gone.
pub fn claim_is_stale(
    uid: &str,
    claim: &Claim,
    origin: &str,
    store_agents: &BTreeSet<&str>,
) -> bool {
    claim.origin == origin && !store_agents.contains(uid)
}

fn prune(record: &mut ZoneRecord, origin: &str, store_agents: &BTreeSet<&str>) -> usize {
    let before = record.claims.len();
    record
        .claims
        .retain(|uid, claim| !claim_is_stale(uid, claim, origin, store_agents));
    before - record.claims.len()
}

fn require(name: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(format!("{name} must not be empty")));
    }
    Ok(())
}
