//! Why a checkout was not archived: a capture (`capture.rs`) or its
//! publication (`publish.rs`) refuses with one of these, nothing written.

use std::{fmt, path::PathBuf};

use super::bounds::Bound;

/// Why a checkout was not archived. Nothing was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path is not the top of a git worktree.
    NotAWorktree(PathBuf),
    /// The checkout holds something its `HEAD` does not, so an archive of
    /// `HEAD` would not rebuild it.
    NotClean(String),
    /// `HEAD` names no commit yet.
    Unborn,
    /// The base names no commit.
    UnknownBase(String),
    /// A commit the checkout showed (`seen_as`) is no longer in the
    /// repository, or cannot be read whole.
    Unarchivable {
        /// Where the checkout showed it (`HEAD@{3}`, `ORIG_HEAD`).
        seen_as: String,
        /// Why.
        why: String,
    },
    /// The repository keeps what the archive needs in a way natives cannot
    /// read entry by entry (reftable reflogs), or the filesystem cannot
    /// publish without replacing.
    Unsupported(String),
    /// Over a bound.
    OverBound {
        /// Which.
        bound: Bound,
        /// Its limit.
        limit: u64,
        /// What the archive would reach.
        actual: u64,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not archived: ")?;
        match self {
            Refusal::NotAWorktree(path) => {
                write!(f, "{} is not the top of a git worktree", path.display())
            }
            Refusal::NotClean(why) => write!(
                f,
                "the checkout holds work its HEAD does not ({why}); an archive of HEAD would not rebuild it"
            ),
            Refusal::Unborn => f.write_str("HEAD names no commit yet"),
            Refusal::UnknownBase(rev) => write!(f, "the base {rev:?} names no commit"),
            Refusal::Unarchivable { seen_as, why } => write!(f, "{seen_as}: {why}"),
            Refusal::Unsupported(why) => f.write_str(why),
            Refusal::OverBound {
                bound,
                limit,
                actual,
            } => write!(
                f,
                "{actual} {bound}, over the bound of {limit}; nothing was written"
            ),
        }
    }
}
