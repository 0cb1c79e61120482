//! The bounds a capture keeps within, and the one it would pass: what one
//! run's evidence, one archive's objects and commits, and one capture may
//! take. Capturing (`capture.rs`), checking (`validate.rs`) and publishing
//! (`publish.rs`) each hold an archive to them.

use std::fmt;

use serde::Serialize;

/// The most one run's evidence may take on disk, every archive and any
/// staging left by an interrupted publication included (seed 003).
pub const RUN_BYTES: u64 = 64 << 20;

/// The most object bytes (expanded) one archive may hold: about eight
/// times [`RUN_BYTES`], what a well-compressing source tree packs into. It
/// bounds the memory and the time spent before the pack's size is known.
pub const OBJECT_BYTES: u64 = 512 << 20;

/// The most objects one archive may hold: a checkout of this many files
/// and directories is a monorepo, whose evidence would be too slow to
/// check before every removal.
pub const OBJECTS: u64 = 200_000;

/// The most commits (checkpoints: the head, the base, the reflog's
/// entries, `ORIG_HEAD`) one archive may hold: every one adds a tree to
/// pack and check, and a longer reflog is a checkout in long use, not an
/// inactive one.
pub const CHECKPOINTS: usize = 256;

pub use crate::own_history::REFLOG_BYTES;

/// The bounds a capture keeps within.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// [`RUN_BYTES`].
    pub run_bytes: u64,
    /// [`OBJECT_BYTES`].
    pub object_bytes: u64,
    /// [`OBJECTS`].
    pub objects: u64,
    /// [`CHECKPOINTS`].
    pub checkpoints: usize,
    /// The most bytes this capture may add ([`RUN_BYTES`]): a caller
    /// sharing one budget among several captures (a housekeeping pass)
    /// gives what is left of it.
    pub new_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            run_bytes: RUN_BYTES,
            object_bytes: OBJECT_BYTES,
            objects: OBJECTS,
            checkpoints: CHECKPOINTS,
            new_bytes: RUN_BYTES,
        }
    }
}

/// Which bound a capture would pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Bound {
    /// The run's evidence on disk ([`Bounds::run_bytes`]).
    RunBytes,
    /// Expanded object bytes ([`Bounds::object_bytes`]).
    ObjectBytes,
    /// Objects ([`Bounds::objects`]).
    Objects,
    /// Archived commits ([`Bounds::checkpoints`]).
    Checkpoints,
    /// The `HEAD` reflog's size ([`REFLOG_BYTES`]).
    ReflogBytes,
    /// What this capture may add ([`Bounds::new_bytes`]).
    NewBytes,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::RunBytes => "bytes of the run's evidence",
            Bound::ObjectBytes => "expanded object bytes",
            Bound::Objects => "objects",
            Bound::Checkpoints => "checkpoints",
            Bound::ReflogBytes => "bytes of HEAD's reflog",
            Bound::NewBytes => "bytes of new evidence",
        })
    }
}
