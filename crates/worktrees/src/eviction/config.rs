//! Whether the pass runs: natives' configuration in its home, overridden
//! by the caller.
//!
//! ```json
//! { "disk": { "auto_fold": true, "worktree_reclaim_bytes": 4294967296 } }
//! ```
//!
//! Eviction is off unless both say so: it removes checkouts, so nobody gets
//! it without asking. Other sections and keys of the file are left to
//! whoever reads them; a `disk` key of the wrong type is an error naming
//! the file, never read as "off" or "on".

use std::path::Path;

use natives_core::{Error, Result};
use natives_system::durable;
use serde::{Deserialize, Serialize};

use super::Options;
use crate::registry::MAX_RECORD_BYTES;

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
