//! The shapes the fronts hand out for leases and claims: one view per
//! answer, with the field names of the TypeScript API's objects.
//!
//! Why here: the command line's `--json` and the addon's objects describe
//! the same leases and the same claims, and two hand-written shapes drift
//! apart (a field one front has and the other lacks, `null` in one and left
//! out in the other). Each view is serde for the command line and, with the
//! crate's `napi` feature, an N-API object for the addon, whose TypeScript
//! declaration napi writes from these very fields and docs. A field is left
//! out, never written as `null`, when it is `None`. Numbers are `i64`
//! ([`natives_core::view`]). Fields are spelled here rather than derived
//! from the records, so an on-disk format can change without changing what
//! scripts read.

use natives_core::view::number;
use serde::Serialize;

use self::path::lossy;
use crate::{
    claims::{Claim, ClaimedFolder, Exclusivity, SharedReason},
    fresh::Freshness,
    lease::{Entry, EntryStatus, KeptReason, LeaseRecord, PruneReport, Released, Status},
};

mod holder;
mod path;
mod pool;

/// Where a lease stands; defined beside the lease's [`Status`] so the pool's
/// inventory, which the views show, needs nothing from here.
pub use crate::lease::LeaseStatus;
pub use holder::{IdentityView, LeaseOwnerView};
pub use pool::{
    DiskUsageView, KeptMemberView, PoolInventoryView, PoolMemberState, PoolMemberView,
    PoolPruneReportView, PrunedMemberView, SeedReportView,
};

/// A lease record.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseRecordView {
    /// The cache directory's canonical path.
    pub dir: String,
    /// Who holds (or held) the lease.
    pub owner: LeaseOwnerView,
    /// When it was acquired, in milliseconds since the Unix epoch.
    pub acquired_at_ms: i64,
}

impl From<&LeaseRecord> for LeaseRecordView {
    fn from(record: &LeaseRecord) -> LeaseRecordView {
        LeaseRecordView {
            dir: lossy(&record.dir),
            owner: LeaseOwnerView::from(&record.owner),
            acquired_at_ms: number(record.acquired_at_ms),
        }
    }
}

/// What a refresh did.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FreshnessView {
    /// `false`: the recorded identity matched and nothing ran.
    pub refreshed: bool,
    /// Workspace packages whose output was cleaned.
    pub cleaned: Vec<String>,
}

impl From<&Freshness> for FreshnessView {
    fn from(freshness: &Freshness) -> FreshnessView {
        match freshness {
            Freshness::Unchanged => FreshnessView {
                refreshed: false,
                cleaned: Vec::new(),
            },
            Freshness::Refreshed { cleaned } => FreshnessView {
                refreshed: true,
                cleaned: cleaned.clone(),
            },
        }
    }
}

/// Where a lease stands, and what its record says.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheStatusView {
    /// Where the lease stands.
    pub status: LeaseStatus,
    /// The holder's (or dead owner's) record, when there is a readable one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<LeaseRecordView>,
    /// Why the record cannot be read (`unknown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Held by a live owner, unreadable, or its outputs owned by cleanup.
    pub in_use: bool,
}

impl CacheStatusView {
    /// `status`, and whether the cache counts as `in_use`.
    pub fn of(status: &Status, in_use: bool) -> CacheStatusView {
        let (record, reason) = match status {
            Status::Free => (None, None),
            Status::Active(record) => (record.as_ref(), None),
            Status::Stale(record) => (Some(record), None),
            Status::Unknown(why) => (None, Some(why.clone())),
        };
        CacheStatusView {
            status: LeaseStatus::of(status),
            record: record.map(LeaseRecordView::from),
            reason,
            in_use,
        }
    }
}

/// One registered cache directory.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheEntryView {
    /// The cache directory; absent when neither its record nor the catalog
    /// names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// The stable name of its records.
    pub slug: String,
    /// Where its lease stands.
    pub status: LeaseStatus,
    /// Why its record cannot be read (`unknown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The current holder, or the last known one (process cleanup's, for a
    /// cache held only through its output lease).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<LeaseOwnerView>,
    /// When the current or last holder acquired it (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<i64>,
    /// When the last holder released it, if it was released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_at_ms: Option<i64>,
    /// Process cleanup (or maintenance) holds its output lease.
    pub outputs_held: bool,
    /// The source last built into it, if recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<IdentityView>,
}

impl From<&Entry> for CacheEntryView {
    fn from(entry: &Entry) -> CacheEntryView {
        let (status, reason) = match &entry.status {
            EntryStatus::Free => (LeaseStatus::Free, None),
            EntryStatus::Active => (LeaseStatus::Active, None),
            EntryStatus::Stale => (LeaseStatus::Stale, None),
            EntryStatus::Unknown(why) => (LeaseStatus::Unknown, Some(why.clone())),
        };
        CacheEntryView {
            dir: entry.dir.as_deref().map(lossy),
            slug: entry.slug.clone(),
            status,
            reason,
            owner: entry.owner.as_ref().map(LeaseOwnerView::from),
            since_ms: entry.since_ms.map(number),
            released_at_ms: entry.released_at_ms.map(number),
            outputs_held: entry.outputs_held,
            identity: entry.identity.as_ref().map(IdentityView::from),
        }
    }
}

/// What a prune did.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReportView {
    /// Bytes of build output before.
    pub bytes_before: i64,
    /// Bytes of build output after.
    pub bytes_after: i64,
    /// Files deleted.
    pub files_removed: i64,
    /// What was kept inside the profiles whatever its age, and why.
    pub kept: Vec<KeptView>,
}

/// Something a prune kept inside a profile.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptView {
    /// The file or directory (a directory is kept with all it holds).
    pub path: String,
    /// Why it was kept.
    pub reason: KeptReason,
}

impl From<&PruneReport> for PruneReportView {
    fn from(report: &PruneReport) -> PruneReportView {
        PruneReportView {
            bytes_before: number(report.bytes_before),
            bytes_after: number(report.bytes_after),
            files_removed: number(report.files_removed),
            kept: report
                .kept
                .iter()
                .map(|kept| KeptView {
                    path: lossy(&kept.path),
                    reason: kept.why,
                })
                .collect(),
        }
    }
}

/// What a human's release of a lease did.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "kebab-case"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeaseReleased {
    /// Nobody held the lease.
    Nothing,
    /// A dead owner's record was removed.
    DeadOwner,
    /// An unreadable record was moved aside, kept whole.
    MovedAside,
}

/// What a human's release did, and to which record.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseReleaseView {
    /// What the release did.
    pub released: LeaseReleased,
    /// The dead owner's record that was removed (`dead-owner`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<LeaseRecordView>,
    /// Where the unreadable record was moved, kept whole (`moved-aside`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    /// Why the record could not be read (`moved-aside`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<&Released> for LeaseReleaseView {
    fn from(released: &Released) -> LeaseReleaseView {
        let (kind, record, moved_to, reason) = match released {
            Released::Nothing => (LeaseReleased::Nothing, None, None, None),
            Released::Dead(record) => (
                LeaseReleased::DeadOwner,
                Some(LeaseRecordView::from(record.as_ref())),
                None,
                None,
            ),
            Released::MovedAside { to, why } => (
                LeaseReleased::MovedAside,
                None,
                Some(lossy(to)),
                Some(why.clone()),
            ),
        };
        LeaseReleaseView {
            released: kind,
            record,
            moved_to,
            reason,
        }
    }
}

/// A verdict: `reason` and `detail` are set exactly when not exclusive.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerdictView {
    /// Proven to be the agent's alone.
    pub exclusive: bool,
    /// Which rule found it shared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<SharedReason>,
    /// What that rule saw, for a human.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl From<Exclusivity> for VerdictView {
    fn from(verdict: Exclusivity) -> VerdictView {
        match verdict {
            Exclusivity::Exclusive => VerdictView {
                exclusive: true,
                reason: None,
                detail: None,
            },
            Exclusivity::Shared { reason, detail } => VerdictView {
                exclusive: false,
                reason: Some(reason),
                detail: Some(detail),
            },
        }
    }
}

/// One claim on a folder.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimView {
    /// The claiming agent.
    pub uid: String,
    /// When it was last made, in milliseconds since the epoch.
    pub at_ms: i64,
    /// The channel store that made it.
    pub origin: String,
    /// The account the agent runs under.
    pub account: String,
    /// The OS user that made it, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<u32>,
}

impl ClaimView {
    /// `uid`'s `claim`.
    pub fn of(uid: &str, claim: &Claim) -> ClaimView {
        ClaimView {
            uid: uid.to_owned(),
            at_ms: number(claim.at_ms),
            origin: claim.origin.clone(),
            account: claim.account.clone(),
            user: claim.user,
        }
    }
}

/// A claimed folder and every claim on it.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimedFolderView {
    /// The folder's canonical id when first claimed.
    pub dir: String,
    /// `memory-dir:` and 32 hex digits.
    pub zone: String,
    /// Every claim on it.
    pub claims: Vec<ClaimView>,
}

impl From<&ClaimedFolder> for ClaimedFolderView {
    fn from(folder: &ClaimedFolder) -> ClaimedFolderView {
        ClaimedFolderView {
            dir: folder.dir.clone(),
            zone: folder.zone.clone(),
            claims: folder
                .claims
                .iter()
                .map(|(uid, claim)| ClaimView::of(uid, claim))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests;
