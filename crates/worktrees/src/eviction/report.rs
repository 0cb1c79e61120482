//! What a pass reports: each copy it evicted, each it left and why, and
//! what it spent. One copy's eviction (`machine.rs`) makes an
//! [`Evicted`]; the pass (`run_pass.rs`) gathers them into a [`Report`].

use std::path::PathBuf;

use super::{blocker::Blocker, config::Settings, retention::Retention};

/// A copy the pass evicted (or, in a dry run, would evict).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evicted {
    /// Its run.
    pub run: String,
    /// Its seat name (`review-1`, `candidate-A`).
    pub seat: String,
    /// Where it was.
    pub path: PathBuf,
    /// The archive that rebuilds it (none in a dry run).
    pub archive: Option<PathBuf>,
    /// Its regular files' bytes.
    pub logical_bytes: u64,
    /// Its regular files' allocated blocks, hard links discounted unless
    /// their last link was in it.
    pub allocated_bytes: u64,
    /// Whether a pass before this one had begun it.
    pub resumed: bool,
}

/// A copy the pass left, and every reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retained {
    /// Its run.
    pub run: String,
    /// Its seat name (`review-1`, `candidate-A`).
    pub seat: String,
    /// Where it is.
    pub path: PathBuf,
    /// Why it stays.
    pub blockers: Vec<Blocker>,
}

/// What one pass did.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The settings it ran with.
    pub settings: Settings,
    /// Whether it touched nothing.
    pub dry_run: bool,
    /// Why it did nothing at all, when it was not enabled.
    pub disabled: Option<String>,
    /// The runs it visited, in order.
    pub visited: Vec<String>,
    /// The run the next pass starts after.
    pub continue_after: Option<String>,
    /// Copies evicted (in a dry run: that would be).
    pub evicted: Vec<Evicted>,
    /// Copies left, with their reasons.
    pub retained: Vec<Retained>,
    /// Empty run roots removed (in a dry run: that would be).
    pub empty_roots: Vec<PathBuf>,
    /// Reasons that hold for the whole pass (also given with each copy).
    pub blockers: Vec<Blocker>,
    /// The accounting written to `retention.json` (none in a dry run).
    pub retention: Option<Retention>,
}
