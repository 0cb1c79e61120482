//! What a seed is asked to do and what it reports having done: plain data,
//! kept below the seeding itself so a member's record can hold a report
//! without importing the code that fills members.

use natives_core::{Error, Result};
use serde::{Deserialize, Serialize};

/// How a new member was (or is to be) filled.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "lowercase"))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeedStrategy {
    /// Decided per call: a reflink where the filesystem clones, else a
    /// plain copy unless it is measured to be slower than a build from
    /// nothing, else cold.
    #[default]
    Auto,
    /// Every file cloned (`FICLONE`); `ENOTSUP` where the filesystem cannot.
    Reflink,
    /// Every file copied (`copy_file_range`).
    Copy,
    /// Nothing copied: the first build compiles everything.
    Cold,
}

impl SeedStrategy {
    /// The strategy as every front spells it.
    pub fn name(self) -> &'static str {
        match self {
            SeedStrategy::Auto => "auto",
            SeedStrategy::Reflink => "reflink",
            SeedStrategy::Copy => "copy",
            SeedStrategy::Cold => "cold",
        }
    }

    /// The strategy spelled `name`; `EINVAL` naming it otherwise.
    pub fn parse(name: &str) -> Result<SeedStrategy> {
        [Self::Auto, Self::Reflink, Self::Copy, Self::Cold]
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "seed strategy {name:?}: expected auto, reflink, copy or cold"
                ))
            })
    }
}

/// How a member was filled, and why that way.
///
/// Unlike the member record that holds it, a report ignores fields it does
/// not know: it is for display, and reports written before a field went
/// (`waitedMs`: a seed no longer waits for its source) must leave their
/// members readable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedReport {
    /// What was done: `reflink`, `copy` or `cold` (never `auto`).
    pub strategy: SeedStrategy,
    /// The member it was filled from.
    pub from: Option<String>,
    /// Why this strategy.
    pub reason: String,
    /// Files copied.
    pub files: u64,
    /// Bytes copied (logical).
    pub bytes: u64,
    /// Files of the source left out because a cargo was writing them (or
    /// their unit) during the copy: the new member's build makes them.
    #[serde(default)]
    pub left_out: u64,
    /// Time the seed took.
    pub took_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_written_before_left_out_reads() {
        let old = r#"{"strategy": "copy", "from": "member-0", "reason": "r",
                      "files": 3, "bytes": 9, "waitedMs": 6100, "tookMs": 7}"#;
        let report: SeedReport = serde_json::from_str(old).unwrap();
        assert_eq!((report.files, report.left_out, report.took_ms), (3, 0, 7));
    }
}
