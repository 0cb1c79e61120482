//! How a pass is asked for ([`Options`]: its bounds, a dry run) and
//! whether it runs: natives' configuration in its home, overridden by the
//! caller.
//!
//! ```json
//! { "disk": { "auto_fold": true, "worktree_reclaim_bytes": 4294967296 } }
//! ```
//!
//! Eviction is off unless both say so: it removes checkouts, so nobody gets
//! it without asking. Other sections and keys of the file are left to
//! whoever reads them; a `disk` key of the wrong type is an error naming
//! the file, never read as "off" or "on".

use std::{path::Path, time::Duration};

use natives_core::{Error, Result};
use natives_system::durable;
use serde::{Deserialize, Serialize};

use crate::registry::MAX_RECORD_BYTES;

/// The most runs one pass visits.
pub const PASS_RUNS: usize = 64;

/// The most copies one pass evicts: each needs its evidence captured and
/// validated twice, seconds of git work on a large tree.
pub const PASS_COPIES: usize = 5;

/// The most new evidence one pass publishes.
pub const PASS_EVIDENCE_BYTES: u64 = 64 << 20;

/// How long a copy must have been left alone: anything in it, its git
/// administration or its run's history touched more recently says someone
/// may come back to it.
pub const QUIET_PERIOD: Duration = Duration::from_secs(24 * 60 * 60);

/// The bounds of one pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Runs visited ([`PASS_RUNS`]).
    pub runs: usize,
    /// Copies evicted ([`PASS_COPIES`]).
    pub copies: usize,
    /// New evidence published, in bytes ([`PASS_EVIDENCE_BYTES`]).
    pub evidence_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            runs: PASS_RUNS,
            copies: PASS_COPIES,
            evidence_bytes: PASS_EVIDENCE_BYTES,
        }
    }
}

/// How a pass is asked for. Unset settings come from the home's
/// configuration ([`settings`]).
#[derive(Clone, Debug)]
pub struct Options {
    /// Whether folding runs automatically (`disk.auto_fold`); the pass runs
    /// only when it does. Default: the configuration's, else off.
    pub auto_fold: Option<bool>,
    /// The most source bytes one pass unlinks (`disk.worktree_reclaim_bytes`);
    /// zero turns the pass off. Default: the configuration's, else zero.
    pub reclaim_bytes: Option<u64>,
    /// Say what would be evicted and why the rest stays; touch nothing.
    /// Default: off.
    pub dry_run: bool,
    /// How long a copy must have been left alone. Default: [`QUIET_PERIOD`].
    pub quiet_period: Duration,
    /// The pass's bounds. Default: [`Limits::default`].
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            auto_fold: None,
            reclaim_bytes: None,
            dry_run: false,
            quiet_period: QUIET_PERIOD,
            limits: Limits::default(),
        }
    }
}

/// The configuration file, in the natives home.
pub const CONFIG_FILE: &str = "config.json";

/// What a pass runs with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// `disk.auto_fold`.
    pub auto_fold: bool,
    /// `disk.worktree_reclaim_bytes`.
    pub reclaim_bytes: u64,
}

impl Settings {
    /// Why the pass does nothing with these settings, if it does nothing.
    pub fn disabled(&self) -> Option<String> {
        match (self.auto_fold, self.reclaim_bytes) {
            (false, _) => Some("disk.auto_fold is off".into()),
            (true, 0) => Some("disk.worktree_reclaim_bytes is not set above 0".into()),
            (true, _) => None,
        }
    }
}

#[derive(Default, Deserialize)]
struct File {
    #[serde(default)]
    disk: Disk,
}

#[derive(Default, Deserialize)]
struct Disk {
    auto_fold: Option<bool>,
    worktree_reclaim_bytes: Option<u64>,
}

/// The settings a pass asked with `options` runs with under `home`: each
/// one the caller's if given, else the configuration's, else off.
pub fn settings(home: &Path, options: &Options) -> Result<Settings> {
    let path = home.join(CONFIG_FILE);
    let file: File = match durable::read_bounded(&path, MAX_RECORD_BYTES)? {
        None => File::default(),
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|err| {
            Error::invalid(format!(
                "{}: not a natives configuration: {err}",
                path.display()
            ))
        })?,
    };
    Ok(Settings {
        auto_fold: options.auto_fold.or(file.disk.auto_fold).unwrap_or(false),
        reclaim_bytes: options
            .reclaim_bytes
            .or(file.disk.worktree_reclaim_bytes)
            .unwrap_or(0),
    })
}
