//! What a walk's rules left out, recorded where they left it out.
//!
//! `rg -g` applies its globs before the ignore rules and the hidden rule:
//! a file a glob selects is searched even where an ignore file or the
//! hidden rule leaves it out, and a directory a glob selects is entered.
//! A cached scan holds no such entry, so a search with a selecting glob can
//! be answered from it only when the glob selects none of what the scan's
//! rules left out. This module lists that: in every directory the scan
//! lists (its root and its directories), the children it does not hold.
//! A directory left out is recorded, never entered: whatever lies below it
//! is reachable only through it.
//!
//! The record is made the first time a search needs it rather than by every
//! walk that fills the cache: listing every directory again costs a third
//! to a half of a walk (measured on the bench's real trees), which glob and
//! fuzzy searches, and greps without a selecting glob, would pay for
//! nothing. It is small beside the list it belongs to (0 to 3% of its bytes
//! on the bench's trees): an ignored directory is one entry. A scan that follows filesystem events keeps its record exact
//! from then on as it keeps its entries (see `crate::watch`).
//!
//! A child that appeared since the scan's list was last brought up to date
//! is recorded as left out (a search with a glob selecting it then walks:
//! slower, never wrong), and the event that reports it takes it out of the
//! record when it is applied.

use std::{fs, path::Path};

use super::{
    collect::{Batch, sorted},
    rules::is_git_dir,
};
use crate::{
    cancel::CancelToken,
    entries::{Entries, FileType, bytes_to_path, path_to_bytes},
    error::Result,
};

/// How many directories are listed between two looks at the token.
const CANCEL_POLL_DIRS: usize = 64;

/// What the rules of the scan `entries` of `root` left out of the
/// directories it lists, in path order, types from the listings (see the
/// module docs). A directory that can no longer be listed adds nothing (the
/// scan names it among what it could not read, or it is gone).
pub(crate) fn skipped(root: &Path, entries: &Entries, token: &CancelToken) -> Result<Entries> {
    let dirs = entries
        .iter()
        .filter(|entry| entry.file_type == FileType::Dir)
        .map(|entry| entry.path);
    let mut found = Batch::default();
    for (listed, dir) in std::iter::once(&b""[..]).chain(dirs).enumerate() {
        if listed % CANCEL_POLL_DIRS == 0 {
            token.check()?;
        }
        left_out_of(root, dir, entries, &mut found);
    }
    Ok(sorted(&[found]))
}

/// Add to `found` the children of the listed directory `dir` (relative to
/// `root`, empty for the root) that `entries` does not hold.
fn left_out_of(root: &Path, dir: &[u8], entries: &Entries, found: &mut Batch) {
    let Ok(listing) = fs::read_dir(root.join(bytes_to_path(dir))) else {
        return;
    };
    let mut path = dir.to_vec();
    if !dir.is_empty() {
        path.push(b'/');
    }
    let base = path.len();
    for child in listing.flatten() {
        let name = child.file_name();
        let name = path_to_bytes(Path::new(&name));
        if is_git_dir(&name) {
            continue;
        }
        path.truncate(base);
        path.extend_from_slice(&name);
        if entries.find(&path).is_some() {
            continue;
        }
        if let Ok(file_type) = child.file_type() {
            found.push(&path, FileType::from_std(file_type), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::walk::{ScanPolicy, scan};

    fn paths(entries: &Entries) -> Vec<(String, FileType)> {
        entries
            .iter()
            .map(|e| (e.path_lossy().into_owned(), e.file_type))
            .collect()
    }

    /// Ignored files and directories, hidden ones and those an `.ignore`
    /// or `.rgignore` leaves out are recorded where they are left out; what
    /// lies inside a directory left out, and `.git`, are not.
    #[test]
    fn what_the_rules_leave_out_is_recorded_at_the_level_they_leave_it_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let git = Command::new("git")
            .arg("init")
            .arg("-q")
            .arg(&root)
            .status();
        assert!(git.unwrap().success());
        let files: &[(&str, &str)] = &[
            (".gitignore", "*.log\n!keep.log\nbuild/\n"),
            ("src/.ignore", "gen.rs\n"),
            ("src/deep/.rgignore", "draft.md\n"),
            ("debug.log", ""),
            ("keep.log", ""),
            ("build/out/a.rs", ""),
            (".env", ""),
            (".config/x.toml", ""),
            ("src/gen.rs", ""),
            ("src/lib.rs", ""),
            ("src/deep/draft.md", ""),
            ("src/deep/trace.log", ""),
            ("node_modules/m/.bin/x", ""),
        ];
        for (rel, text) in files {
            let path = root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let token = CancelToken::new();
        let table: &[(bool, &[(&str, FileType)])] = &[
            (
                true,
                &[
                    ("build", FileType::Dir),
                    ("debug.log", FileType::File),
                    ("src/deep/draft.md", FileType::File),
                    ("src/deep/trace.log", FileType::File),
                    ("src/gen.rs", FileType::File),
                ],
            ),
            (
                false,
                &[
                    (".config", FileType::Dir),
                    (".env", FileType::File),
                    (".gitignore", FileType::File),
                    ("build", FileType::Dir),
                    ("debug.log", FileType::File),
                    ("node_modules/m/.bin", FileType::Dir),
                    ("src/.ignore", FileType::File),
                    ("src/deep/.rgignore", FileType::File),
                    ("src/deep/draft.md", FileType::File),
                    ("src/deep/trace.log", FileType::File),
                    ("src/gen.rs", FileType::File),
                ],
            ),
        ];
        for &(include_hidden, expected) in table {
            let policy = ScanPolicy {
                include_hidden,
                use_gitignore: true,
            };
            let entries = scan(&root, policy, &token).unwrap();
            let expected: Vec<(String, FileType)> = expected
                .iter()
                .map(|&(path, file_type)| (path.to_string(), file_type))
                .collect();
            let found = skipped(&root, &entries, &token).unwrap();
            assert_eq!(paths(&found), expected, "hidden {include_hidden}");
        }
        let all = ScanPolicy {
            include_hidden: true,
            use_gitignore: false,
        };
        let entries = scan(&root, all, &token).unwrap();
        assert!(skipped(&root, &entries, &token).unwrap().is_empty());
        let cancelled = CancelToken::new();
        cancelled.cancel();
        let err = skipped(&root, &entries, &cancelled).unwrap_err();
        assert_eq!(err.code(), "ABORT_ERR");
    }
}
