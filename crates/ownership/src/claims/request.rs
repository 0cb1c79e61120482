//! What a caller asks a claim for: the agent, the other agents its channel
//! store knows, and where to look for shared locations. Apart from
//! claims.rs, which decides, so that the rules (rules.rs) read a request
//! without importing the module that applies them.

use std::{collections::BTreeSet, path::PathBuf};

use super::redirect::MemoryRedirects;

/// The agent asking for a folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Agent {
    /// The agent's id, stable across its spawns.
    pub uid: String,
    /// Its working directory; `None` or blank for the default agents directory.
    pub cwd: Option<PathBuf>,
    /// The account it runs under.
    pub account: String,
}

/// Another agent the caller's channel store knows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownAgent {
    /// Its id.
    pub uid: String,
    /// Its working directory, if it has one.
    pub cwd: Option<PathBuf>,
    /// The memory folder it resolves to, where known.
    pub memory_dir: Option<PathBuf>,
}

/// Everything [`check_and_claim`](super::check_and_claim) decides from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimRequest {
    /// Who asks.
    pub agent: Agent,
    /// The memory folder the agent's spawn uses.
    pub memory_dir: PathBuf,
    /// Every other agent the caller's channel store has (stale claims of
    /// `origin` are pruned against this list, so it must be complete).
    pub others: Vec<KnownAgent>,
    /// The caller's channel store id, recorded in the claim.
    pub origin: String,
    /// The agent's user's home directory, a known shared location. The
    /// caller's own homes (`$HOME` and the user database's, see
    /// [`natives_system::paths::user_homes`]) are shared locations whether or not
    /// one is given here: there is no way to turn the rule off.
    pub user_home: Option<PathBuf>,
    /// Settings files and environment that may redirect the memory.
    pub redirects: MemoryRedirects,
}

impl ClaimRequest {
    /// The uids the caller's store has: the agent and every other.
    pub(super) fn store_agents(&self) -> BTreeSet<&str> {
        std::iter::once(self.agent.uid.as_str())
            .chain(self.others.iter().map(|other| other.uid.as_str()))
            .collect()
    }
}
