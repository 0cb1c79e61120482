//! Which files a grep searches: the candidate list.
//!
//! For a directory the list comes from a scan (seed 001): the shared cache
//! when the caller asks for it, otherwise a private walk searched while it
//! goes (see `queue`). Only regular files
//! are candidates: FIFOs, sockets and devices are never opened (one of them
//! could block a search forever) and links are not followed, as in every
//! walk of this crate. The caller's filters then apply in this order: the
//! node_modules rule, the `glob`, the file type.
//!
//! A single file given as `path` is searched whatever the filters say, as
//! `rg` searches a file named on its command line.

use std::{
    fs,
    path::{Path, PathBuf},
    sync::{Arc, Weak, atomic::AtomicBool, mpsc},
    thread,
};

use ignore::{
    overrides::{Override, OverrideBuilder},
    types::{Types, TypesBuilder},
};

use super::{options::GrepOptions, outcome::ListSource, recent::Recent};
use crate::{
    beneath::{Beneath, search_root},
    cache::{ScanCache, ScanKey},
    cancel::{CANCEL_POLL_INTERVAL, CancelToken},
    content_index::Stamp,
    entries::{Entries, Entry, FileType, bytes_to_path, path_to_bytes},
    error::{Error, ErrorKind, Result},
    node_modules,
    unreadable::{self, Unreadable},
    walk::{Detail, Needs, ScanPolicy},
};

/// How many known type names an unknown `file_type` error suggests.
const TYPE_SUGGESTIONS: usize = 5;

/// The files to search, in path order.
pub(super) enum Candidates {
    /// Selected entries of a cached scan of `root`, what of the scan's
    /// unreadable paths the search reports, the watch that vouches for the
    /// content index's entries of its files, if any, and whether the scan
    /// was walked for this search.
    Tree {
        root: PathBuf,
        entries: Arc<Entries>,
        selected: Arc<[usize]>,
        unreadable: Vec<Unreadable>,
        stamp: Option<Stamp>,
        walked: bool,
    },
    /// The files `filter` accepts from a fresh walk of `key`, found while
    /// the search goes.
    Walk {
        key: ScanKey,
        filter: Box<FileFilter>,
    },
    /// One file the caller named: `root` is its (canonical) directory.
    File { root: PathBuf, name: Vec<u8> },
}

impl Candidates {
    /// The directory result paths are relative to.
    pub(super) fn root(&self) -> &Path {
        match self {
            Candidates::Tree { root, .. } | Candidates::File { root, .. } => root,
            Candidates::Walk { key, .. } => &key.root,
        }
    }

    /// How many candidates are known up front (none for a walk).
    pub(super) fn len(&self) -> usize {
        match self {
            Candidates::Tree { selected, .. } => selected.len(),
            Candidates::Walk { .. } => 0,
            Candidates::File { .. } => 1,
        }
    }

    /// The relative path of known candidate `index`.
    pub(super) fn path(&self, index: usize) -> Option<&[u8]> {
        match self {
            Candidates::Tree {
                entries, selected, ..
            } => selected.get(index).map(|&at| entries.get(at).path),
            Candidates::Walk { .. } => None,
            Candidates::File { name, .. } => (index == 0).then_some(name.as_slice()),
        }
    }

    /// Where the list came from (see [`ListSource`]).
    pub(super) fn source(&self) -> ListSource {
        match self {
            Candidates::Tree { stamp: Some(_), .. } => ListSource::Watched,
            Candidates::Tree { walked: false, .. } => ListSource::Cached,
            _ => ListSource::Walked,
        }
    }

    /// `true` for a file the caller named (binary files are searched whole).
    pub(super) fn is_explicit(&self) -> bool {
        matches!(self, Candidates::File { .. })
    }

    /// What the scan behind a known list could not enter or read (a walk's
    /// is known once it has run).
    pub(super) fn unreadable(&self) -> &[Unreadable] {
        match self {
            Candidates::Tree { unreadable, .. } => unreadable,
            Candidates::Walk { .. } | Candidates::File { .. } => &[],
        }
    }

    /// Pass every candidate's relative path to `on_file`, in path order, on
    /// the calling thread; a walk runs on a thread of its own meanwhile and
    /// hands its files over a run at a time. Returns what the scan could not
    /// enter or read.
    pub(super) fn each(
        &self,
        cache: &ScanCache,
        token: &CancelToken,
        on_file: &mut dyn FnMut(&[u8]),
    ) -> Result<Vec<Unreadable>> {
        let Candidates::Walk { key, filter } = self else {
            (0..self.len())
                .filter_map(|index| self.path(index))
                .for_each(on_file);
            return Ok(self.unreadable().to_vec());
        };
        let (sender, receiver) = mpsc::channel::<Vec<Vec<u8>>>();
        thread::scope(|scope| {
            let walk = scope.spawn(move || {
                let mut on_run = |run: &mut dyn Iterator<Item = Entry<'_>>| {
                    let files = run.filter(|entry| filter.accepts(entry));
                    let _ = sender.send(files.map(|entry| entry.path.to_vec()).collect());
                };
                cache.walk_in_order(
                    key,
                    filter.needs().node_modules,
                    filter.overrides(),
                    token,
                    &AtomicBool::new(false),
                    &mut on_run,
                )
            });
            for path in receiver.into_iter().flatten() {
                on_file(&path);
            }
            walk.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                .map(|unreadable| filter.reports(unreadable))
        })
    }
}

/// Resolve `options.path` and list the files to search.
pub(super) fn candidates(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
) -> Result<Candidates> {
    candidates_for(options, cache, token, false)
}

/// [`candidates`] to be listed, not opened: a confined listing checks each
/// beneath the root (see [`FileFilter`]).
pub(super) fn listed(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
) -> Result<Candidates> {
    candidates_for(options, cache, token, true)
}

fn candidates_for(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
    lists: bool,
) -> Result<Candidates> {
    token.check()?;
    let mut filter = FileFilter::new(options)?;
    filter.lists = lists;
    if let Some(file) = single_file(&options.path, options.confine)? {
        return Ok(file);
    }
    let (root, beneath) = search_root(&options.path, options.confine)?;
    filter.beneath = beneath;
    let key = ScanKey {
        root,
        policy: ScanPolicy {
            include_hidden: options.include_hidden,
            use_gitignore: options.use_gitignore,
        },
    };
    // Seed 001: grep's cached scans always honour gitignore, so a call that
    // turns gitignore off walks privately and leaves the cache alone. A
    // scan the cache refused as too large is walked and searched as it
    // goes rather than listed whole; one that may only be used when
    // watched, too, when watching is off; and with a `glob` that selects
    // files, a cache that keeps no scan (see `from_cache` for one that does).
    let unwatched = options.watched_only && cache.watching().is_none();
    let private = !(options.cache && options.use_gitignore)
        || unwatched
        || (filter.selects() && !cache.stores());
    if private || cache.refuses(&key) {
        return filter.walk(key, &options.globs);
    }
    from_cache(options, filter, key, cache, token)
}

/// The candidates from the cached scan of `key`, rechecking an empty list
/// as seed 001 says. As with `rg -g`, a file a selecting `glob` selects is
/// searched even where an ignore file or the hidden rule leaves it out,
/// and a directory it selects is entered: a scan that left such an entry
/// out cannot answer, and the search walks instead (see
/// [`FileFilter::walk_brings_back`]).
fn from_cache(
    options: &GrepOptions,
    filter: FileFilter,
    key: ScanKey,
    cache: &ScanCache,
    token: &CancelToken,
) -> Result<Candidates> {
    let mut scan = cache.get_or_scan(&key, filter.needs(), token)?;
    let mut walked = scan.cache_age_ms == 0;
    if filter.walk_brings_back(options, cache, (&key, &scan.entries), token)? {
        return filter.walk(key, &options.globs);
    }
    let mut selected = filter.selected(options, &scan.entries, token)?;
    if selected.is_empty() && cache.rechecks_empty(&scan) {
        scan = cache.force_rescan(&key, token)?;
        if filter.walk_brings_back(options, cache, (&key, &scan.entries), token)? {
            return filter.walk(key, &options.globs);
        }
        selected = filter.selected(options, &scan.entries, token)?;
        walked = true;
    }
    let stamp = cache.vouching_watch(&key);
    if options.watched_only && stamp.is_none() && !walked {
        return filter.walk(key, &options.globs);
    }
    Ok(Candidates::Tree {
        root: key.root,
        unreadable: filter.reports(scan.entries.unreadable().to_vec()),
        entries: scan.entries,
        selected,
        stamp,
        walked,
    })
}

/// Whether a search `path` names one file (links followed) rather than a
/// directory to search: how grep reads its `path`, for fronts that print a
/// named file's results under the name the caller typed. A FIFO, socket or
/// device is `NotARegularFile` (`EFTYPE`); a missing path, `ENOENT`.
pub fn path_names_a_file(path: &Path) -> Result<bool> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid("search path is empty").with_option("path", ""));
    }
    let metadata = fs::metadata(path).map_err(|err| Error::io(path, err))?;
    if metadata.is_dir() {
        return Ok(false);
    }
    if !metadata.is_file() {
        return Err(Error::new(
            ErrorKind::NotARegularFile,
            format!(
                "{}: not a regular file or directory (FIFOs, sockets and devices are not searched)",
                path.display()
            ),
        ));
    }
    Ok(true)
}

/// `Some` when `path` names a file (see [`path_names_a_file`]): it becomes
/// the only candidate. A `confined` search takes no link to it.
fn single_file(path: &Path, confined: bool) -> Result<Option<Candidates>> {
    if !path_names_a_file(path)? {
        return Ok(None);
    }
    if confined && fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::new(
            ErrorKind::OutsideRoot,
            format!(
                "{}: a symbolic link; a confined search follows no link",
                path.display()
            ),
        ));
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Error::invalid(format!("{}: no file name", path.display())));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    Ok(Some(Candidates::File {
        root: search_root(parent, confined)?.0,
        name: path_to_bytes(Path::new(name)).into_owned(),
    }))
}

/// The caller's per-file filters.
pub(super) struct FileFilter {
    include_node_modules: bool,
    /// The `globs`, matching paths relative to the search root.
    glob: Option<Override>,
    /// The same, anchored at the root a walk names paths from.
    walk_glob: Option<Override>,
    types: Option<Types>,
    /// A confined search's root: what its walk could not read is vouched
    /// for beneath it, and (in a listing) each candidate too (see
    /// `crate::beneath`).
    beneath: Option<Beneath>,
    /// The candidates are listed, not opened: a confined listing checks
    /// each beneath the root, where a search's open is the check.
    lists: bool,
}

impl FileFilter {
    fn new(options: &GrepOptions) -> Result<FileFilter> {
        let hint = options.globs.join("\n");
        Ok(FileFilter {
            include_node_modules: node_modules::include_node_modules(
                options.include_node_modules,
                &hint,
            ),
            glob: kept_globs(&options.globs)?,
            walk_glob: None,
            types: kept_types(&options.file_types, &options.file_types_not)?,
            beneath: None,
            lists: false,
        })
    }

    /// What a walk for this filter must collect: files' types (grep shows
    /// no mtime), inside `node_modules` only when they are searched.
    pub(super) fn needs(&self) -> Needs {
        Needs {
            node_modules: self.include_node_modules,
            detail: Detail::TypeOnly,
        }
    }

    /// Indices of the accepted entries of a cached list, in path order:
    /// the selection kept from an earlier search of the same list with the
    /// same filters, or made now (and kept; see [`SELECTIONS`]). A confined
    /// listing checks its files on disk, so its selection is never kept.
    fn selected(
        &self,
        options: &GrepOptions,
        entries: &Arc<Entries>,
        token: &CancelToken,
    ) -> Result<Arc<[usize]>> {
        if self.lists && self.beneath.is_some() {
            return Ok(self.select(entries, token)?.into());
        }
        let key = self.selection_key(options, entries);
        SELECTIONS.get_or_try(key, || Ok(self.select(entries, token)?.into()))
    }

    /// Indices of the accepted entries, in path order.
    fn select(&self, entries: &Entries, token: &CancelToken) -> Result<Vec<usize>> {
        #[cfg(test)]
        SELECTIONS_MADE.with(|made| made.set(made.get() + 1));
        let mut selected = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            if index % CANCEL_POLL_INTERVAL == 0 {
                token.check()?;
            }
            if self.accepts(&entry) {
                selected.push(index);
            }
        }
        Ok(selected)
    }

    /// Whether the `globs` select files (has a pattern that is not a `!`
    /// exclusion): only then can it bring back a file the walk's rules
    /// leave out.
    fn selects(&self) -> bool {
        self.glob
            .as_ref()
            .is_some_and(|glob| glob.num_whitelists() > 0)
    }

    /// The `globs` as a walk applies them (see [`crate::walk::ordered::Listing`]).
    pub(super) fn overrides(&self) -> Option<&Override> {
        self.walk_glob.as_ref()
    }

    /// The files this filter accepts from a fresh walk of `key`, with the
    /// `glob` (the filter's, as the caller wrote it) applied as the walk goes.
    fn walk(mut self, key: ScanKey, globs: &[String]) -> Result<Candidates> {
        self.walk_glob = build_globs(globs, &key.root)?;
        Ok(Candidates::Walk {
            key,
            filter: Box::new(self),
        })
    }

    /// Whether a walk of `key` with this filter's `glob` brings back an
    /// entry the rules of its scan `entries` left out (see
    /// [`Entries::skipped`]): only a `glob` that selects files does, when it
    /// selects such an entry and the search would take it (see
    /// [`FileFilter::takes_back`]). The record of what the rules left out is
    /// listed the first time it is needed.
    fn walk_brings_back(
        &self,
        options: &GrepOptions,
        cache: &ScanCache,
        (key, entries): (&ScanKey, &Arc<Entries>),
        token: &CancelToken,
    ) -> Result<bool> {
        if !self.selects() {
            return Ok(false);
        }
        BRINGS_BACK.get_or_try(self.selection_key(options, entries), || {
            #[cfg(test)]
            SKIPPED_CHECKED.with(|checked| checked.set(checked.get() + 1));
            let skipped = cache.skipped(key, entries, token)?;
            Ok(skipped.iter().any(|entry| self.takes_back(&entry)))
        })
    }

    /// What a selection of `entries` by these filters is kept by.
    fn selection_key(&self, options: &GrepOptions, entries: &Arc<Entries>) -> SelectionKey {
        SelectionKey {
            entries: Arc::downgrade(entries),
            globs: options.globs.clone(),
            file_types: options.file_types.clone(),
            file_types_not: options.file_types_not.clone(),
            include_node_modules: self.include_node_modules,
        }
    }

    /// Whether a walk with the selecting `glob` takes `entry`, which the
    /// scan's rules left out: the `glob` selects it (a walk applies it
    /// first, as `rg`'s does), and it is a directory the walk enters
    /// (outside `node_modules` unless those are searched) or a file the
    /// search takes.
    fn takes_back(&self, entry: &Entry<'_>) -> bool {
        let Some(glob) = &self.glob else {
            return false;
        };
        let is_dir = entry.file_type == FileType::Dir;
        let selected = glob
            .matched(bytes_to_path(entry.path), is_dir)
            .is_whitelist();
        match is_dir {
            true => selected && (self.include_node_modules || !entry.in_node_modules),
            false => selected && self.accepts(entry),
        }
    }

    /// What of a walk's `unreadable` records this search reports (see
    /// [`unreadable::reported`]).
    pub(super) fn reports(&self, unreadable: Vec<Unreadable>) -> Vec<Unreadable> {
        let reported = match self.include_node_modules {
            true => unreadable,
            false => unreadable::reported(&unreadable, false),
        };
        match &self.beneath {
            Some(beneath) => beneath.vouch(reported),
            None => reported,
        }
    }

    pub(super) fn accepts(&self, entry: &Entry<'_>) -> bool {
        if entry.file_type != FileType::File
            || (entry.in_node_modules && !self.include_node_modules)
        {
            return false;
        }
        let path = bytes_to_path(entry.path);
        self.glob.as_ref().is_none_or(|g| glob_accepts(g, &path))
            && self.types.as_ref().is_none_or(|t| types_accept(t, &path))
            && (!self.lists || self.beneath.as_ref().is_none_or(|b| b.keeps(entry.path)))
    }
}

/// Selections of cached lists kept for the next search with the same
/// filters: an agent repeats `-g '*.rs'` over one list many times, and
/// matching the globs against every entry of a large tree costs more than
/// a limited search of the files it selects. A cached list never changes
/// (a change makes a new one), so a selection is current as long as its
/// list is the one searched. At most this many are kept, each up to 8
/// bytes per selected file.
static SELECTIONS: Recent<SelectionKey, Arc<[usize]>> = Recent::new(4);

/// Whether a walk would bring back entries a cached list left out, for the
/// same list and filters (see `FileFilter::walk_brings_back`): matching a
/// selecting glob against every entry the scan's rules left out took as
/// long as a limited search itself. Kept as [`SELECTIONS`] are.
static BRINGS_BACK: Recent<SelectionKey, bool> = Recent::new(4);

#[cfg(test)]
std::thread_local! {
    /// Selections made (not taken from [`SELECTIONS`]) on this thread.
    pub(super) static SELECTIONS_MADE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Checks of the entries a list left out (not taken from
    /// [`BRINGS_BACK`]) on this thread.
    pub(super) static SKIPPED_CHECKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What a kept selection was made from: the list (held weakly, so its
/// address cannot be reused by another list while the selection is kept)
/// and the filters.
struct SelectionKey {
    entries: Weak<Entries>,
    globs: Vec<String>,
    file_types: Vec<String>,
    file_types_not: Vec<String>,
    include_node_modules: bool,
}

impl PartialEq for SelectionKey {
    fn eq(&self, other: &SelectionKey) -> bool {
        Weak::ptr_eq(&self.entries, &other.entries)
            && self.globs == other.globs
            && self.file_types == other.file_types
            && self.file_types_not == other.file_types_not
            && self.include_node_modules == other.include_node_modules
    }
}

/// `rg -g` semantics, from the `ignore` crate's override globs, all of
/// `globs` in one set as rg builds it from repeated `-g` (`None` when there
/// are none): a glob without `/` matches the file name at any depth, one
/// with `/` is anchored at the root, `!glob` excludes, the last glob that
/// matches a path deciding. An excluded directory excludes everything
/// below it, as when a walker prunes it; and a file a glob selects is
/// searched even where an ignore file or the hidden rule would skip it (the
/// walk applies the globs first, as `rg`'s does), though not inside a
/// directory those rules skip.
/// Globs and types built for recent searches, kept for the next with the
/// same lists: an agent repeats its filters, and building them (a regex per
/// glob, ripgrep's hundreds of type definitions) took about a tenth of a
/// limited cached search. The most recently used this many of each.
const FILTERS_KEPT: usize = 16;

static GLOBS: Recent<Vec<String>, Option<Override>> = Recent::new(FILTERS_KEPT);
static TYPES: Recent<(Vec<String>, Vec<String>), Option<Types>> = Recent::new(FILTERS_KEPT);

#[cfg(test)]
std::thread_local! {
    /// Glob sets and type sets built (not taken from the kept ones) on
    /// this thread.
    pub(super) static FILTERS_BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// [`build_globs`] relative to the list's root, kept (see [`FILTERS_KEPT`]).
fn kept_globs(globs: &[String]) -> Result<Option<Override>> {
    GLOBS.get_or_try(globs.to_vec(), || {
        #[cfg(test)]
        FILTERS_BUILT.set(FILTERS_BUILT.get() + 1);
        build_globs(globs, Path::new(""))
    })
}

/// [`build_types`], kept (see [`FILTERS_KEPT`]).
fn kept_types(selected: &[String], negated: &[String]) -> Result<Option<Types>> {
    TYPES.get_or_try((selected.to_vec(), negated.to_vec()), || {
        #[cfg(test)]
        FILTERS_BUILT.set(FILTERS_BUILT.get() + 1);
        build_types(selected, negated)
    })
}

fn build_globs(globs: &[String], root: &Path) -> Result<Option<Override>> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut builder = OverrideBuilder::new(root);
    for glob in globs {
        builder.add(glob).map_err(|err| {
            Error::invalid(format!("invalid glob `{glob}`: {err}")).with_option("glob", glob)
        })?;
    }
    let built = builder.build().map_err(|err| {
        let joined = globs.join("`, `");
        Error::invalid(format!("invalid globs `{joined}`: {err}")).with_option("glob", joined)
    })?;
    Ok(Some(built))
}

/// Whether `types` keep the file at `path`, as rg's walk decides: a file
/// of a negated type is left out; with selected types, so is a file of none
/// of them (the matcher answers `Ignore` for both).
fn types_accept(types: &Types, path: &Path) -> bool {
    !types.matched(path, false).is_ignore()
}

fn glob_accepts(glob: &Override, path: &Path) -> bool {
    if glob.matched(path, false).is_ignore() {
        return false;
    }
    glob.num_ignores() == 0
        || !path
            .ancestors()
            .skip(1)
            .take_while(|dir| !dir.as_os_str().is_empty())
            .any(|dir| glob.matched(dir, true).is_ignore())
}

/// The `ignore` crate's built-in types: files of any type in `selected`
/// (`all` selects every type), none of `negated` (`rg -t`, `rg -T`);
/// `None` when both are empty. An unknown name is `EINVAL` listing the
/// closest known names.
pub(super) fn build_types(selected: &[String], negated: &[String]) -> Result<Option<Types>> {
    if selected.is_empty() && negated.is_empty() {
        return Ok(None);
    }
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let known: Vec<String> = builder
        .definitions()
        .into_iter()
        .map(|def| def.name().to_string())
        .collect();
    let named = selected.iter().map(|name| ("type", name));
    for (option, name) in named.chain(negated.iter().map(|name| ("typeNot", name))) {
        if name != "all" && !known.iter().any(|k| k == name) {
            return Err(Error::invalid(format!(
                "unknown file type `{name}`; closest known types: {}",
                closest(name, &known).join(", ")
            ))
            .with_option(option, name));
        }
    }
    for name in selected {
        builder.select(name);
    }
    for name in negated {
        builder.negate(name);
    }
    let built = builder
        .build()
        .map_err(|err| Error::invalid(format!("file types: {err}")))?;
    Ok(Some(built))
}

/// The known names nearest to `name`: prefixes either way first, then by
/// edit distance, ties alphabetically.
fn closest<'a>(name: &str, known: &'a [String]) -> Vec<&'a str> {
    let mut ranked: Vec<(bool, usize, &str)> = known
        .iter()
        .map(|k| {
            let related = k.starts_with(name) || name.starts_with(k.as_str());
            (!related, edit_distance(name, k), k.as_str())
        })
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(TYPE_SUGGESTIONS)
        .map(|(_, _, k)| k)
        .collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search's globs and types are built once for its lists and taken
    /// as built by the next search with the same lists; a bad one is
    /// refused every time, never kept.
    #[test]
    fn globs_and_types_are_built_once_per_list() {
        let built = |globs: &[&str], types: &[&str]| {
            let mut options = GrepOptions::new("x", "/r");
            options.globs = globs.iter().map(|g| g.to_string()).collect();
            options.file_types = types.iter().map(|t| t.to_string()).collect();
            let before = FILTERS_BUILT.get();
            let filter = FileFilter::new(&options).map(|_| ());
            (filter.is_ok(), FILTERS_BUILT.get() - before)
        };
        let globs = ["!.*/", "*.kept-test"];
        assert_eq!(built(&globs, &["rust", "ts"]), (true, 2));
        assert_eq!(built(&globs, &["rust", "ts"]), (true, 0), "both kept");
        assert_eq!(built(&globs, &["rust"]), (true, 1), "other types");
        assert_eq!(built(&["a[", "*.kept-test"], &[]), (false, 1));
        assert_eq!(
            built(&["a[", "*.kept-test"], &[]),
            (false, 1),
            "an error is not kept"
        );
    }

    #[test]
    fn a_bad_glob_names_the_glob_option() {
        let globs = ["*.rs".to_string(), "a[".to_string()];
        let err = build_globs(&globs, Path::new("/r")).unwrap_err();
        assert_eq!(err.code(), "EINVAL");
        assert_eq!((err.option(), err.value()), (Some("glob"), Some("a[")));
    }

    #[test]
    fn unknown_type_lists_close_names() {
        let table: &[(&str, &[&str])] = &[
            ("rusty", &["rust"]),
            ("pyhton", &["python"]),
            ("tsx", &["ts"]),
            ("jss", &["js"]),
        ];
        for &(name, expected) in table {
            let err = build_types(&[name.to_string()], &[]).unwrap_err();
            assert_eq!(err.code(), "EINVAL", "{name}");
            for want in expected {
                assert!(
                    err.message().contains(&format!(" {want}")),
                    "{name}: {}",
                    err.message()
                );
            }
            assert!(err.message().contains(&format!("`{name}`")));
            assert_eq!((err.option(), err.value()), (Some("type"), Some(name)));
            let err = build_types(&[], &[name.to_string()]).unwrap_err();
            assert_eq!((err.option(), err.value()), (Some("typeNot"), Some(name)));
        }
        for known in ["rust", "ts", "js", "py", "md", "all"] {
            assert!(build_types(&[known.to_string()], &[]).is_ok(), "{known}");
            assert!(build_types(&[], &[known.to_string()]).is_ok(), "{known}");
        }
    }

    #[test]
    fn edit_distance_table() {
        let table = [
            ("", "", 0),
            ("a", "", 1),
            ("kitten", "sitting", 3),
            ("rust", "rusty", 1),
        ];
        for (a, b, d) in table {
            assert_eq!(edit_distance(a, b), d, "{a} {b}");
        }
    }

    /// What a walk with a `glob` takes back of what a scan's rules left
    /// out: what the glob selects and the search would take.
    #[test]
    fn what_a_selecting_glob_takes_back_table() {
        use FileType::{Dir, File, Symlink};
        // (glob, file type, node_modules, left out, its type, taken back)
        type Row<'a> = (
            &'a str,
            Option<&'a str>,
            Option<bool>,
            &'a str,
            FileType,
            bool,
        );
        let table: &[Row<'_>] = &[
            ("*.log", None, None, "debug.log", File, true),
            ("*.log", None, None, "logs/deep/debug.log", File, true),
            ("*.rs", None, None, "debug.log", File, false),
            (".env", None, None, ".env", File, true),
            ("*.log", None, None, "build", Dir, false),
            ("*", None, None, "build", Dir, true),
            ("build", None, None, "build", Dir, true),
            ("src/**", None, None, "src/.cache", Dir, true),
            ("*", None, None, "node_modules", Dir, false),
            ("*", None, Some(true), "node_modules", Dir, true),
            ("*", None, None, "pkg/node_modules/m/.bin", Dir, false),
            ("*.log", Some("rust"), None, "debug.log", File, false),
            ("*.rs", Some("rust"), None, "gen.rs", File, true),
            ("*.log", None, None, "link.log", Symlink, false),
            ("!*.log", None, None, "debug.log", File, false),
        ];
        for &(glob, file_type, node_modules, path, kind, expected) in table {
            let mut options = GrepOptions::new("x", ".");
            options.globs = vec![glob.into()];
            options.file_types = file_type.map(String::from).into_iter().collect();
            options.include_node_modules = node_modules;
            let filter = FileFilter::new(&options).unwrap();
            let entry = Entry::walked(path.as_bytes(), kind);
            assert_eq!(filter.takes_back(&entry), expected, "{glob} {path}");
        }
    }

    #[test]
    fn glob_table() {
        // (glob, path, accepted)
        let table: &[(&str, &str, bool)] = &[
            ("*.rs", "main.rs", true),
            ("*.rs", "src/deep/lib.rs", true),
            ("*.rs", "src/lib.ts", false),
            ("src/*.rs", "src/lib.rs", true),
            ("src/*.rs", "other/src/lib.rs", false),
            ("src/**", "src/a/b.txt", true),
            ("!*.md", "docs/guide.md", false),
            ("!*.md", "docs/guide.txt", true),
            ("!vendor", "vendor/lib/a.rs", false),
            ("!vendor", "src/vendor.rs", true),
            ("*.{ts,tsx}", "web/app.tsx", true),
        ];
        for &(glob, path, expected) in table {
            let built = build_globs(&[glob.to_string()], Path::new(""))
                .unwrap()
                .unwrap();
            assert_eq!(
                glob_accepts(&built, Path::new(path)),
                expected,
                "{glob} {path}"
            );
        }
        assert_eq!(
            build_globs(&["a[".into()], Path::new(""))
                .unwrap_err()
                .code(),
            "EINVAL"
        );
    }
}
