//! Git worktrees for agent runs.
//!
//! - [`registry`]: the tasks, their runs and the worktrees each run made, as
//!   an orchestrator records them under the natives home.

pub mod registry;

pub use natives_core::{CancelToken, Error, ErrorKind, Result};
