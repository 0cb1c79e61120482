//! The result shapes the fronts hand out: one serde view per glob and
//! fuzzy-find result and summary, with the field names and value types of
//! the TypeScript API's result objects. Grep has none: the CLI prints its
//! results as rg's JSON Lines and its `--stats` from the outcome itself.
//!
//! Why here: the CLI's `--json` and the addon's objects describe the same
//! results, and two hand-written shapes drift apart (a summary missing a
//! counter, a file type spelled as a word in one and a number in the
//! other). Every front serializes these views instead; a field is optional
//! exactly where the TypeScript type marks it optional, and is then left
//! out rather than written as `null`.

use serde::Serialize;

use crate::{
    entries::Entry,
    fuzzy::{FuzzyMatch, FuzzyOutcome},
    glob::GlobOutcome,
    unreadable::Unreadable,
};

/// A path a search could not enter or read (`UnreadablePath` in
/// TypeScript).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnreadableView {
    /// Relative to the search root, `/`-separated (empty: the root);
    /// bytes that are not UTF-8 read as U+FFFD.
    pub path: String,
    /// The errno-style code: `EACCES`, `ENAMETOOLONG`, ...
    pub code: &'static str,
    /// What the OS said: `Permission denied (os error 13)`.
    pub message: String,
}

impl From<&Unreadable> for UnreadableView {
    fn from(unreadable: &Unreadable) -> UnreadableView {
        UnreadableView {
            path: unreadable.path_lossy().into_owned(),
            code: unreadable.code,
            message: unreadable.message.clone(),
        }
    }
}

/// The views of `unreadable`, in order.
pub fn unreadable_views(unreadable: &[Unreadable]) -> Vec<UnreadableView> {
    unreadable.iter().map(UnreadableView::from).collect()
}

/// One glob match (`GlobMatch` in TypeScript).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobMatchView {
    /// Relative to the search root, `/`-separated; bytes that are not UTF-8
    /// read as U+FFFD.
    pub path: String,
    /// The numeric [`FileType`](crate::FileType): 1 file, 2 directory, 3
    /// symlink, 4 other.
    pub file_type: u8,
    /// Modification time in milliseconds since the epoch, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtime: Option<i64>,
}

impl From<&Entry<'_>> for GlobMatchView {
    fn from(entry: &Entry<'_>) -> GlobMatchView {
        GlobMatchView {
            path: entry.path_lossy().into_owned(),
            file_type: entry.file_type.as_u8(),
            mtime: entry.mtime_ms,
        }
    }
}

/// What a glob found besides its matches (`GlobResult` without `matches`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobSummaryView {
    /// Matches before `max_results` was applied.
    pub total_matches: usize,
    /// `true` when `max_results` cut matches off.
    pub limit_reached: bool,
    /// What the walk could not enter or read.
    pub unreadable: Vec<UnreadableView>,
}

impl From<&GlobOutcome> for GlobSummaryView {
    fn from(outcome: &GlobOutcome) -> GlobSummaryView {
        GlobSummaryView {
            total_matches: outcome.total_matches,
            limit_reached: outcome.limit_reached(),
            unreadable: unreadable_views(&outcome.unreadable),
        }
    }
}

/// One fuzzy-find match (`FuzzyMatch` in TypeScript).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyMatchView {
    /// Relative, `/`-separated; directories end with `/`; each byte that is
    /// not part of UTF-8 reads as U+FFFD.
    pub path: String,
    /// The numeric [`FileType`](crate::FileType).
    pub file_type: u8,
    /// Higher ranks first.
    pub score: u32,
    /// Why it matched: [`Tier::name`](crate::fuzzy::Tier::name).
    pub tier: &'static str,
    /// Matched character positions in `path`, ascending.
    pub indices: Vec<u32>,
}

impl From<&FuzzyMatch> for FuzzyMatchView {
    fn from(found: &FuzzyMatch) -> FuzzyMatchView {
        FuzzyMatchView {
            path: found.path_lossy(),
            file_type: found.file_type.as_u8(),
            score: found.score,
            tier: found.tier.name(),
            indices: found.indices.clone(),
        }
    }
}

/// What a fuzzy find found besides its matches (`FuzzyFindResult` without
/// `matches`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FuzzySummaryView {
    /// Matches before `max_results` was applied.
    pub total_matches: usize,
    /// What the walk could not enter or read.
    pub unreadable: Vec<UnreadableView>,
}

impl From<&FuzzyOutcome> for FuzzySummaryView {
    fn from(outcome: &FuzzyOutcome) -> FuzzySummaryView {
        FuzzySummaryView {
            total_matches: outcome.total_matches,
            unreadable: unreadable_views(&outcome.unreadable),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::FileType;

    #[test]
    fn file_types_are_numbers_and_tiers_names() {
        let found = FuzzyMatch {
            path: b"src/".to_vec(),
            file_type: FileType::Dir,
            score: 42,
            tier: crate::fuzzy::Tier::NamePrefix,
            indices: vec![0, 1],
        };
        assert_eq!(
            serde_json::to_value(FuzzyMatchView::from(&found)).unwrap(),
            json!({"path": "src/", "fileType": 2, "score": 42, "tier": "namePrefix", "indices": [0, 1]})
        );
    }
}
