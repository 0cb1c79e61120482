//! `glob`: filter a scan by a glob pattern, type and the node_modules rule,
//! with a bounded top-N.
//!
//! Pattern rules (what coding agents write, taken as they mean it):
//! `\` is read as `/`; a leading `./` is dropped; an unclosed `{` is closed
//! (`*.{ts,js`); with `recursive` (the default) a pattern without `/` matches
//! at any depth (`*.ts` means `**/*.ts`); `*` never crosses `/`
//! (`literal_separator`); matching is case-sensitive.
//!
//! Several patterns and an ignore list work as in fast-glob and tinyglobby,
//! which JS users know: an entry matching any pattern is returned unless an
//! ignore pattern (or a pattern starting with `!`) matches it or a directory
//! above it. Ignore patterns follow the same rules as patterns.
//!
//! Performance contract: one pass over the (usually cached) entry list, no
//! allocation per entry, memory O(`max_results`) for the returned set even
//! with `sort_by_mtime`, and [`CancelToken`] polled every
//! [`CANCEL_POLL_INTERVAL`] entries.

use std::{
    cmp::Reverse,
    fmt,
    path::{Path, PathBuf},
    sync::Arc,
};

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::{
    beneath::{Beneath, search_root},
    cache::{ScanCache, ScanKey, ScanResult},
    cancel::{CANCEL_POLL_INTERVAL, CancelToken},
    entries::{Entries, Entry, FileType, bytes_to_path, path_tail},
    error::{Error, Result},
    names::NameLiterals,
    node_modules,
    top_n::TopN,
    unreadable::{self, Unreadable},
    walk::{self, Detail, Needs, ScanPolicy},
};

/// What to match and how. Field docs give the defaults of [`GlobOptions::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobOptions {
    /// The glob patterns, relative to `path`: an entry matching any of them
    /// is returned. One starting with `!` is an ignore pattern (as in
    /// fast-glob); at least one must not be. Set by [`GlobOptions::new`].
    pub patterns: Vec<String>,
    /// Leave out entries matching any of these patterns, and every entry
    /// below a directory matching one (`dist`, `**/*.d.ts`); same rules as
    /// `patterns`. Default: none.
    pub ignore: Vec<String>,
    /// The directory to search (relative to the current directory).
    pub path: PathBuf,
    /// Only entries of this type. Default: any type.
    pub file_type: Option<FileType>,
    /// Match a `/`-free pattern at any depth. Default: `true`.
    pub recursive: bool,
    /// Include dot-files and dot-directories. Default: `false`
    /// ([`ScanPolicy::DEFAULT`], the one default of every search).
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
            patterns: vec![pattern.into()],
            ignore: Vec::new(),
            path: path.into(),
            file_type: None,
            recursive: true,
            include_hidden: ScanPolicy::DEFAULT.include_hidden,
            use_gitignore: ScanPolicy::DEFAULT.use_gitignore,
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
    /// Each returned match's index and the mtime it shows.
    selected: Vec<(usize, Option<i64>)>,
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
        self.selected.iter().map(move |&(i, mtime_ms)| Entry {
            mtime_ms,
            ..self.entries.get(i)
        })
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
    let picked = candidates(cache, &key, &scan, &filter, token);
    let mut outcome = select(
        key.root.clone(),
        scan.clone(),
        picked,
        &filter,
        token,
        on_match,
    )?;
    if outcome.total_matches == 0 && options.cache && cache.rechecks_empty(&scan) {
        let fresh = cache.force_rescan(&key, token)?;
        let picked = candidates(cache, &key, &fresh, &filter, token);
        outcome = select(key.root, fresh, picked, &filter, token, on_match)?;
    }
    Ok(outcome)
}

/// The entries of `scan` the pattern may match, ascending, when the name
/// index of a cached list narrows them by the literals of the pattern's
/// last component (see [`crate::names`]); `None`: every entry.
fn candidates(
    cache: &ScanCache,
    key: &ScanKey,
    scan: &ScanResult,
    filter: &Filter,
    token: &CancelToken,
) -> Option<Vec<usize>> {
    let literals = filter.matcher.name_literals()?;
    let index = cache.name_index(key, &scan.entries, token)?;
    index.candidates(&scan.entries, literals)
}

/// One pattern as the caller wrote it, and the option it came in.
#[derive(Clone, Copy)]
struct Written<'a> {
    /// `pattern` or `ignore`, as the JS API spells it.
    option: &'static str,
    pattern: &'a str,
}

impl Written<'_> {
    fn invalid(&self, detail: impl fmt::Display) -> Error {
        let Written { option, pattern } = *self;
        Error::invalid(format!(
            "invalid glob pattern `{pattern}` in `{option}`: {detail}"
        ))
        .with_option(option, pattern)
    }
}

/// Compile a normalized pattern; errors name the pattern as the caller wrote
/// it and the option it came in.
fn compile(written: Written<'_>, normalized: &str) -> Result<Glob> {
    GlobBuilder::new(normalized)
        .literal_separator(true)
        .case_insensitive(false)
        .empty_alternates(true)
        .build()
        .map_err(|err| written.invalid(err.kind()))
}

fn build_globset(written: Written<'_>, globs: Vec<Glob>) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    globs.into_iter().for_each(|glob| {
        builder.add(glob);
    });
    builder.build().map_err(|err| written.invalid(err))
}

/// A compiled pattern.
///
/// Most agent globs only constrain the end of the path (`**/*.ts`,
/// `**/*.{ts,tsx}`, `**/*`). For those a suffix comparison gives globset's
/// answer without building a `Candidate` per entry, which on a cached list
/// costs more than the match itself; everything else goes to globset, over
/// the candidates the name index offers when the last component has a
/// literal start or end (see [`name_literals`]).
enum Matcher {
    /// `**/*S` for each suffix `S` (no metacharacters, no `/`).
    Suffixes(Vec<Suffix>),
    Glob(GlobSet, Option<NameLiterals>),
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
    fn new(written: Written<'_>, recursive: bool) -> Result<Matcher> {
        let normalized = normalize_pattern(written, recursive)?;
        // Validate with globset even when the fast path applies, so both
        // paths accept and reject exactly the same patterns.
        let glob = build_globset(written, vec![compile(written, &normalized)?])?;
        Ok(match any_depth_suffixes(&normalized) {
            Some(suffixes) => Matcher::Suffixes(suffixes.into_iter().map(Suffix::new).collect()),
            None => Matcher::Glob(glob, name_literals(&normalized)),
        })
    }

    fn is_match(&self, entry: &Entry<'_>) -> bool {
        match self {
            Matcher::Suffixes(suffixes) => suffixes.iter().any(|s| s.ends(entry)),
            Matcher::Glob(glob, _) => {
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

/// What every name a normalized pattern matches starts and ends with, read
/// from its last component, or `None` when that is nothing.
///
/// With `literal_separator`, none of `*`, `?` or a class matches `/`, so a
/// last component after a `/` outside braces and classes, and without `**`,
/// matches the last component of a path and nothing more: its text before
/// the first metacharacter starts every name it matches, its text after the
/// last one ends it. Classes that may start with `]` are not worked out.
fn name_literals(normalized: &str) -> Option<NameLiterals> {
    const META: &[char] = &['*', '?', '[', ']', '{', '}', ','];
    if ["[]", "[!]", "[^]"]
        .iter()
        .any(|odd| normalized.contains(odd))
    {
        return None;
    }
    let last = match normalized.rfind('/') {
        Some(slash) if !outside_groups(&normalized[..slash]) => return None,
        Some(slash) => &normalized[slash + 1..],
        None => normalized,
    };
    if last.contains("**") {
        return None;
    }
    let prefix = &last[..last.find(META).unwrap_or(last.len())];
    let suffix = &last[last.rfind(META).map_or(0, |at| at + 1)..];
    let literals = NameLiterals {
        prefix: prefix.as_bytes().to_vec(),
        suffix: suffix.as_bytes().to_vec(),
    };
    (!prefix.is_empty() || !suffix.is_empty()).then_some(literals)
}

/// Whether the end of `head` lies outside every `{...}` and `[...]`.
fn outside_groups(head: &str) -> bool {
    unclosed_braces(head) == 0 && !ends_in_class(head)
}

/// Whether a `[` is left open at the end of `pattern`.
fn ends_in_class(pattern: &str) -> bool {
    pattern.chars().fold(false, |in_class, c| match c {
        '[' => true,
        ']' => false,
        _ => in_class,
    })
}

fn normalize_pattern(written: Written<'_>, recursive: bool) -> Result<String> {
    let Written { option, pattern } = written;
    if pattern.trim().is_empty() {
        return Err(
            Error::invalid(format!("a glob pattern in `{option}` is empty"))
                .with_option(option, pattern),
        );
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

/// The compiled `patterns` and `ignore`: an entry matches when a pattern
/// does and no ignore pattern matches it or a directory above it.
struct Patterns {
    include: Vec<Matcher>,
    /// Each ignore pattern `P` as `P` and `P/**`, so one lookup also finds
    /// a matching directory above the entry; `None` when there is none.
    ignore: Option<GlobSet>,
}

impl Patterns {
    fn new(options: &GlobOptions) -> Result<Patterns> {
        let (negated, included): (Vec<&String>, Vec<&String>) =
            options.patterns.iter().partition(|p| p.starts_with('!'));
        if included.is_empty() {
            let given = options.patterns.join("`, `");
            return Err(Error::invalid(format!(
                "glob needs a pattern that does not start with `!`, got `{given}`"
            ))
            .with_option("pattern", given));
        }
        let include = included
            .iter()
            .map(|pattern| Matcher::new(written("pattern", pattern), options.recursive))
            .collect::<Result<_>>()?;
        let negated = negated.iter().map(|p| (written("pattern", p), &p[1..]));
        let listed = options
            .ignore
            .iter()
            .map(|p| (written("ignore", p), p.as_str()));
        let ignore = ignore_set(negated.chain(listed).collect(), options.recursive)?;
        Ok(Patterns { include, ignore })
    }

    fn is_match(&self, entry: &Entry<'_>) -> bool {
        self.include.iter().any(|m| m.is_match(entry))
            && self.ignore.as_ref().is_none_or(|ignore| {
                !ignore.is_match_candidate(&Candidate::new(&bytes_to_path(entry.path)))
            })
    }

    /// The literals the name index narrows by: those of the one selecting
    /// pattern, when it has some (ignore patterns only remove, so they keep
    /// the narrowing exact); several patterns read every entry.
    fn name_literals(&self) -> Option<&NameLiterals> {
        match self.include.as_slice() {
            [Matcher::Glob(_, literals)] => literals.as_ref(),
            _ => None,
        }
    }

    /// What the `node_modules` rule reads: the patterns that select (one
    /// naming `node_modules` means it; an ignore pattern naming it does not).
    fn hint(options: &GlobOptions) -> String {
        let selecting = options.patterns.iter().filter(|p| !p.starts_with('!'));
        selecting.map(String::as_str).collect::<Vec<_>>().join("\n")
    }
}

fn written<'a>(option: &'static str, pattern: &'a str) -> Written<'a> {
    Written { option, pattern }
}

/// One set of every ignore pattern (as written, and without its `!`), each
/// as `P` and `P/**`; `None` when there is none.
fn ignore_set(ignored: Vec<(Written<'_>, &str)>, recursive: bool) -> Result<Option<GlobSet>> {
    if ignored.is_empty() {
        return Ok(None);
    }
    let mut globs = Vec::new();
    for &(written, pattern) in &ignored {
        let stripped = Written { pattern, ..written };
        let normalized =
            normalize_pattern(stripped, recursive).map_err(|_| written.invalid("it is empty"))?;
        globs.push(compile(written, &normalized)?);
        globs.push(compile(written, &format!("{normalized}/**"))?);
    }
    let every = ignored.iter().map(|(w, _)| w.pattern).collect::<Vec<_>>();
    build_globset(written("ignore", &every.join("`, `")), globs).map(Some)
}

/// Everything that decides whether one entry matches.
struct Filter {
    matcher: Patterns,
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
            matcher: Patterns::new(options)?,
            file_type: options.file_type,
            include_node_modules: node_modules::include_node_modules(
                options.include_node_modules,
                &Patterns::hint(options),
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
    candidates: Option<Vec<usize>>,
    filter: &Filter,
    token: &CancelToken,
    on_match: &mut dyn FnMut(Entry<'_>),
) -> Result<GlobOutcome> {
    let entries = scan.entries;
    let mut picking = Picking::new(filter, &root);
    match &candidates {
        Some(indices) => {
            let picked = indices.iter().map(|&index| (index, entries.get(index)));
            picking.offer_all(picked, token, on_match)?
        }
        None => picking.offer_all(entries.iter().enumerate(), token, on_match)?,
    }
    let total_matches = picking.total;
    let selected = picking.selected(&entries, on_match);
    let unreadable = unreadable::reported(entries.unreadable(), filter.include_node_modules);
    Ok(GlobOutcome {
        root,
        unreadable: match &filter.beneath {
            Some(beneath) => beneath.vouch(unreadable),
            None => unreadable,
        },
        entries,
        selected,
        total_matches,
    })
}

/// The matches of one pass, as they are offered in path order.
struct Picking<'f> {
    filter: &'f Filter,
    /// The root the entries' paths are below, to `lstat` a match whose
    /// mtime the list does not hold (a list restored from its record, see
    /// [`crate::persist`], or an entry gone since the walk).
    root: &'f Path,
    total: usize,
    /// Matches returned in path order, with the mtime each shows.
    in_order: Vec<(usize, Option<i64>)>,
    /// Newest first, equal times (and unknown ones, last) in path order.
    newest: TopN<(Option<i64>, Reverse<usize>)>,
}

impl<'f> Picking<'f> {
    fn new(filter: &'f Filter, root: &'f Path) -> Picking<'f> {
        Picking {
            filter,
            root,
            total: 0,
            in_order: Vec::new(),
            newest: TopN::new(filter.limit),
        }
    }

    /// Offer `entries` (with their indices, ascending); the ones returned
    /// in path order go to `on_match` at once.
    fn offer_all<'e>(
        &mut self,
        entries: impl Iterator<Item = (usize, Entry<'e>)>,
        token: &CancelToken,
        on_match: &mut dyn FnMut(Entry<'_>),
    ) -> Result<()> {
        let filter = self.filter;
        for (step, (index, entry)) in entries.enumerate() {
            if step % CANCEL_POLL_INTERVAL == 0 {
                token.check()?;
            }
            if !filter.accepts(&entry)
                || !filter.beneath.as_ref().is_none_or(|b| b.keeps(entry.path))
            {
                continue;
            }
            self.total += 1;
            if filter.sort_by_mtime {
                let mtime_ms = self.mtime_of(&entry);
                self.newest.offer((mtime_ms, Reverse(index)));
            } else if self.in_order.len() < filter.limit {
                let mtime_ms = filter.mtime.then(|| self.mtime_of(&entry)).flatten();
                self.in_order.push((index, mtime_ms));
                on_match(Entry { mtime_ms, ..entry });
            }
        }
        Ok(())
    }

    /// The mtime of `entry`: the list's, else what `lstat` finds now.
    fn mtime_of(&self, entry: &Entry<'_>) -> Option<i64> {
        entry.mtime_ms.or_else(|| {
            let (_, mtime_ms) = walk::lstat(&self.root.join(entry.as_path()))?;
            mtime_ms
        })
    }

    /// The returned matches in result order, each with the mtime it shows;
    /// when sorting by mtime they go to `on_match` now that the newest are
    /// known.
    fn selected(
        self,
        entries: &Entries,
        on_match: &mut dyn FnMut(Entry<'_>),
    ) -> Vec<(usize, Option<i64>)> {
        if !self.filter.sort_by_mtime {
            return self.in_order;
        }
        let shows = self.filter.mtime;
        let selected: Vec<(usize, Option<i64>)> = self
            .newest
            .into_sorted()
            .into_iter()
            .map(|(mtime_ms, Reverse(index))| (index, mtime_ms.filter(|_| shows)))
            .collect();
        for &(index, mtime_ms) in &selected {
            on_match(Entry {
                mtime_ms,
                ..entries.get(index)
            });
        }
        selected
    }
}

#[cfg(test)]
mod indexed_tests;
#[cfg(test)]
mod tests;
