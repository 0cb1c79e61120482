//! File I/O for the tools a coding agent changes files with.
//!
//! An agent's `write`, `edit` and `patch` act on paths a model chose. This
//! crate makes the promises those tools give hold on a hostile tree:
//!
//! - [`Scope`] (from [`natives_core::resolve`]): a path is resolved on the
//!   filesystem, one component at a time, holding a handle on each
//!   directory, and refused (`OutsideRoot`) when its real location leaves
//!   the working directory, however many symlinks it goes through; later
//!   operations act through the handle, so a directory swapped for a link
//!   after the check cannot redirect them. Paths past `PATH_MAX` are
//!   refused (`NameTooLong`) before any lookup.
//! - [`read_file`]: regular files only (a FIFO, socket or device is refused
//!   before it can block), read non-blocking, never past a [`Limit`].
//! - [`apply`]: writes, deletes and renames made all together or not at all,
//!   each write atomic (temporary file, sync, rename) and keeping the old
//!   file's owner, group, mode and extended attributes; read-only and
//!   hard-linked files are refused rather than silently replaced; a write can
//!   require the file to be the version that was read ([`Expect`]).
//!
//! Errors are [`natives_core::Error`]s whose kind names the refusal:
//! `OutsideRoot` (`EXDEV`), `NotARegularFile` (`EFTYPE`), `IsADirectory`
//! (`EISDIR`), `TooLarge` (`EFBIG`), `ReadOnly` (`EPERM`), `HardLinked`
//! (`EMLINK`), `Changed` (`ESTALE`), `AlreadyExists` (`EEXIST`),
//! `NameTooLong` (`ENAMETOOLONG`), `LossyName` (`EILSEQ`: a path copied
//! from a listing that lost the bytes of a name that is not UTF-8, see
//! `lossy`), and the usual `ENOENT`/`ENOTDIR`/`EACCES`.
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//! use natives_files::{Change, Expect, Limit, Scope, apply, read_file};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let scope = Scope::confined(dir.path()).unwrap();
//! let change = Change::Write { path: "notes/a.txt".into(), data: b"hello\n".to_vec(), expect: Expect::Absent, executable: None };
//! apply(&scope, &[change]).unwrap();
//! let read = read_file(&scope, Path::new("notes/a.txt"), Limit::default()).unwrap();
//! assert_eq!(read.bytes, b"hello\n");
//! let escape = Change::Write { path: "../outside.txt".into(), data: vec![], expect: Expect::Any, executable: None };
//! assert_eq!(apply(&scope, &[escape]).unwrap_err().code(), "EXDEV");
//! ```

pub mod change;
pub mod journal;
mod lossy;
pub mod read;
mod sys;
pub mod write;

pub use change::{Applied, ApplyOptions, Change, Outcome, apply};
pub use journal::{Recovery, recover};
pub use natives_core::resolve::{Last, Location, MAX_LINKS, MAX_PATH_BYTES, Scope};
pub use read::{Contents, DEFAULT_MAX_BYTES, Limit, ReadOptions, Stamp, read_file};
pub use write::Expect;
