//! The paths a walk or a search could not enter or read, each with why.
//!
//! A directory the OS will not list (no permission, a path longer than
//! `PATH_MAX`), or a listed file that cannot be opened, leaves a hole in an
//! answer. `rg` names each such path on stderr and exits 2, so a user knows
//! the answer is partial; an answer here carries them as [`Unreadable`]
//! records, in path order, for every front to show. An entry that vanished
//! while the walk ran is not one of them: it is simply gone.

use std::{io, path::Path};

use crate::{
    node_modules,
    path_bytes::{compare_paths, path_to_bytes},
};

/// A path that could not be entered or read, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unreadable {
    /// Relative to the search root, `/`-separated, as raw bytes; empty for
    /// the root itself.
    pub path: Vec<u8>,
    /// The errno-style code: `EACCES`, `ENAMETOOLONG`, ... (`EIO` when the
    /// OS gave none).
    pub code: &'static str,
    /// What the OS said, as `rg` shows it: `Permission denied (os error 13)`.
    pub message: String,
}

impl Unreadable {
    /// The record for `err` met at `relative` (below the root).
    pub(crate) fn new(relative: &[u8], err: &io::Error) -> Unreadable {
        Unreadable {
            path: relative.to_vec(),
            code: code_of(err),
            message: err.to_string(),
        }
    }

    /// The record for a walker's error, with its path made relative to
    /// the root whose path is `root_len` bytes long; `None` for an entry
    /// that vanished mid-walk, and for errors that are not about reading
    /// the filesystem (a malformed line in an ignore file, which `rg`
    /// passes over too).
    pub(crate) fn from_walk(err: &ignore::Error, root_len: usize) -> Option<Unreadable> {
        let io = err.io_error()?;
        if io.kind() == io::ErrorKind::NotFound {
            return None;
        }
        let path = path_of(err).map(path_to_bytes).unwrap_or_default();
        let relative = path.get(root_len..).unwrap_or_default();
        Some(Unreadable::new(
            relative.strip_prefix(b"/").unwrap_or(relative),
            io,
        ))
    }

    /// The path as text; invalid UTF-8 is replaced with U+FFFD.
    pub fn path_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.path)
    }
}

/// The path a walker's error is about, if it names one.
fn path_of(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            path_of(err)
        }
        ignore::Error::Partial(errors) => errors.iter().find_map(path_of),
        _ => None,
    }
}

/// The errno name of `err` (`EIO` when it has none).
fn code_of(err: &io::Error) -> &'static str {
    #[cfg(unix)]
    if let Some(raw) = err.raw_os_error() {
        return errno_name(nix::errno::Errno::from_raw(raw));
    }
    match err.kind() {
        io::ErrorKind::PermissionDenied => "EACCES",
        io::ErrorKind::NotADirectory => "ENOTDIR",
        _ => "EIO",
    }
}

#[cfg(unix)]
fn errno_name(errno: nix::errno::Errno) -> &'static str {
    use nix::errno::Errno;
    match errno {
        Errno::EACCES => "EACCES",
        Errno::EPERM => "EPERM",
        Errno::ENAMETOOLONG => "ENAMETOOLONG",
        Errno::ELOOP => "ELOOP",
        Errno::ENOTDIR => "ENOTDIR",
        Errno::ENOENT => "ENOENT",
        Errno::EMFILE => "EMFILE",
        Errno::ENFILE => "ENFILE",
        Errno::ENOMEM => "ENOMEM",
        Errno::ESTALE => "ESTALE",
        Errno::EOVERFLOW => "EOVERFLOW",
        Errno::ENXIO => "ENXIO",
        Errno::EISDIR => "EISDIR",
        _ => "EIO",
    }
}

/// What of a scan's `records` an answer reports: all of them, but those in
/// a `node_modules` the answer leaves out (a walk for it would not have
/// entered there), by the one [`crate::node_modules`] rule.
pub(crate) fn reported(records: &[Unreadable], include_node_modules: bool) -> Vec<Unreadable> {
    records
        .iter()
        .filter(|record| include_node_modules || !node_modules::in_node_modules(&record.path))
        .cloned()
        .collect()
}

/// `records` in path order, each path once (the first record of a path
/// kept): walks that share directories may meet one error twice, and a
/// search adds the files it could not open to its walk's records.
pub(crate) fn merged(mut records: Vec<Unreadable>) -> Vec<Unreadable> {
    records.sort_by(|a, b| compare_paths(&a.path, &b.path));
    records.dedup_by(|later, earlier| later.path == earlier.path);
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walker_errors_become_records_below_the_root() {
        let denied = || io::Error::from_raw_os_error(13);
        let with_path = |path: &str, err: ignore::Error| ignore::Error::WithPath {
            path: path.into(),
            err: Box::new(err),
        };
        let table: Vec<(ignore::Error, Option<(&str, &str)>)> = vec![
            (
                with_path("/r/a/locked", ignore::Error::Io(denied())),
                Some(("a/locked", "EACCES")),
            ),
            (
                ignore::Error::WithDepth {
                    depth: 3,
                    err: Box::new(with_path(
                        "/r/deep",
                        ignore::Error::Io(io::Error::from_raw_os_error(36)),
                    )),
                },
                Some(("deep", "ENAMETOOLONG")),
            ),
            (
                with_path("/r", ignore::Error::Io(denied())),
                Some(("", "EACCES")),
            ),
            // Vanished mid-walk: not a hole in the answer.
            (
                with_path(
                    "/r/gone",
                    ignore::Error::Io(io::Error::from_raw_os_error(2)),
                ),
                None,
            ),
            // A malformed ignore-file line is no read error.
            (
                with_path(
                    "/r/.gitignore",
                    ignore::Error::Glob {
                        glob: Some("a[".into()),
                        err: "unclosed class".into(),
                    },
                ),
                None,
            ),
        ];
        for (err, expected) in table {
            let got = Unreadable::from_walk(&err, 2);
            let got = got.as_ref().map(|u| (u.path_lossy().into_owned(), u.code));
            let expected = expected.map(|(path, code)| (path.to_string(), code));
            assert_eq!(got, expected, "{err}");
        }
        let record = Unreadable::from_walk(&with_path("/r/x", ignore::Error::Io(denied())), 2);
        assert_eq!(
            record.unwrap().message,
            "Permission denied (os error 13)",
            "the OS's words, as rg prints them"
        );
    }

    #[test]
    fn merged_is_path_order_without_repeats() {
        let record =
            |path: &str| Unreadable::new(path.as_bytes(), &io::Error::from_raw_os_error(13));
        let got = merged(vec![record("b"), record("a/x"), record("a.d"), record("b")]);
        let paths: Vec<_> = got.iter().map(|u| u.path_lossy().into_owned()).collect();
        assert_eq!(paths, ["a/x", "a.d", "b"]);
    }
}
