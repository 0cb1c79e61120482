//! The rules every walk applies, in one place so the cache fill, a fresh
//! listing, the ordered walk and the record of what was left out can never
//! disagree: [`ScanPolicy`]'s hidden and ignore-file switches, links never
//! followed, `.git` never entered, `node_modules` only when asked for.

use std::path::Path;

use ignore::{DirEntry, WalkBuilder};

use crate::node_modules::NODE_MODULES;

/// The two traversal switches that partition the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScanPolicy {
    /// Include dot-files and dot-directories.
    pub include_hidden: bool,
    /// Honour `.gitignore` (inside git repositories, as git and ripgrep do),
    /// `.git/info/exclude`, the global git excludes, `.ignore` files and
    /// `.rgignore` files (ripgrep's own, which win over `.ignore`).
    pub use_gitignore: bool,
}

impl ScanPolicy {
    /// The policy every search starts from: dot-files left out, ignore files
    /// honoured, as `rg` and `fd` do. `glob`, `grep` and `fuzzy_find` take
    /// their `include_hidden` and `use_gitignore` defaults from here, and so
    /// every front does, so no two searches differ unless asked to.
    pub const DEFAULT: ScanPolicy = ScanPolicy {
        include_hidden: false,
        use_gitignore: true,
    };
}

/// The ignore file ripgrep reads besides git's and `.ignore`, with the
/// highest precedence of them all.
pub(crate) const RG_IGNORE: &str = ".rgignore";

/// The name of the directory that is never entered.
const GIT_DIR: &str = ".git";

/// The name of the directory a walk never enters.
pub(crate) fn is_git_dir(name: &[u8]) -> bool {
    name == GIT_DIR.as_bytes()
}

/// The walk every scan shares: `policy`'s rules, links never followed,
/// `.git` never entered, nor `node_modules` unless asked for. Callers
/// choose the threads.
pub(crate) fn walker(root: &Path, policy: ScanPolicy, node_modules: bool) -> WalkBuilder {
    walker_admitting(root, policy, node_modules, |_| true)
}

/// [`walker`], entering (and reporting) below the root only the entries
/// `admit` accepts as well.
pub(crate) fn walker_admitting(
    root: &Path,
    policy: ScanPolicy,
    node_modules: bool,
    admit: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    let ignore = policy.use_gitignore;
    if ignore {
        builder.add_custom_ignore_filename(RG_IGNORE);
    }
    builder
        .hidden(!policy.include_hidden)
        .follow_links(false)
        .git_ignore(ignore)
        .git_global(ignore)
        .git_exclude(ignore)
        .ignore(ignore)
        .parents(ignore)
        .filter_entry(move |entry| {
            let name = entry.file_name();
            entry.depth() == 0
                || (name != GIT_DIR && (node_modules || name != NODE_MODULES) && admit(entry))
        });
    builder
}
