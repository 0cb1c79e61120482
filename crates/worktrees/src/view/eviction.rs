//! The shapes the fronts hand out for the eviction of inactive checkouts:
//! a pass's report, its accounting and the archived tips of a run's
//! copies.
//!
//! These keep the pass's `null`s: a report's `disabled`, `continueAfter`
//! and `retention`, an evicted copy's `archive`, a tip's `patchBytes` are
//! written as `null` when there is none (napi's `use_nullable`, and no
//! `skip_serializing_if`), the shape scripts have read since the pass
//! came. Numbers are `i64` ([`natives_core::view`]).

use std::collections::BTreeMap;

use natives_core::view::number;
use serde::Serialize;

use super::path::lossy;
use crate::eviction::{
    Blocker, BlockerKind, Evicted, Phase, Report, Retained, Retention, Settings, seats::SeatTip,
};

/// What a pass runs with.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionSettingsView {
    /// `disk.auto_fold`.
    pub auto_fold: bool,
    /// `disk.worktree_reclaim_bytes`.
    pub reclaim_bytes: i64,
}

impl From<&Settings> for EvictionSettingsView {
    fn from(settings: &Settings) -> EvictionSettingsView {
        EvictionSettingsView {
            auto_fold: settings.auto_fold,
            reclaim_bytes: number(settings.reclaim_bytes),
        }
    }
}

/// One reason a copy stays; `detail` says what was seen.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EvictionBlockerView {
    /// What kind of reason.
    pub kind: BlockerKind,
    /// What was seen, for a person.
    pub detail: String,
}

impl From<&Blocker> for EvictionBlockerView {
    fn from(blocker: &Blocker) -> EvictionBlockerView {
        EvictionBlockerView {
            kind: blocker.kind,
            detail: blocker.detail.clone(),
        }
    }
}

/// A copy the pass evicted (in a dry run: would evict).
#[cfg_attr(
    feature = "napi",
    napi_derive::napi(object, object_from_js = false, use_nullable = true)
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictedCopyView {
    /// Its run.
    pub run: String,
    /// Its seat name (`review-1`, `judge-2`, `candidate-A`).
    pub seat: String,
    /// Where it was.
    pub path: String,
    /// The archive that rebuilds it; `null` in a dry run.
    pub archive: Option<String>,
    /// Its regular files' bytes.
    pub logical_bytes: i64,
    /// Their allocated blocks (hard links kept elsewhere discounted).
    pub allocated_bytes: i64,
    /// Whether an earlier, interrupted pass had begun it.
    pub resumed: bool,
}

impl From<&Evicted> for EvictedCopyView {
    fn from(copy: &Evicted) -> EvictedCopyView {
        EvictedCopyView {
            run: copy.run.clone(),
            seat: copy.seat.clone(),
            path: lossy(&copy.path),
            archive: copy.archive.as_deref().map(lossy),
            logical_bytes: number(copy.logical_bytes),
            allocated_bytes: number(copy.allocated_bytes),
            resumed: copy.resumed,
        }
    }
}

/// A copy the pass left, with every reason.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RetainedCopyView {
    /// Its run.
    pub run: String,
    /// Its seat name.
    pub seat: String,
    /// Where it is.
    pub path: String,
    /// Why it stays.
    pub blockers: Vec<EvictionBlockerView>,
}

impl From<&Retained> for RetainedCopyView {
    fn from(copy: &Retained) -> RetainedCopyView {
        RetainedCopyView {
            run: copy.run.clone(),
            seat: copy.seat.clone(),
            path: lossy(&copy.path),
            blockers: copy.blockers.iter().map(Into::into).collect(),
        }
    }
}

/// What `retention.json` records of a pass: estimates, never claims of
/// freed space.
#[cfg_attr(
    feature = "napi",
    napi_derive::napi(object, object_from_js = false, use_nullable = true)
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionRetentionView {
    /// When the pass ended, in milliseconds since the epoch.
    pub at_ms: i64,
    /// Runs visited.
    pub runs_visited: i64,
    /// Bytes of the source files unlinked.
    pub source_logical_bytes: i64,
    /// Estimated allocated blocks of the source files unlinked.
    pub source_allocated_bytes: i64,
    /// Bytes of evidence published.
    pub evidence_logical_bytes: i64,
    /// Allocated blocks of evidence published.
    pub evidence_allocated_bytes: i64,
    /// Copies evicted.
    pub copies_evicted: i64,
    /// Empty run roots removed.
    pub empty_roots_removed: i64,
    /// Retained copies by each reason given (one copy may count under
    /// several).
    pub blockers: BTreeMap<String, i64>,
    /// The home volume's available bytes before the pass, as observed.
    pub observed_free_bytes_before: Option<i64>,
    /// The same after it (not attributed to the pass: others write to the
    /// volume too).
    pub observed_free_bytes_after: Option<i64>,
}

impl From<&Retention> for EvictionRetentionView {
    fn from(retention: &Retention) -> EvictionRetentionView {
        EvictionRetentionView {
            at_ms: number(retention.at_ms),
            runs_visited: number(retention.runs_visited),
            source_logical_bytes: number(retention.source_logical_bytes),
            source_allocated_bytes: number(retention.source_allocated_bytes),
            evidence_logical_bytes: number(retention.evidence_logical_bytes),
            evidence_allocated_bytes: number(retention.evidence_allocated_bytes),
            copies_evicted: number(retention.copies_evicted),
            empty_roots_removed: number(retention.empty_roots_removed),
            blockers: (retention.blockers.iter())
                .map(|(kind, count)| (kind.clone(), number(*count)))
                .collect(),
            observed_free_bytes_before: retention.observed_free_bytes_before.map(number),
            observed_free_bytes_after: retention.observed_free_bytes_after.map(number),
        }
    }
}

/// One pass's report.
#[cfg_attr(
    feature = "napi",
    napi_derive::napi(object, object_from_js = false, use_nullable = true)
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionReportView {
    /// The settings it ran with.
    pub settings: EvictionSettingsView,
    /// Whether it touched nothing.
    pub dry_run: bool,
    /// Why the pass did nothing, when it is not enabled.
    pub disabled: Option<String>,
    /// The runs visited, oldest first from where the last pass stopped.
    pub visited: Vec<String>,
    /// The run the next pass starts after.
    pub continue_after: Option<String>,
    /// Copies evicted (in a dry run: that would be).
    pub evicted: Vec<EvictedCopyView>,
    /// Copies left, with their reasons.
    pub retained: Vec<RetainedCopyView>,
    /// Empty run roots removed (in a dry run: that would be).
    pub empty_roots: Vec<String>,
    /// Reasons that hold for the whole pass (also given with each copy).
    pub blockers: Vec<EvictionBlockerView>,
    /// The accounting written to `retention.json`; `null` in a dry run.
    pub retention: Option<EvictionRetentionView>,
}

impl From<&Report> for EvictionReportView {
    fn from(report: &Report) -> EvictionReportView {
        EvictionReportView {
            settings: (&report.settings).into(),
            dry_run: report.dry_run,
            disabled: report.disabled.clone(),
            visited: report.visited.clone(),
            continue_after: report.continue_after.clone(),
            evicted: report.evicted.iter().map(Into::into).collect(),
            retained: report.retained.iter().map(Into::into).collect(),
            empty_roots: report.empty_roots.iter().map(|root| lossy(root)).collect(),
            blockers: report.blockers.iter().map(Into::into).collect(),
            retention: report.retention.as_ref().map(Into::into),
        }
    }
}

/// Where an eviction stands.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "lowercase"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EvictionPhase {
    /// Recorded; the copy may still be there, whole or in part.
    Pending,
    /// The copy is gone and its evidence validated.
    Evicted,
}

/// One archived tip of a run's copy.
#[cfg_attr(
    feature = "napi",
    napi_derive::napi(object, object_from_js = false, use_nullable = true)
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatTipView {
    /// The copy's seat name (`review-1`, `candidate-A`).
    pub seat: String,
    /// Where the copy was.
    pub source: String,
    /// The commit.
    pub head: String,
    /// Its tree.
    pub tree: String,
    /// Where the copy showed it: `HEAD`, `HEAD@{n}`, `ORIG_HEAD`, `base`.
    pub seen_as: Vec<String>,
    /// Whether it was the copy's `HEAD` when archived (else historical).
    pub current: bool,
    /// The archived patch's bytes, for the current tip.
    pub patch_bytes: Option<i64>,
    /// Where its eviction stands.
    pub phase: EvictionPhase,
    /// The archive holding it.
    pub archive: String,
}

impl From<&SeatTip> for SeatTipView {
    fn from(tip: &SeatTip) -> SeatTipView {
        SeatTipView {
            seat: tip.seat.clone(),
            source: lossy(&tip.source),
            head: tip.head.clone(),
            tree: tip.tree.clone(),
            seen_as: tip.seen_as.clone(),
            current: tip.current,
            patch_bytes: tip.patch_bytes.map(number),
            phase: match tip.phase {
                Phase::Pending => EvictionPhase::Pending,
                Phase::Evicted => EvictionPhase::Evicted,
            },
            archive: lossy(&tip.archive),
        }
    }
}
