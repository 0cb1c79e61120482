//! The rule files a persisted scan depends on: every file whose rules the
//! walk applied, and every place where a new one would have changed it.
//!
//! Inside the tree, a rule file made or removed changes its directory,
//! whose identity the record keeps, so only the rule files present are
//! recorded. Above the root and outside the tree (git's global
//! configuration and excludes, a repository's `info/exclude`) no directory
//! identity is kept, so each is recorded present or absent. They are the
//! files the watcher follows (see `watch`).

use std::path::{Path, PathBuf};

use super::{
    dirs::{Dir, each_dir},
    identity::Identity,
};
use crate::{
    cancel::CancelToken,
    entries::{Entries, bytes_to_path},
    walk::ScanKey,
    watch::{RULE_NAMES, global_rules_of},
};

/// Rule files with their identity (`None`: absent).
pub(super) type Rules = Vec<(PathBuf, Option<Identity>)>;

/// The rule files of `key`'s scans outside its tree: every rule name in
/// each of the root's ancestors, the `info/exclude` of a repository there,
/// git's global configuration and excludes; each present or absent. None
/// when the scan honours no ignore files.
///
/// Taken before a walk and again when its record is written: no directory
/// identity covers these, so only two equal snapshots prove the walk read
/// the rules the record names.
pub(super) fn outside_tree(key: &ScanKey) -> Rules {
    if !key.policy.use_gitignore {
        return Vec::new();
    }
    let mut rules = Vec::new();
    for ancestor in key.root.ancestors().skip(1) {
        for name in RULE_NAMES {
            let path = ancestor.join(bytes_to_path(name));
            let identity = Identity::of(&path);
            note_repository(&path, identity, &mut rules);
            rules.push((path, identity));
        }
    }
    for path in global_rules_of(key) {
        let identity = Identity::of(&path);
        rules.push((path, identity));
    }
    rules
}

/// The rule files present in the root and the directories of `entries`,
/// `key`'s scan (with a repository's `info/exclude`, present or not).
/// One absent is not named: making it changes its directory.
pub(super) fn inside_tree(key: &ScanKey, entries: &Entries) -> Rules {
    if !key.policy.use_gitignore {
        return Vec::new();
    }
    let in_dir = |_: usize, dir: Dir<'_>| {
        let mut rules = Vec::new();
        for name in RULE_NAMES {
            let path = dir.absolute.join(bytes_to_path(name));
            if let Some(identity) = Identity::of(&path) {
                note_repository(&path, Some(identity), &mut rules);
                rules.push((path, Some(identity)));
            }
        }
        Some(rules)
    };
    let never = CancelToken::new();
    let found = each_dir(key, entries, &never, in_dir).unwrap_or_default();
    found.into_iter().flatten().collect()
}

/// When `path` is a `.git` directory, its `info/exclude`, present or not.
fn note_repository(
    path: &Path,
    identity: Option<Identity>,
    rules: &mut Vec<(PathBuf, Option<Identity>)>,
) {
    let is_git_dir = path.file_name().is_some_and(|name| name == ".git");
    if is_git_dir && identity.is_some_and(|identity| identity.is_dir()) {
        let exclude = path.join("info/exclude");
        let identity = Identity::of(&exclude);
        rules.push((exclude, identity));
    }
}
