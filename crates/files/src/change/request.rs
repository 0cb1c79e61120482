//! The changes a caller asks [`apply`](super::apply) for, apart from the
//! batch that makes them, so the checks made before anything changes
//! (`check.rs`) read a change without importing the module that runs the
//! batch.

use std::path::PathBuf;

use crate::write::Expect;

/// One change to make.
#[derive(Clone, Debug)]
pub enum Change {
    /// Create or replace the file at `path` (links followed) with `data`;
    /// `executable` gives it execute permission wherever it has read
    /// permission, or takes it away (`None`: an existing file keeps its mode,
    /// a new one gets 0o666 less the umask).
    Write {
        /// The file to write (relative to the scope's directory, or absolute).
        path: PathBuf,
        /// Its new contents.
        data: Vec<u8>,
        /// What must be there when the write lands.
        expect: Expect,
        /// Set or clear the execute bits; `None` leaves the mode alone.
        executable: Option<bool>,
    },
    /// Delete the entry at `path` (a link is deleted, not its target).
    Delete {
        /// The entry to delete.
        path: PathBuf,
        /// What must be there (the file a link leads to is not looked at).
        expect: Expect,
    },
    /// Move the entry at `from` (a link moves as a link) to `to`, which must
    /// not exist. An `Unchanged` expectation is checked against the file
    /// the entry leads to (through a link), as [`read_file`](crate::read_file) saw it.
    Rename {
        /// The entry to move.
        from: PathBuf,
        /// Where it goes; must not exist.
        to: PathBuf,
        /// The version the entry's file must still be.
        expect: Expect,
    },
}
