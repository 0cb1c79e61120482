//! The inactive-checkout eviction pass (seed 003, part 2): housekeeping
//! archives and removes a few source copies nobody will resume, and reports
//! why every other one stays.
//!
//! A run leaves working copies behind: its review, judge and advisor seats
//! (detached checkouts of recorded heads) and the candidate attempts it
//! gave up on. Most are never read again, and a large repository makes each
//! one expensive. The pass frees that disk without losing a byte: a copy
//! goes only once evidence that rebuilds it without its repository is
//! published and validated ([`crate::evidence`]), and only when nothing at
//! all says it may still be wanted. On any doubt the copy stays, and the
//! report names the doubt ([`BlockerKind`]).
//!
//! - [`settings`]: whether the pass runs at all (`disk.auto_fold` and a
//!   positive `disk.worktree_reclaim_bytes` in the home's `config.json`, or
//!   the caller's [`Options`]).
//! - [`pass`] visits at most [`Limits::runs`] runs, oldest first, from
//!   where the previous pass stopped; evicts at most [`Limits::copies`]
//!   copies; publishes at most [`Limits::evidence_bytes`] of new evidence;
//!   stops unlinking once the reclaim budget is spent (the copy that
//!   crosses it goes whole). A dry run touches nothing and says what it
//!   would evict.
//! - Per copy, a state machine that survives a kill at any instant: a
//!   durable `artifacts/eviction-<seat>.json` in phase `pending` (the
//!   copy's inventory and its raw git administration) → evidence published
//!   and validated → everything proven again → a clean `git worktree
//!   remove` → phase `evicted`. A later pass finishes or abandons what a
//!   killed one left, never adopting a copy that changed.
//! - `retention.json` accounts for each pass: bytes unlinked (logical, and
//!   allocated blocks with hard links discounted), evidence added, copies
//!   evicted, empty roots removed, blockers by kind. These are estimates:
//!   the volume's observed free-space change is reported apart.
//! - [`seats`]: every archived tip of a run's evicted copies, and
//!   rebuilding one of them in a new directory, without the original
//!   repository.
//!
//! Task history, run records, candidate branches and retention markers are
//! never touched: a pass removes checkouts (and empty run roots), nothing
//! else.

mod blocker;
mod config;
mod copy;
mod machine;
mod ownership;
mod record;
mod report;
mod retention;
mod run_pass;
pub mod seats;

pub use blocker::{Blocker, BlockerKind};
pub use config::{
    CONFIG_FILE, Limits, Options, PASS_COPIES, PASS_EVIDENCE_BYTES, PASS_RUNS, QUIET_PERIOD,
    Settings, settings,
};
pub use record::{EvictionRecord, Phase};
pub use report::{Evicted, Report, Retained};
pub use retention::{RETENTION_FILE, Retention};
pub use run_pass::pass;

// Named so that `cargo test source_eviction` (seed 003's focused check)
// runs both.
#[cfg(test)]
mod source_eviction;

#[cfg(test)]
mod source_eviction_crashes;
