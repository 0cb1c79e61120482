//! Durable, crash-proof ownership of shared directories.
//!
//! Records, locks, child processes and process identity come from
//! [`natives_system`]; this crate decides who owns what with them.
//!
//! - [`layout`]: where every record lives under the natives home.
//! - [`lease`]: build-cache leases (seed 000): race-free, crash-proof
//!   ownership of a shared `CARGO_TARGET_DIR`.
//! - [`fresh`]: which source a shared build cache was built from, and the
//!   selective `cargo clean` when that changes.
//! - [`pool`]: a pool of K build caches for one workspace, so N agents
//!   build at once without waiting, building cold or running stale output.
//! - [`claims`]: whether a memory directory is one agent's alone (seed 004),
//!   from explicit inputs and machine-wide claims.
//! - [`view`]: what the fronts hand out about leases and claims, one shape
//!   for the command line's `--json` and the addon's objects.
pub mod claims;
pub mod fresh;
pub mod layout;
pub mod lease;
pub mod pool;
pub mod view;

pub use lease::{AcquireOutcome, Busy, Entry, EntryStatus, Guard, Leases, Owner, Status};
pub use natives_core::{CancelToken, Error, ErrorKind, Result};
