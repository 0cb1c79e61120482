//! The walker that fills the cache: one parallel, ignore-aware directory walk.
//!
//! Contract (seed 001): `ignore`'s walker, links never followed, results in
//! path order, `.git` never entered (pruned before descent, not filtered
//! afterwards: a big `.git` must cost nothing), `node_modules` always
//! collected by the cache fill (consumers filter it), type and mtime from
//! `symlink_metadata`. A walk that is not stored collects only what its query
//! needs ([`Needs`]): it never enters a `node_modules` the query hides, and
//! takes types from the directory listing when it shows no mtime.
//!
//! The walk runs on all cores and is sorted once at the end, which gives the
//! same deterministic order as a sorted sequential walk at a fraction of the
//! wall time. Entries that vanish mid-walk are skipped and names that are
//! not UTF-8 kept as bytes; a subdirectory the walk cannot list (no
//! permission, a path past `PATH_MAX`) is no error either, but is named with
//! why in the list's [`Entries::unreadable`], as `rg` names it.
//!
//! The `ordered` submodule walks by the same rules but hands entries out in path order
//! while it goes, for a consumer that may stop after the first few (grep
//! without the cache); the `skipped` submodule lists what a walk's rules
//! left out.

mod collect;
pub(crate) mod ordered;
mod rules;
mod skipped;
mod stat_at;

pub(crate) use collect::Wanted;
pub use rules::ScanPolicy;
pub(crate) use rules::is_git_dir;
pub(crate) use skipped::skipped;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use crate::{
    cancel::CancelToken,
    entries::{Entries, FileType, bytes_to_path},
    error::Result,
};
pub(crate) use collect::walker_threads;
use collect::{Mtimes, collect_batches, sorted};
use rules::{walker, walker_admitting};
use stat_at::StatAt;

/// What a walk is of, and what a cached scan is keyed by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScanKey {
    /// Canonical root directory (see [`crate::resolve_search_path`]).
    pub root: PathBuf,
    /// Traversal switches.
    pub policy: ScanPolicy,
}

/// How much a walk learns about each entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Type and mtime from `symlink_metadata`: what the cache stores.
    TypeAndMtime,
    /// Type from the directory listing only (no `lstat`, mtimes unknown):
    /// for a fresh listing whose consumer shows no mtime, or stats only
    /// the entries it returns.
    TypeOnly,
}

/// What a walk that is not stored must collect: a consumer's query, not the
/// cache's whole partition (seed 001: the cache fill always collects
/// `node_modules`; a fresh walk for a query that hides it need not enter it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Entries inside `node_modules` directories; without them such a
    /// directory is never entered (nor listed).
    pub node_modules: bool,
    /// How much to learn about each entry.
    pub detail: Detail,
}

impl Needs {
    /// Everything the cache stores.
    pub const EVERYTHING: Needs = Needs {
        node_modules: true,
        detail: Detail::TypeAndMtime,
    };
}

/// Walk `root` (an existing, canonical directory) under `policy`, with
/// type and mtime for every entry.
///
/// Polls `token` for every entry; returns its error as soon as it trips.
pub fn scan(root: &Path, policy: ScanPolicy, token: &CancelToken) -> Result<Entries> {
    scan_for(root, policy, Needs::EVERYTHING, token)
}

/// [`scan`], collecting only what `needs` asks for.
pub fn scan_for(
    root: &Path,
    policy: ScanPolicy,
    needs: Needs,
    token: &CancelToken,
) -> Result<Entries> {
    let mut builder = walker(root, policy, needs.node_modules);
    builder.threads(walker_threads());
    let mtimes = match needs.detail {
        Detail::TypeAndMtime => Mtimes::All,
        Detail::TypeOnly => Mtimes::None,
    };
    Ok(sorted(&collect_batches(root, &builder, mtimes, token)?))
}

/// Called with every directory a watched walk admits, before the walk reads
/// its ignore files or lists it (see [`scan_watching`]).
pub(crate) type OnDir = Arc<dyn Fn(&Path) + Send + Sync>;

/// [`scan`], calling `on_dir` with the root and then with every directory
/// below it that the walk admits, each before the walk reads that
/// directory's ignore files or lists it: `ignore` decides on a child while
/// it lists the parent (the filter runs last, on admitted entries only) and
/// reads the child later. A watch added by `on_dir` therefore sees every
/// change the walk's listing could miss.
pub(crate) fn scan_watching(
    root: &Path,
    policy: ScanPolicy,
    on_dir: OnDir,
    token: &CancelToken,
) -> Result<Entries> {
    on_dir(root);
    let mut builder = walker_admitting(root, policy, true, move |entry| {
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            on_dir(entry.path());
        }
        true
    });
    builder.threads(walker_threads());
    Ok(sorted(&collect_batches(
        root,
        &builder,
        Mtimes::All,
        token,
    )?))
}

/// Type and mtime of `path` by `lstat` (links not followed), or `None`
/// when it does not exist or cannot be read.
pub(crate) fn lstat(path: &Path) -> Option<(FileType, Option<i64>)> {
    StatAt::default().lstat(path)
}

/// A matcher deciding single paths below `root` by the rules a walk of
/// `policy` applies (ignore files of every level, hidden entries); `.git`
/// and the cache's `node_modules` rule are the caller's to apply.
pub(crate) fn matcher(root: &Path, policy: ScanPolicy) -> ignore::IncrementalIgnore {
    let mut matchers = walker(root, policy, true).build_matchers();
    matchers.swap_remove(0)
}

/// [`scan_for`] with types from the directory listings and, by `lstat`,
/// the mtimes of the entries `wanted` accepts: a fresh listing whose
/// matches all show or sort by their mtime learns them on every walker
/// thread while the walk goes, not one after another once it is over.
pub(crate) fn scan_learning_mtimes(
    root: &Path,
    policy: ScanPolicy,
    node_modules: bool,
    wanted: &Wanted<'_>,
    token: &CancelToken,
) -> Result<Entries> {
    let mut builder = walker(root, policy, node_modules);
    builder.threads(walker_threads());
    let mtimes = Mtimes::Of(wanted);
    Ok(sorted(&collect_batches(root, &builder, mtimes, token)?))
}

/// Learn the mtime of each entry of `indices` whose mtime is unknown (a
/// list walked for types only), by `lstat` under `root`: a query that shows
/// mtimes stats only what it returns. An entry that vanished since the walk
/// keeps an unknown mtime.
pub(crate) fn stat_mtimes(root: &Path, entries: &mut Entries, indices: &[usize]) {
    let mut stat = StatAt::default();
    for &index in indices {
        let entry = entries.get(index);
        if entry.mtime_ms.is_some() {
            continue;
        }
        let path = root.join(bytes_to_path(entry.path));
        if let Some((_, Some(mtime_ms))) = stat.lstat(&path) {
            entries.set_mtime(index, mtime_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{fs, process::Command};

    use crate::{entries::Entry, unreadable::Unreadable};

    fn touch(root: &Path, rel: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, rel).unwrap();
    }

    fn paths(entries: &Entries) -> Vec<String> {
        entries
            .iter()
            .map(|e| e.path_lossy().into_owned())
            .collect()
    }

    const ALL: ScanPolicy = ScanPolicy {
        include_hidden: true,
        use_gitignore: false,
    };

    #[test]
    fn sorted_and_without_git_entries() {
        let dir = tempfile::tempdir().unwrap();
        for rel in [
            "b/z.ts",
            "a.txt",
            "a/b.ts",
            ".git/HEAD",
            "sub/.git/x",
            ".hidden/h",
            "node_modules/m/i.js",
        ] {
            touch(dir.path(), rel);
        }
        let got = paths(&scan(dir.path(), ALL, &CancelToken::new()).unwrap());
        assert_eq!(
            got,
            [
                ".hidden",
                ".hidden/h",
                "a",
                "a/b.ts",
                "a.txt",
                "b",
                "b/z.ts",
                "node_modules",
                "node_modules/m",
                "node_modules/m/i.js",
                "sub"
            ]
        );
    }

    /// The directories of `watched` that `walk` opened or listed (read
    /// through inotify, so a walk that entered a directory and dropped what
    /// it found there is caught, not only one that returned it).
    #[cfg(target_os = "linux")]
    pub(super) fn entered(watched: &[PathBuf], walk: impl FnOnce()) -> Vec<PathBuf> {
        use nix::{
            errno::Errno,
            sys::inotify::{AddWatchFlags, InitFlags, Inotify},
        };
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).unwrap();
        let listened = AddWatchFlags::IN_OPEN | AddWatchFlags::IN_ACCESS;
        let watches: Vec<_> = watched
            .iter()
            .map(|dir| (inotify.add_watch(dir, listened).unwrap(), dir))
            .collect();
        walk();
        let mut entered = Vec::new();
        loop {
            match inotify.read_events() {
                Ok(events) => entered.extend(events.iter().map(|event| {
                    let (_, dir) = watches.iter().find(|(wd, _)| *wd == event.wd).unwrap();
                    dir.to_path_buf()
                })),
                Err(Errno::EAGAIN) => break,
                Err(err) => panic!("reading inotify events: {err}"),
            }
        }
        entered.sort();
        entered.dedup();
        entered
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn git_directories_are_pruned_before_descent() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ok = Command::new("git")
            .arg("init")
            .arg("-q")
            .arg(&root)
            .status();
        assert!(ok.unwrap().success());
        for rel in ["listed/a.txt", "sub/.git/objects/x", "sub/b.txt"] {
            touch(&root, rel);
        }
        let (git, nested_git, listed) = (
            root.join(".git"),
            root.join("sub/.git"),
            root.join("listed"),
        );
        let watched = [git, nested_git, listed.clone()];
        let token = CancelToken::new();
        for use_gitignore in [false, true] {
            let policy = ScanPolicy {
                include_hidden: true,
                use_gitignore,
            };
            let scanned = entered(&watched, || drop(scan(&root, policy, &token).unwrap()));
            // `listed` shows the watch sees a walk enter a directory.
            assert_eq!(scanned, std::slice::from_ref(&listed), "scan, {policy:?}");
            let in_order = entered(&watched, || {
                let halt = std::sync::atomic::AtomicBool::new(false);
                ordered::walk_in_order(
                    &root,
                    ordered::Listing::all(policy),
                    &token,
                    &halt,
                    &mut |_| {},
                )
                .unwrap();
            });
            assert_eq!(
                in_order,
                std::slice::from_ref(&listed),
                "ordered walk, {policy:?}"
            );
        }
    }

    /// A walk that is not stored enters `node_modules` only for a query
    /// that returns what is inside; the cache fill always does (seed 001),
    /// and every answer is the one a full walk gives.
    #[cfg(target_os = "linux")]
    #[test]
    fn queries_that_hide_node_modules_never_enter_it_without_the_cache() {
        use crate::{
            cache::{CachePolicy, ScanCache},
            fuzzy::{FuzzyOptions, fuzzy_find},
            glob::{GlobOptions, glob},
            grep::{GrepOptions, grep},
        };
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for rel in [
            "src/needle.ts",
            "node_modules/m/needle.ts",
            "pkg/node_modules/n/needle.ts",
        ] {
            fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
            fs::write(root.join(rel), "needle\n").unwrap();
        }
        let modules = [root.join("node_modules"), root.join("pkg/node_modules")];
        let watched = [modules[0].clone(), modules[1].clone(), root.join("src")];
        let uncached = ScanCache::new(CachePolicy::default());
        let no_ttl = ScanCache::new(CachePolicy::default().ttl(std::time::Duration::ZERO));
        let token = CancelToken::new();
        for (cache, cached) in [(&uncached, false), (&no_ttl, true)] {
            for include in [None, Some(true)] {
                let mut found = Vec::new();
                let seen = entered(&watched, || {
                    let mut options = GlobOptions::new("**/*.ts", &root);
                    (options.cache, options.include_node_modules) = (cached, include);
                    let outcome = glob(&options, cache, &token, &mut |_| {}).unwrap();
                    found.push(outcome.matches().count());
                    let mut options = FuzzyOptions::new("needle", &root);
                    (options.cache, options.include_node_modules) = (cached, include);
                    let outcome = fuzzy_find(&options, cache, &token, &mut |_| {}).unwrap();
                    found.push(outcome.matches.len());
                    let mut options = GrepOptions::new("needle", &root);
                    (options.cache, options.include_node_modules) = (cached, include);
                    let outcome = grep(&options, cache, &token, &mut |_| {}).unwrap();
                    found.push(outcome.files_with_matches);
                });
                let (expected, entered_dirs) = match include {
                    None => (1, vec![root.join("src")]),
                    Some(_) => (3, watched.to_vec()),
                };
                assert_eq!(
                    found, [expected; 3],
                    "cache {cached}, node_modules {include:?}"
                );
                let mut entered_dirs = entered_dirs;
                entered_dirs.sort();
                assert_eq!(
                    seen, entered_dirs,
                    "cache {cached}, node_modules {include:?}"
                );
            }
        }
        let filled = entered(&watched, || {
            let mut options = GlobOptions::new("**/*.ts", &root);
            options.cache = true;
            assert_eq!(
                glob(&options, &uncached, &token, &mut |_| {})
                    .unwrap()
                    .matches()
                    .count(),
                1
            );
        });
        assert_eq!(
            filled.len(),
            3,
            "the cache fill collects node_modules: {filled:?}"
        );
    }

    #[test]
    fn hidden_and_gitignore_switches() {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("git")
            .arg("init")
            .arg("-q")
            .arg(dir.path())
            .status();
        assert!(ok.unwrap().success());
        for rel in [
            "keep.rs",
            "skip.log",
            ".dot/x",
            "nested/.gitignore",
            "nested/gen.rs",
            "nested/ok.rs",
            "other/.ignore",
            "other/hid.md",
        ] {
            touch(dir.path(), rel);
        }
        fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        fs::write(dir.path().join("nested/.gitignore"), "gen.rs\n").unwrap();
        fs::write(dir.path().join("other/.ignore"), "hid.md\n").unwrap();
        let token = CancelToken::new();
        let visible = |hidden, ignore| {
            let policy = ScanPolicy {
                include_hidden: hidden,
                use_gitignore: ignore,
            };
            paths(&scan(dir.path(), policy, &token).unwrap())
        };
        assert_eq!(
            visible(false, true),
            ["keep.rs", "nested", "nested/ok.rs", "other"]
        );
        let all = visible(true, false);
        for rel in [
            ".dot/x",
            ".gitignore",
            "nested/gen.rs",
            "other/hid.md",
            "skip.log",
        ] {
            assert!(all.contains(&rel.to_string()), "{rel} in {all:?}");
        }
        assert!(!all.iter().any(|p| p.starts_with(".git/")));
    }

    #[cfg(unix)]
    #[test]
    fn special_files_links_and_odd_names() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "target.txt");
        std::os::unix::fs::symlink("target.txt", dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("loop")).unwrap();
        let fifo = dir.path().join("pipe");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        let odd = std::ffi::OsStr::from_bytes(b"bad\xffname");
        fs::write(dir.path().join(odd), "x").unwrap();

        let entries = scan(dir.path(), ALL, &CancelToken::new()).unwrap();
        let by_name: Vec<_> = entries
            .iter()
            .map(|e| (e.path.to_vec(), e.file_type))
            .collect();
        assert_eq!(
            by_name,
            vec![
                (b"bad\xffname".to_vec(), FileType::File),
                (b"link".to_vec(), FileType::Symlink),
                (b"loop".to_vec(), FileType::Symlink),
                (b"pipe".to_vec(), FileType::Other),
                (b"target.txt".to_vec(), FileType::File),
            ]
        );
        assert!(entries.iter().all(|e| e.mtime_ms.is_some()));

        // A type-only listing sees the same types, from the directory alone.
        let listed = scan_for(
            dir.path(),
            ALL,
            Needs {
                node_modules: true,
                detail: Detail::TypeOnly,
            },
            &CancelToken::new(),
        )
        .unwrap();
        let listed_types: Vec<_> = listed
            .iter()
            .map(|e| (e.path.to_vec(), e.file_type))
            .collect();
        assert_eq!(listed_types, by_name);
        assert!(listed.iter().all(|e| e.mtime_ms.is_none()));
    }

    /// A walk that learns the mtimes of the entries a predicate accepts
    /// lists what a full scan lists, with the scan's mtimes for those
    /// entries (the predicate sees their paths and listed types) and none
    /// for the others.
    #[test]
    fn a_walk_learns_the_mtimes_of_the_wanted_entries_only() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..300 {
            touch(
                dir.path(),
                &format!("d{}/f{i:03}.{}", i % 7, ["rs", "md"][i % 2]),
            );
        }
        touch(dir.path(), "node_modules/m/x.rs");
        let token = CancelToken::new();
        let wanted = |entry: &Entry<'_>| {
            entry.file_type == FileType::File
                && entry.path.ends_with(b".rs")
                && !entry.in_node_modules
        };
        let learnt = scan_learning_mtimes(dir.path(), ALL, true, &wanted, &token).unwrap();
        let full = scan(dir.path(), ALL, &token).unwrap();
        assert_eq!(learnt.len(), full.len());
        let mut stated = 0;
        for (got, scanned) in learnt.iter().zip(full.iter()) {
            assert_eq!((got.path, got.file_type), (scanned.path, scanned.file_type));
            let expected = scanned.mtime_ms.filter(|_| wanted(&scanned));
            assert_eq!(got.mtime_ms, expected, "{}", got.path_lossy());
            stated += usize::from(got.mtime_ms.is_some());
        }
        assert_eq!(stated, 150);
    }

    /// A directory a walk cannot list is named with why, as `rg` names it,
    /// by every walk and every answer drawn from one: here a path past
    /// `PATH_MAX` (and, for a user permissions bind, a directory closed by
    /// its mode).
    #[test]
    fn what_a_walk_cannot_list_is_named_with_why() {
        use crate::{
            cache::{CachePolicy, ScanCache},
            fuzzy::{FuzzyOptions, fuzzy_find},
            glob::{GlobOptions, glob},
            grep::{GrepOptions, grep, list_files},
        };
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        touch(&root, "ok/needle.txt");
        let deep = natives_testkit::beyond_path_max(&root, "needle.txt", "needle\n");
        let mut expected = vec![(too_long_below(&root, &deep), "ENAMETOOLONG")];
        // SAFETY: `geteuid` reads the process's effective user and cannot fail.
        #[cfg(unix)]
        let closed = unsafe { libc::geteuid() } != 0;
        #[cfg(unix)]
        if !closed {
            eprintln!(
                "as root no mode closes a directory: the CLI's tests run a walk as another user"
            );
        } else {
            use std::os::unix::fs::PermissionsExt;
            touch(&root, "closed/needle.txt");
            fs::set_permissions(root.join("closed"), fs::Permissions::from_mode(0o000)).unwrap();
            expected.insert(0, ("closed".to_string(), "EACCES"));
        }
        let named = |list: &[Unreadable]| -> Vec<(String, &'static str)> {
            list.iter()
                .map(|u| (u.path_lossy().into_owned(), u.code))
                .collect()
        };
        let token = CancelToken::new();
        let scanned = scan(&root, ALL, &token).unwrap();
        assert_eq!(named(scanned.unreadable()), expected, "scan");
        let halt = std::sync::atomic::AtomicBool::new(false);
        let in_order = ordered::walk_in_order(
            &root,
            ordered::Listing::all(ALL),
            &token,
            &halt,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(named(&in_order), expected, "ordered walk");
        for cached in [false, true] {
            let cache = ScanCache::new(CachePolicy::default());
            let mut options = GlobOptions::new("**/needle.txt", &root);
            (options.cache, options.include_hidden) = (cached, true);
            let globbed = glob(&options, &cache, &token, &mut |_| {}).unwrap();
            assert_eq!(named(&globbed.unreadable), expected, "glob, cache {cached}");
            let mut options = FuzzyOptions::new("needle", &root);
            options.cache = cached;
            let found = fuzzy_find(&options, &cache, &token, &mut |_| {}).unwrap();
            assert_eq!(named(&found.unreadable), expected, "fuzzy, cache {cached}");
            let mut options = GrepOptions::new("needle", &root);
            options.cache = cached;
            let grepped = grep(&options, &cache, &token, &mut |_| {}).unwrap();
            assert_eq!(named(&grepped.unreadable), expected, "grep, cache {cached}");
            assert_eq!(grepped.files_with_matches, 1, "grep, cache {cached}");
            let listed = list_files(&options, &cache, &token, &mut |_, _| {}).unwrap();
            assert_eq!(named(&listed.unreadable), expected, "files, cache {cached}");
        }
        let message = &scanned.unreadable().last().unwrap().message;
        assert!(message.contains("(os error 36)"), "{message}");
        #[cfg(unix)]
        if closed {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(root.join("closed"), fs::Permissions::from_mode(0o700)).unwrap();
        }
    }

    /// The first directory of `deep` (relative to `root`) whose full path
    /// is too long to name.
    fn too_long_below(root: &Path, deep: &Path) -> String {
        let mut path = root.to_path_buf();
        let mut relative = PathBuf::new();
        for part in deep.components() {
            path.push(part);
            relative.push(part);
            if path.as_os_str().len() >= natives_testkit::PATH_MAX {
                break;
            }
        }
        relative.to_string_lossy().into_owned()
    }

    #[test]
    fn cancelled_token_stops_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a/b");
        let token = CancelToken::new();
        token.cancel();
        assert_eq!(
            scan(dir.path(), ALL, &token).unwrap_err().code(),
            "ABORT_ERR"
        );
    }

    #[test]
    fn missing_root_is_enoent() {
        let dir = tempfile::tempdir().unwrap();
        let err = scan(&dir.path().join("nope"), ALL, &CancelToken::new()).unwrap_err();
        assert_eq!(err.code(), "ENOENT");
    }
}
