//! The result shapes the fronts hand out: one serde view per glob and
//! fuzzy-find result and summary, and grep's summary (the CLI prints
//! grep's results as rg's JSON Lines), with the field names and value types
//! of the TypeScript API's result objects.
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
    grep::GrepOutcome,
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

/// What a grep found besides its results (`GrepResult` without `matches`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepSummaryView {
    /// Results before `offset` and `max_count`.
    pub total_matches: u64,
    /// Files with at least one match.
    pub files_with_matches: usize,
    /// Files opened and searched.
    pub files_searched: usize,
    /// Files whose search stopped at a NUL byte.
    pub binary_files_skipped: usize,
    /// Files above `max_file_size`, not searched.
    pub files_skipped_too_large: usize,
    /// Files listed that could not be opened or read.
    pub files_unreadable: usize,
    /// What the search could not enter or read: directories and files.
    pub unreadable: Vec<UnreadableView>,
    /// `true` when more results existed beyond the returned ones.
    pub limit_reached: bool,
    /// The search path named one file rather than a directory.
    pub path_is_file: bool,
    /// Where the file list came from: `walked`, `cached` or `watched` (see
    /// [`ListSource`](crate::grep::ListSource)).
    pub source: &'static str,
}

impl From<&GrepOutcome> for GrepSummaryView {
    fn from(outcome: &GrepOutcome) -> GrepSummaryView {
        GrepSummaryView {
            total_matches: outcome.total_matches,
            files_with_matches: outcome.files_with_matches,
            files_searched: outcome.files_searched,
            binary_files_skipped: outcome.binary_files_skipped,
            files_skipped_too_large: outcome.files_skipped_too_large,
            files_unreadable: outcome.files_unreadable,
            unreadable: unreadable_views(&outcome.unreadable),
            limit_reached: outcome.limit_reached,
            path_is_file: outcome.path_is_file,
            source: outcome.source.name(),
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
    fn summaries_name_every_counter() {
        let outcome = GrepOutcome {
            total_matches: 5,
            files_with_matches: 2,
            files_searched: 9,
            binary_files_skipped: 1,
            files_skipped_too_large: 3,
            files_unreadable: 4,
            unreadable: vec![Unreadable::new(
                b"locked",
                &std::io::Error::from_raw_os_error(13),
            )],
            limit_reached: true,
            source: crate::grep::ListSource::Watched,
            ..GrepOutcome::default()
        };
        assert_eq!(
            serde_json::to_value(GrepSummaryView::from(&outcome)).unwrap(),
            json!({
                "totalMatches": 5, "filesWithMatches": 2, "filesSearched": 9,
                "binaryFilesSkipped": 1, "filesSkippedTooLarge": 3,
                "filesUnreadable": 4, "limitReached": true, "pathIsFile": false,
                "unreadable": [{"path": "locked", "code": "EACCES", "message": "Permission denied (os error 13)"}],
                "source": "watched",
            })
        );
    }

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
