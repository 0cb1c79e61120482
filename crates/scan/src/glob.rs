//! `glob`: filter a scan by a glob pattern, type and the node_modules rule,
//! with a bounded top-N.
//!
//! Pattern rules (what coding agents write, taken as they mean it):
//! `\` is read as `/`; a leading `./` is dropped; an unclosed `{` is closed
//! (`*.{ts,js`); with `recursive` (the default) a pattern without `/` matches
//! at any depth (`*.ts` means `**/*.ts`); `*` never crosses `/`
//! (`literal_separator`); matching is case-sensitive.
//!
//! Performance contract: one pass over the (usually cached) entry list, no
//! allocation per entry, memory O(`max_results`) for the returned set even
//! with `sort_by_mtime`, and [`CancelToken`] polled every
//! [`CANCEL_POLL_INTERVAL`] entries.

use std::{
    cmp::Reverse,
    path::{Path, PathBuf},
    sync::Arc,
};

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::{
    beneath::{Beneath, search_root},
    cache::{ScanCache, ScanKey, ScanResult},
    cancel::{CANCEL_POLL_INTERVAL, CancelToken},
    entries::{Entries, Entry, FileType, bytes_to_path, path_tail},
    error::{Error, Result},
    node_modules,
    top_n::TopN,
    unreadable::{self, Unreadable},
    walk::{self, Detail, Needs, ScanPolicy},
};

/// What to match and how. Field docs give the defaults of [`GlobOptions::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobOptions {
    /// The glob pattern, relative to `path`.
    pub pattern: String,
    /// The directory to search (relative to the current directory).
    pub path: PathBuf,
    /// Only entries of this type. Default: any type.
    pub file_type: Option<FileType>,
    /// Match a `/`-free pattern at any depth. Default: `true`.
    pub recursive: bool,
    /// Include dot-files and dot-directories. Default: `false`.
    pub include_hidden: bool,
    /// Honour `.gitignore`/`.ignore` files. Default: `true`.
    pub use_gitignore: bool,
    /// Include `node_modules`; `None` applies [`node_modules::include_node_modules`]
    /// to the pattern. Default: `None`.
    pub include_node_modules: Option<bool>,
    /// Return at most this many matches. Default: no limit.
    pub max_results: Option<usize>,
    /// Newest first (ties in path order) instead of path order. Default: `false`.
    pub sort_by_mtime: bool,
    /// Return each match's mtime. Without it matches carry none, and a walk
    /// that is not cached stats nothing (unless it sorts by mtime): its types
    /// come from the directory listings. Default: `true`.
    pub mtime: bool,
    /// Use the shared scan cache. Default: `false` (walk fresh, touch nothing).
    pub cache: bool,
    /// Stay beneath `path`, which is taken as a real path (no symlink on
    /// the way; `OutsideRoot` otherwise): a match is returned only when it
    /// is reached from a handle on it without following a link when the
    /// glob checks it, so a directory inside swapped for a link to outside
    /// while the walk runs lists nothing from there; the link is named as
    /// unreadable (`ELOOP`) instead. See `beneath`. Default: `false`.
    pub confine: bool,
}

impl GlobOptions {
    /// Options for `pattern` under `path`, every other field at its default.
    pub fn new(pattern: impl Into<String>, path: impl Into<PathBuf>) -> GlobOptions {
        GlobOptions {
            pattern: pattern.into(),
            path: path.into(),
            file_type: None,
            recursive: true,
            include_hidden: false,
            use_gitignore: true,
            include_node_modules: None,
            max_results: None,
            sort_by_mtime: false,
            mtime: true,
            cache: false,
            confine: false,
        }
    }
}

/// The answer: the selected entries of a shared scan list, in result order.
#[derive(Clone, Debug)]
pub struct GlobOutcome {
    /// The canonical root the paths are relative to.
    pub root: PathBuf,
    entries: Arc<Entries>,
    selected: Vec<usize>,
    /// Whether matches carry their mtime ([`GlobOptions::mtime`]).
    mtime: bool,
    /// Matches before `max_results` was applied.
    pub total_matches: usize,
    /// What the walk could not enter or read, in path order (see
    /// [`Entries::unreadable`]); none inside a `node_modules` the glob
    /// leaves out.
    pub unreadable: Vec<Unreadable>,
}

impl GlobOutcome {
    /// The returned matches, in result order.
    pub fn matches(&self) -> impl ExactSizeIterator<Item = Entry<'_>> + '_ {
        let mtime = self.mtime;
        self.selected
            .iter()
            .map(move |&i| shown(self.entries.get(i), mtime))
    }

    /// `true` when `max_results` cut matches off.
    pub fn limit_reached(&self) -> bool {
        self.total_matches > self.selected.len()
    }
}

/// Run a glob. `on_match` sees each returned match once, in result order, as
/// soon as it is final: during the pass in path order, after it when sorting
/// by mtime (only then is the newest set known).
pub fn glob(
    options: &GlobOptions,
    cache: &ScanCache,
    token: &CancelToken,
    on_match: &mut dyn FnMut(Entry<'_>),
) -> Result<GlobOutcome> {
    token.check()?;
    let (root, beneath) = search_root(&options.path, options.confine)?;
    let mut filter = Filter::new(options)?;
    filter.beneath = beneath;
    let key = ScanKey {
        root,
        policy: ScanPolicy {
            include_hidden: options.include_hidden,
            use_gitignore: options.use_gitignore,
        },
    };
    let needs = filter.needs();
    let mut scan = if options.cache {
        cache.get_or_scan(&key, needs, token)?
    } else if filter.shows_every_mtime() {
        let wanted = |entry: &Entry<'_>| filter.accepts(entry);
        cache.walk_fresh_learning_mtimes(&key, needs.node_modules, &wanted, token)?
    } else {
        cache.walk_fresh(&key, needs, token)?
    };
    if let Some(entries) = Arc::get_mut(&mut scan.entries) {
        filter.stat_returned(&key.root, entries, token)?;
    }
    let mut outcome = select(key.root.clone(), scan.clone(), &filter, token, on_match)?;
    if outcome.total_matches == 0 && options.cache && cache.rechecks_empty(&scan) {
        let fresh = cache.force_rescan(&key, token)?;
        outcome = select(key.root, fresh, &filter, token, on_match)?;
    }
    Ok(outcome)
}

/// Compile a normalized pattern; errors name the pattern as the caller wrote it.
fn build_globset(pattern: &str, normalized: &str) -> Result<GlobSet> {
    let invalid = |detail: String| {
        Error::invalid(format!("invalid glob pattern `{pattern}`: {detail}"))
            .with_option("pattern", pattern)
    };
    let glob = GlobBuilder::new(normalized)
        .literal_separator(true)
        .case_insensitive(false)
        .empty_alternates(true)
        .build()
        .map_err(|err| invalid(err.kind().to_string()))?;
    GlobSetBuilder::new()
        .add(glob)
        .build()
        .map_err(|err| invalid(err.to_string()))
}

/// A compiled pattern.
///
/// Most agent globs only constrain the end of the path (`**/*.ts`,
/// `**/*.{ts,tsx}`, `**/*`). For those a suffix comparison gives globset's
/// answer without building a `Candidate` per entry, which on a cached list
/// costs more than the match itself; everything else goes to globset.
enum Matcher {
    /// `**/*S` for each suffix `S` (no metacharacters, no `/`).
    Suffixes(Vec<Suffix>),
    Glob(GlobSet),
}

/// A literal path suffix; up to eight bytes it is compared against the
/// entry's precomputed tail, without reading the path.
struct Suffix {
    bytes: Vec<u8>,
    tail: u64,
    mask: u64,
}

impl Suffix {
    fn new(bytes: Vec<u8>) -> Suffix {
        let mask = match bytes.len() {
            0 => 0,
            n @ 1..8 => (1u64 << (8 * n)) - 1,
            _ => u64::MAX,
        };
        Suffix {
            tail: path_tail(&bytes) & mask,
            mask,
            bytes,
        }
    }

    fn ends(&self, entry: &Entry<'_>) -> bool {
        if self.bytes.len() <= 8 {
            entry.tail & self.mask == self.tail
        } else {
            ends_with(entry.path, &self.bytes)
        }
    }
}

impl Matcher {
    fn new(pattern: &str, recursive: bool) -> Result<Matcher> {
        let normalized = normalize_pattern(pattern, recursive)?;
        // Validate with globset even when the fast path applies, so both
        // paths accept and reject exactly the same patterns.
        let glob = build_globset(pattern, &normalized)?;
        Ok(match any_depth_suffixes(&normalized) {
            Some(suffixes) => Matcher::Suffixes(suffixes.into_iter().map(Suffix::new).collect()),
            None => Matcher::Glob(glob),
        })
    }

    fn is_match(&self, entry: &Entry<'_>) -> bool {
        match self {
            Matcher::Suffixes(suffixes) => suffixes.iter().any(|s| s.ends(entry)),
            Matcher::Glob(glob) => {
                glob.is_match_candidate(&Candidate::new(&bytes_to_path(entry.path)))
            }
        }
    }
}

/// `path.ends_with(suffix)` as an inlined byte loop: suffixes are a few
/// bytes long, shorter than the cost of a `memcmp` call.
fn ends_with(path: &[u8], suffix: &[u8]) -> bool {
    path.len() >= suffix.len()
        && path
            .iter()
            .rev()
            .zip(suffix.iter().rev())
            .all(|(a, b)| a == b)
}

/// The suffixes of a `**/*S` or `**/*{S1,S2,...}`-style pattern (with an
/// optional literal prefix before the braces), or `None` for any other shape.
fn any_depth_suffixes(normalized: &str) -> Option<Vec<Vec<u8>>> {
    let rest = normalized.strip_prefix("**/*")?;
    let is_literal = |s: &str| !s.contains(['*', '?', '[', ']', '{', '}', '\\', '/', ',']);
    let Some(open) = rest.find('{') else {
        return is_literal(rest).then(|| vec![rest.as_bytes().to_vec()]);
    };
    let (head, alternatives) = (&rest[..open], rest[open + 1..].strip_suffix('}')?);
    if !is_literal(head) {
        return None;
    }
    alternatives
        .split(',')
        .map(|alt| is_literal(alt).then(|| format!("{head}{alt}").into_bytes()))
        .collect()
}

fn normalize_pattern(pattern: &str, recursive: bool) -> Result<String> {
    if pattern.trim().is_empty() {
        return Err(Error::invalid("glob pattern is empty").with_option("pattern", pattern));
    }
    let mut text = pattern.replace('\\', "/");
    while let Some(rest) = text.strip_prefix("./") {
        text = rest.to_string();
    }
    let unclosed = unclosed_braces(&text);
    text.extend(std::iter::repeat_n('}', unclosed));
    if recursive && !text.contains('/') {
        text.insert_str(0, "**/");
    }
    Ok(text)
}

/// `{` left open at the end of `pattern`, outside `[...]` classes.
fn unclosed_braces(pattern: &str) -> usize {
    let mut depth = 0usize;
    let mut in_class = false;
    for c in pattern.chars() {
        match c {
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' if !in_class => depth += 1,
            '}' if !in_class => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// Everything that decides whether one entry matches.
struct Filter {
    matcher: Matcher,
    file_type: Option<FileType>,
    include_node_modules: bool,
    limit: usize,
    sort_by_mtime: bool,
    mtime: bool,
    /// A confined glob's root: only matches reached beneath it are returned.
    beneath: Option<Beneath>,
}

impl Filter {
    fn new(options: &GlobOptions) -> Result<Filter> {
        Ok(Filter {
            matcher: Matcher::new(&options.pattern, options.recursive)?,
            file_type: options.file_type,
            include_node_modules: node_modules::include_node_modules(
                options.include_node_modules,
                &options.pattern,
            ),
            limit: options.max_results.unwrap_or(usize::MAX),
            sort_by_mtime: options.sort_by_mtime,
            mtime: options.mtime,
            beneath: None,
        })
    }

    /// What a walk for this filter must collect: types only (the mtimes
    /// shown are learnt for the matches alone, see [`Filter::stat_returned`]),
    /// inside `node_modules` only when it is returned.
    fn needs(&self) -> Needs {
        Needs {
            node_modules: self.include_node_modules,
            detail: Detail::TypeOnly,
        }
    }

    /// Whether every match's mtime is shown or sorted by: a walk for this
    /// filter then learns them as it goes.
    fn shows_every_mtime(&self) -> bool {
        self.sort_by_mtime || (self.mtime && self.limit == usize::MAX)
    }

    /// Learn the mtimes this query shows or sorts by, in a list that is
    /// this call's alone (a walk that was not stored): every match's when
    /// sorting by mtime, else the first `limit` matches' if they show it.
    fn stat_returned(&self, root: &Path, entries: &mut Entries, token: &CancelToken) -> Result<()> {
        if !self.mtime && !self.sort_by_mtime {
            return Ok(());
        }
        let mut wanted = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            if index % CANCEL_POLL_INTERVAL == 0 {
                token.check()?;
            }
            if !self.sort_by_mtime && wanted.len() == self.limit {
                break;
            }
            if self.accepts(&entry) {
                wanted.push(index);
            }
        }
        walk::stat_mtimes(root, entries, &wanted);
        Ok(())
    }

    fn accepts(&self, entry: &Entry<'_>) -> bool {
        self.file_type.is_none_or(|t| t == entry.file_type)
            && (self.include_node_modules || !entry.in_node_modules)
            && self.matcher.is_match(entry)
    }
}

fn select(
    root: PathBuf,
    scan: ScanResult,
    filter: &Filter,
    token: &CancelToken,
    on_match: &mut dyn FnMut(Entry<'_>),
) -> Result<GlobOutcome> {
    let entries = scan.entries;
    let mut total = 0;
    let mut in_order = Vec::new();
    // Newest first, equal times in path order.
    let mut newest = TopN::new(filter.limit);
    for (index, entry) in entries.iter().enumerate() {
        if index % CANCEL_POLL_INTERVAL == 0 {
            token.check()?;
        }
        if !filter.accepts(&entry) || !filter.beneath.as_ref().is_none_or(|b| b.keeps(entry.path)) {
            continue;
        }
        total += 1;
        if filter.sort_by_mtime {
            newest.offer((entry.mtime_ms.unwrap_or(i64::MIN), Reverse(index)));
        } else if in_order.len() < filter.limit {
            in_order.push(index);
            on_match(shown(entry, filter.mtime));
        }
    }
    let selected = if filter.sort_by_mtime {
        show_newest(newest, &entries, filter.mtime, on_match)
    } else {
        in_order
    };
    let unreadable = unreadable::reported(entries.unreadable(), filter.include_node_modules);
    Ok(GlobOutcome {
        root,
        unreadable: match &filter.beneath {
            Some(beneath) => beneath.vouch(unreadable),
            None => unreadable,
        },
        entries,
        selected,
        mtime: filter.mtime,
        total_matches: total,
    })
}

/// The indexes `newest` kept, newest first (equal times in path order),
/// each shown to `on_match` in that order.
fn show_newest(
    newest: TopN<(i64, Reverse<usize>)>,
    entries: &Entries,
    mtime: bool,
    on_match: &mut dyn FnMut(Entry<'_>),
) -> Vec<usize> {
    let selected: Vec<usize> = newest
        .into_sorted()
        .into_iter()
        .map(|(_, Reverse(index))| index)
        .collect();
    for &index in &selected {
        on_match(shown(entries.get(index), mtime));
    }
    selected
}

/// `entry` as a match shows it: without its mtime unless `mtime`.
fn shown(entry: Entry<'_>, mtime: bool) -> Entry<'_> {
    Entry {
        mtime_ms: entry.mtime_ms.filter(|_| mtime),
        ..entry
    }
}

#[cfg(test)]
mod tests;
