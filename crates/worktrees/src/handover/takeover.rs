//! The terms a new run takes a branch over on: which earlier attempts it
//! may take it from and what it declares regenerable. Finding the holder
//! (`inspect.rs`), planning (`plan.rs`) and releasing (`release.rs`) all
//! read them, so they live below those.

use natives_core::Result;

use super::untracked::Regenerable;
use crate::registry::Registry;

/// The terms a new run takes a branch over on: the earlier attempts at its
/// task it may take it from, and what it declares regenerable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Takeover {
    new_run: String,
    earlier_attempts: Vec<String>,
    regenerable: Regenerable,
}

impl Takeover {
    /// `new_run` may take over from these runs (never itself).
    pub fn new(new_run: &str, earlier_attempts: Vec<String>) -> Takeover {
        let earlier_attempts = earlier_attempts
            .into_iter()
            .filter(|run| run != new_run)
            .collect();
        Takeover {
            new_run: new_run.to_owned(),
            earlier_attempts,
            regenerable: Regenerable::default(),
        }
    }

    /// The same takeover, letting untracked paths `regenerable` matches go
    /// with the worktree (recorded in the release). Default: none.
    pub fn with_regenerable(mut self, regenerable: Regenerable) -> Takeover {
        self.regenerable = regenerable;
        self
    }

    /// What the new run declares regenerable.
    pub fn regenerable(&self) -> &Regenerable {
        &self.regenerable
    }

    /// `new_run` of `task` may take over from every other run recorded for
    /// the task ([`Registry::earlier_attempts`]).
    pub fn for_task(registry: &Registry, task: &str, new_run: &str) -> Result<Takeover> {
        let attempts = registry.earlier_attempts(task)?;
        Ok(Takeover::new(
            new_run,
            attempts.into_iter().map(|run| run.id).collect(),
        ))
    }

    /// A run with no task (a review started by hand): it has no earlier
    /// attempts, so it can only take a branch from a run natives recorded.
    pub fn hand_run(new_run: &str) -> Takeover {
        Takeover::new(new_run, Vec::new())
    }

    /// The run taking the branch over.
    pub fn new_run(&self) -> &str {
        &self.new_run
    }

    /// The runs it may take over from as earlier attempts.
    pub fn earlier_attempts(&self) -> &[String] {
        &self.earlier_attempts
    }

    /// Whether `run` is one of its earlier attempts.
    pub(super) fn is_earlier_attempt(&self, run: &str) -> bool {
        self.earlier_attempts.iter().any(|attempt| attempt == run)
    }
}
