//! Fast, fresh file discovery for coding agents: a shared in-memory scan
//! cache and the tools that read it.
//!
//! - [`cache`]: the scan cache (seed 001) — keyed by canonical root, hidden
//!   and gitignore switches; TTL, empty-result recheck, entry and byte
//!   budgets, single-flight walks, a generation fence against stale inserts.
//! - [`walk`]: the parallel, ignore-aware walker that fills it.
//! - [`watch`]: opt-in filesystem events that keep stored scans exact,
//!   patched before each answer, with the TTL as the fallback.
//! - [`glob`](mod@glob): glob matching over a scan with a bounded top-N.
//! - [`grep`](mod@grep): content search over a scan (or one file, or a buffer) with
//!   `rg`'s matching rules, parallel but reported in path order.
//! - [`fuzzy`]: fuzzy find with tiered ranking (exact name > prefix >
//!   substring > scattered) on nucleo's matcher, with highlight indices.
//! - `names`: the index of a cached scan's names that cached globs with a
//!   literal in their last component, and fuzzy finds, read instead of
//!   every path.
//! - [`node_modules`]: the one rule for whether `node_modules` is returned.
//! - [`paths`]: search-root resolution and invalidation targets.
//! - [`persist`]: cached scans kept across restarts as records that a
//!   later process proves current instead of walking.
//! - [`shared`]: one index per root for every process of a user: one
//!   process walks and watches, the others read its list.
//! - `beneath`: what keeps a confined search (`confine` in the glob, grep
//!   and fuzzy-find options) beneath its root when directories inside are
//!   swapped for links while it runs.
//! - [`text`]: what is text, by one rule for grep and for reading files.
//! - [`unreadable`]: the paths an answer could not enter or read, named
//!   with why, as `rg` names them.
//! - [`view`]: the serde shapes of glob, grep and fuzzy-find results that
//!   every front hands out.
//! - [`CancelToken`] and [`Error`]: the cancellation and error model every
//!   consumer shares; [`ErrorKind::code`] gives the stable code users see.
//!
//! # Example
//!
//! ```
//! use natives_scan::{CancelToken, GlobOptions, glob};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir(dir.path().join("src"))?;
//! std::fs::write(dir.path().join("src/main.ts"), "")?;
//!
//! let mut options = GlobOptions::new("*.ts", dir.path());
//! options.cache = true;
//! let outcome = glob(&options, natives_scan::cache::global(), &CancelToken::new(), &mut |_| {})?;
//! let paths: Vec<_> = outcome.matches().map(|m| m.path_lossy().into_owned()).collect();
//! assert_eq!(paths, ["src/main.ts"]);
//!
//! // After a mutation, invalidate so the next cached call sees it.
//! std::fs::write(dir.path().join("src/new.ts"), "")?;
//! natives_scan::invalidate(Some(&dir.path().join("src/new.ts")))?;
//! let again = glob(&options, natives_scan::cache::global(), &CancelToken::new(), &mut |_| {})?;
//! assert_eq!(again.total_matches, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod beneath;
pub mod cache;
mod content_index;
mod entries;
pub mod fuzzy;
pub mod glob;
pub mod grep;
mod names;
pub mod node_modules;
mod path_bytes;
pub mod paths;
pub mod persist;
pub mod shared;
pub mod text;
mod top_n;
pub mod unreadable;
pub mod view;
pub mod walk;
pub mod watch;

use natives_core::{cancel, error};

use std::path::Path;

pub use cache::{CachePolicy, CacheStats, NameStats, ScanCache, ScanKey, ScanResult};
pub use cancel::CancelToken;
pub use entries::{Entries, Entry, FileType, compare_paths};
pub use error::{Error, ErrorKind, Result};
pub use fuzzy::{FuzzyMatch, FuzzyOptions, FuzzyOutcome, fuzzy_find};
pub use glob::{GlobOptions, GlobOutcome, glob};
pub use grep::{GrepMatch, GrepMode, GrepOptions, GrepOutcome, grep};
pub use paths::{resolve_invalidation_targets, resolve_search_path};
pub use persist::PersistStats;
pub use shared::SharingStats;
pub use unreadable::Unreadable;
pub use walk::ScanPolicy;
pub use watch::WatchStats;

/// Invalidate the global cache after a filesystem mutation (seed 001).
///
/// With a path (relative to the current directory; it may no longer exist),
/// drops every cached scan whose root contains it or lies inside it (for a
/// symlink: the link's own place and its destination, see
/// [`resolve_invalidation_targets`]); with `None`, drops everything. Walks in
/// flight for those roots are fenced.
pub fn invalidate(path: Option<&Path>) -> Result<()> {
    match path {
        Some(path) => cache::global().invalidate_path(path),
        None => {
            cache::global().clear();
            Ok(())
        }
    }
}
