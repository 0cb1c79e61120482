//! How a command ended, and the exit code that tells it: every command
//! returns one, and only `main` turns it into a status.

use std::process::ExitCode;

/// How a command ended.
pub enum Outcome {
    /// It found or did what was asked (exit 0).
    Matched,
    /// Nothing matched, or nothing was done (exit 1).
    NoMatch,
    /// What was asked was refused, and the output says why (exit 3).
    Refused,
    /// A search answered, but part of the tree could not be entered or
    /// read; stderr names each such path (exit 2, as `rg`).
    Incomplete,
    /// A command run on the user's behalf ended with this status.
    Exited(u8),
}

impl Outcome {
    /// `Matched` when anything was found.
    pub fn from_count(found: u64) -> Outcome {
        if found > 0 {
            Outcome::Matched
        } else {
            Outcome::NoMatch
        }
    }

    /// The exit code that tells it (see the crate docs).
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Matched => ExitCode::SUCCESS,
            Outcome::NoMatch => ExitCode::from(1),
            Outcome::Refused => ExitCode::from(3),
            Outcome::Incomplete => ExitCode::from(2),
            Outcome::Exited(code) => ExitCode::from(code),
        }
    }

    /// `Incomplete` when a search `incomplete`ly covered its tree, else
    /// this outcome.
    pub fn unless_incomplete(self, incomplete: bool) -> Outcome {
        if incomplete {
            Outcome::Incomplete
        } else {
            self
        }
    }
}
