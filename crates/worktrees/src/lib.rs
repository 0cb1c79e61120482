//! Git worktrees for agent runs.
//!
//! - [`registry`]: the tasks, their runs and the worktrees each run made, as
//!   an orchestrator records them under the natives home.
//! - [`git`]: the git driver, the only place git runs.

pub mod git;
pub mod registry;
#[cfg(test)]
mod testing;

pub use natives_core::{CancelToken, Error, ErrorKind, Result};
