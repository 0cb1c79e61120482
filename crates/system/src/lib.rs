//! The operating-system layer natives' ownership and git code stand on.
//!
//! Leases, claims, the run registry and the git driver all need the same
//! few things from the system, and each is done once, here:
//!
//! - [`command`]: running a child process (cargo, git) under a cancel token,
//!   its whole process group killed when the token stops or the call is left.
//! - [`crash`]: the points a destructive operation may be cut short at,
//!   where tests kill a real process to check what a crash leaves.
//! - [`durable`]: the one writer of records — temp file, `fsync`, `rename`,
//!   directory `fsync` — so a record is whole or absent, never torn.
//! - [`lock`]: kernel file locks, the authority on whether an owner is
//!   alive, and when a filesystem's locks cannot be trusted.
//! - [`memory`]: the memory this process may use (the machine's, or its
//!   control group's limit), for budgets that scale with it.
//! - [`process`]: process identity (pid, start time, boot id) and the
//!   conservative [`process::pid_alive`].
//! - [`paths`]: canonical directory ids, stable record names and the
//!   natives home.
//!
//! Errors are [`natives_core::Error`]s, as everywhere in natives.
pub mod command;
pub mod crash;
pub mod durable;
pub mod lock;
pub mod memory;
pub mod paths;
pub mod process;
