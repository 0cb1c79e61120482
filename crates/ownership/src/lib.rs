//! Durable, crash-proof ownership of shared directories.
//!
//! - [`command`]: running a child process (cargo, git) under a cancel token,
//!   its whole process group killed when the token stops or the call is left.
//! - [`durable`]: the one writer of records — temp file, `fsync`, `rename`,
//!   directory `fsync` — so a record is whole or absent, never torn.
//! - [`lock`]: kernel file locks, the authority on whether an owner is
//!   alive, and when a filesystem's locks cannot be trusted.
//! - [`process`]: process identity (pid, start time, boot id) and the
//!   conservative [`pid_alive`].
//! - [`paths`]: canonical directory ids and stable record names.
//! - [`layout`]: where every record lives under the natives home.
//! - [`lease`]: build-cache leases (seed 000): race-free, crash-proof
//!   ownership of a shared `CARGO_TARGET_DIR`.
//! - [`fresh`]: which source a shared build cache was built from, and the
//!   selective `cargo clean` when that changes.
//! - [`pool`]: a pool of K build caches for one workspace, so N agents
//!   build at once without waiting, building cold or running stale output.
//! - [`claims`]: whether a memory directory is one agent's alone (seed 004),
//!   from explicit inputs and machine-wide claims.
pub mod claims;
pub mod command;
pub mod durable;
pub mod fresh;
pub mod layout;
pub mod lease;
pub mod lock;
pub mod paths;
pub mod pool;
pub mod process;

pub use lease::{AcquireOutcome, Busy, Entry, EntryStatus, Guard, Leases, Owner, Status};
pub use natives_core::{CancelToken, Error, ErrorKind, Result};
pub use process::{ProcessIdentity, pid_alive};
