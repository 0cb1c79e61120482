//! The shapes the fronts hand out for a build-cache pool: its inventory, a
//! prune's report and how a member was filled.
//!
//! These keep the pool's `null`s: a member's `holder`, `identity` or `seed`
//! and an inventory's `size` are written as `null` when there is none
//! (napi's `use_nullable`, and no `skip_serializing_if`), the shape scripts
//! have read since pools came. Numbers are `i64` ([`natives_core::view`]).

use natives_core::view::number;
use serde::Serialize;

use super::{
    LeaseStatus,
    holder::{IdentityView, LeaseOwnerView},
    path::lossy,
};
use crate::pool::{
    KeptMember, MemberStatus, PoolInventory, PoolMember, PoolPruneReport, PrunedMember, SeedReport,
    SeedStrategy, Usage,
};

/// How a member was filled, and why that way.
#[cfg_attr(
    feature = "napi",
    napi_derive::napi(object, object_from_js = false, use_nullable = true)
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedReportView {
    /// What was done: `reflink`, `copy` or `cold` (never `auto`).
    pub strategy: SeedStrategy,
    /// The member it was filled from; `null` for a cold one.
    pub from: Option<String>,
    /// Why this strategy.
    pub reason: String,
    /// Files copied.
    pub files: i64,
    /// Bytes copied (logical).
    pub bytes: i64,
    /// Files of the source left out because a cargo was writing them (or
    /// their unit) during the copy: the new member's build makes them.
    pub left_out: i64,
    /// Time the seed took, in ms.
    pub took_ms: i64,
}

impl From<&SeedReport> for SeedReportView {
    fn from(seed: &SeedReport) -> SeedReportView {
        SeedReportView {
            strategy: seed.strategy,
            from: seed.from.clone(),
            reason: seed.reason.clone(),
            files: number(seed.files),
            bytes: number(seed.bytes),
            left_out: number(seed.left_out),
            took_ms: number(seed.took_ms),
        }
    }
}

/// Disk use of one tree.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DiskUsageView {
    /// Bytes its files hold.
    pub logical: i64,
    /// Bytes the filesystem allocated for them (blocks shared with other
    /// members counted here too).
    pub allocated: i64,
    /// Bytes of its files in extents shared with other files.
    pub shared: i64,
    /// Files (each counted once, whatever its names).
    pub files: i64,
}

impl From<Usage> for DiskUsageView {
    fn from(usage: Usage) -> DiskUsageView {
        DiskUsageView {
            logical: number(usage.logical),
            allocated: number(usage.allocated),
            shared: number(usage.shared),
            files: number(usage.files),
        }
    }
}

/// Where a pool member stands.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "lowercase"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolMemberState {
    /// Being filled: never leased.
    Seeding,
    /// Filled: leasable.
    Ready,
    /// Being removed: never leased.
    Discarding,
    /// A directory with a member's name that the pool did not make: never
    /// touched.
    Unregistered,
    /// Its record cannot be read: never touched automatically.
    Unknown,
}

impl PoolMemberState {
    /// The state of `status`, and why it is unknown when it is.
    fn of(status: &MemberStatus) -> (PoolMemberState, Option<String>) {
        use crate::pool::MemberState::{Discarding, Ready, Seeding};
        match status {
            MemberStatus::State(Seeding) => (PoolMemberState::Seeding, None),
            MemberStatus::State(Ready) => (PoolMemberState::Ready, None),
            MemberStatus::State(Discarding) => (PoolMemberState::Discarding, None),
            MemberStatus::Unregistered => (PoolMemberState::Unregistered, None),
            MemberStatus::Unknown(why) => (PoolMemberState::Unknown, Some(why.clone())),
        }
    }
}

/// One member of a pool.
#[cfg_attr(
    feature = "napi",
    napi_derive::napi(object, object_from_js = false, use_nullable = true)
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolMemberView {
    /// Its name (`member-<n>`).
    pub name: String,
    /// Its directory.
    pub dir: String,
    /// Where it stands; only `ready` members are leased.
    pub state: PoolMemberState,
    /// Why its record cannot be read (`unknown`); `null` otherwise.
    pub reason: Option<String>,
    /// Where its lease stands.
    pub lease: LeaseStatus,
    /// Who holds it, when someone does.
    pub holder: Option<LeaseOwnerView>,
    /// The source last built into it.
    pub identity: Option<IdentityView>,
    /// Its disk use (zero when its directory is missing).
    pub usage: DiskUsageView,
    /// When it was last let go, ms since the epoch.
    pub last_used_ms: Option<i64>,
    /// When it was created, ms since the epoch.
    pub created_at_ms: Option<i64>,
    /// How it was filled.
    pub seed: Option<SeedReportView>,
}

impl From<&PoolMember> for PoolMemberView {
    fn from(member: &PoolMember) -> PoolMemberView {
        let (state, reason) = PoolMemberState::of(&member.status);
        PoolMemberView {
            name: member.name.clone(),
            dir: lossy(&member.dir),
            state,
            reason,
            lease: member.lease,
            holder: member.holder.as_ref().map(LeaseOwnerView::from),
            identity: member.identity.as_ref().map(IdentityView::from),
            usage: member.usage.into(),
            last_used_ms: member.last_used_ms.map(number),
            created_at_ms: member.created_at_ms.map(number),
            seed: member.seed.as_ref().map(SeedReportView::from),
        }
    }
}

/// A pool's members, and its settings as last given.
#[cfg_attr(
    feature = "napi",
    napi_derive::napi(object, object_from_js = false, use_nullable = true)
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolInventoryView {
    /// The pool directory, canonical.
    pub dir: String,
    /// Its size (K) as last given to an acquisition.
    pub size: Option<i64>,
    /// Its disk budget as last given.
    pub budget_bytes: Option<i64>,
    /// How long a member created cold was first held: a build from
    /// nothing, the bar a copy must beat.
    pub cold_fill_ms: Option<i64>,
    /// What every member takes on disk together, blocks they share (a
    /// reflink seed's) counted once.
    pub physical: i64,
    /// Its members, by name.
    pub members: Vec<PoolMemberView>,
}

impl From<&PoolInventory> for PoolInventoryView {
    fn from(inventory: &PoolInventory) -> PoolInventoryView {
        PoolInventoryView {
            dir: lossy(&inventory.dir),
            size: inventory.size.map(|k| number(k as u64)),
            budget_bytes: inventory.budget_bytes.map(number),
            cold_fill_ms: inventory.cold_fill_ms.map(number),
            physical: number(inventory.physical),
            members: inventory.members.iter().map(PoolMemberView::from).collect(),
        }
    }
}

/// One member a prune removed.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PrunedMemberView {
    /// Its name.
    pub name: String,
    /// What it took.
    pub usage: DiskUsageView,
}

/// A member beyond the budget that a prune kept.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeptMemberView {
    /// Its name.
    pub name: String,
    /// Why it was kept (busy: who holds it; refused: which rule).
    pub why: String,
}

/// What a prune of a pool did.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolPruneReportView {
    /// What the ready members took on disk before, shared blocks counted
    /// once: what the budget is judged by.
    pub bytes_before: i64,
    /// What they take after, shared blocks counted once.
    pub bytes_after: i64,
    /// Idle members removed, least recently used first.
    pub pruned: Vec<PrunedMemberView>,
    /// Members left half-done by a process that died, removed whole.
    pub discarded: Vec<String>,
    /// Members over the budget that stayed, and why (busy, refused by a
    /// guard).
    pub kept: Vec<KeptMemberView>,
}

impl From<&PoolPruneReport> for PoolPruneReportView {
    fn from(report: &PoolPruneReport) -> PoolPruneReportView {
        PoolPruneReportView {
            bytes_before: number(report.bytes_before),
            bytes_after: number(report.bytes_after),
            pruned: report.pruned.iter().map(PrunedMemberView::from).collect(),
            discarded: report.discarded.clone(),
            kept: report.kept.iter().map(KeptMemberView::from).collect(),
        }
    }
}

impl From<&PrunedMember> for PrunedMemberView {
    fn from(member: &PrunedMember) -> PrunedMemberView {
        PrunedMemberView {
            name: member.name.clone(),
            usage: member.usage.into(),
        }
    }
}

impl From<&KeptMember> for KeptMemberView {
    fn from(member: &KeptMember) -> KeptMemberView {
        KeptMemberView {
            name: member.name.clone(),
            why: member.why.clone(),
        }
    }
}
