//! The answer to "is this memory folder this agent's alone?".
//!
//! There are exactly two answers, and the shared one always says why, so a
//! human can see what kept an agent's memory out of a folder. Errors are not
//! a third answer: whatever fails becomes [`SharedReason::Unproven`].

use std::fmt;

use natives_core::Error;

/// Why a folder counts as shared.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "kebab-case"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SharedReason {
    /// A location shared by construction: a blank working directory, `$HOME`,
    /// or an ancestor of another agent's working directory.
    KnownShared,
    /// The CLI keys this folder by a whole repository: a subdirectory or a
    /// linked worktree of it, or a main checkout that has linked worktrees.
    RepositoryWide,
    /// Another agent resolves to the same canonical folder.
    Vetoed,
    /// Another agent (or the same agent id under another OS user) claims it.
    Claimed,
    /// Exclusivity could not be established: a deadline passed, the store
    /// could not be read or written, or the agent holds no claim.
    Unproven,
    /// Settings or the environment move the memory out of the per-project
    /// folder.
    Redirected,
}

impl SharedReason {
    /// The stable name shown to callers (`known-shared`, `claimed`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SharedReason::KnownShared => "known-shared",
            SharedReason::RepositoryWide => "repository-wide",
            SharedReason::Vetoed => "vetoed",
            SharedReason::Claimed => "claimed",
            SharedReason::Unproven => "unproven",
            SharedReason::Redirected => "redirected",
        }
    }
}

/// Whether a memory folder is proven to be one agent's alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exclusivity {
    /// Proven exclusive: the agent may project into, capture from and delete
    /// in the folder.
    Exclusive,
    /// Shared: the folder must be left exactly as it is.
    Shared {
        /// Which rule decided.
        reason: SharedReason,
        /// What the rule saw, for a human.
        detail: String,
    },
}

impl Exclusivity {
    /// Shared for `reason`, described by `detail`.
    pub fn shared(reason: SharedReason, detail: impl Into<String>) -> Exclusivity {
        Exclusivity::Shared {
            reason,
            detail: detail.into(),
        }
    }

    /// The answer when `err` stopped the check: shared, unproven.
    pub fn unproven(err: &Error) -> Exclusivity {
        Exclusivity::shared(SharedReason::Unproven, err.to_string())
    }

    /// `true` only for [`Exclusivity::Exclusive`].
    pub fn is_exclusive(&self) -> bool {
        matches!(self, Exclusivity::Exclusive)
    }

    /// The reason it is shared, if it is.
    pub fn reason(&self) -> Option<SharedReason> {
        match self {
            Exclusivity::Exclusive => None,
            Exclusivity::Shared { reason, .. } => Some(*reason),
        }
    }
}

impl fmt::Display for Exclusivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exclusivity::Exclusive => f.write_str("exclusive"),
            Exclusivity::Shared { reason, detail } => {
                write!(f, "shared ({}): {detail}", reason.name())
            }
        }
    }
}
