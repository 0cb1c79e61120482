//! `grep`: search file contents under a directory (or in one file, or in a
//! buffer) with `rg`'s matching rules, in path order, streaming results as
//! they are decided.
//!
//! Why each piece is the way it is:
//! - **File selection** is a scan (seed 001: the shared cache only when the
//!   caller asks for it; otherwise an ordered walk searched while it goes,
//!   which a limited search stops early) filtered by the node_modules rule,
//!   the `globs` and the file types; only regular files are opened (see
//!   `select` and `queue`).
//! - **Matching** is `grep-regex` configured as `rg` configures it, with
//!   `{`/`}` taken literally where they cannot be a repetition, because
//!   agents search for `${x}` and `function() {` (see [`has_match`]). The
//!   pattern compiles on its own thread while the files are found: for a
//!   Unicode class that takes longer than many limited searches.
//! - **Reading** never maps files and never truncates them: small files are
//!   read whole in one call, larger ones through a buffer whose every read
//!   polls the [`CancelToken`], so abort and timeout land within 50 ms even
//!   inside a huge file; a FIFO is never opened, so nothing blocks forever
//!   (see `read`).
//! - **Binary files** are handled as `rg` handles them, and counted, so no
//!   match disappears without a trace (see `search`).
//! - **Unread files**: a cached search skips the files whose content
//!   signature shows they cannot match, trusting a signature only while the
//!   file's identity and timestamps are unchanged (see `prefilter`).
//! - **Order**: files are searched in parallel, results are emitted in path
//!   order then line order, and `offset`/`max_count` cut that one sequence,
//!   so every run returns the same answer (see `run`).
//!
//! # Example
//!
//! ```
//! use natives_scan::{CancelToken, grep::{GrepOptions, grep}};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("a.ts"), "let x = `${name}`;\nother\n")?;
//!
//! let mut options = GrepOptions::new("${name}", dir.path());
//! options.context(1);
//! let outcome = grep(&options, natives_scan::cache::global(), &CancelToken::new(), &mut |_| {})?;
//! assert_eq!(outcome.matches[0].path_lossy(), "a.ts");
//! assert_eq!(outcome.matches[0].line_number, 1);
//! assert_eq!(outcome.matches[0].context_after, [(2, "other".to_string())]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod needs;
pub(crate) mod pattern;
mod prefilter;
mod queue;
mod read;
mod recent;
mod run;
mod search;
mod select;

use std::{
    borrow::Cow,
    path::PathBuf,
    sync::{Arc, OnceLock, atomic::AtomicBool},
    thread,
};

use grep_regex::RegexMatcher;

pub use crate::content_index::ContentStats;
pub use pattern::{HasMatchOptions, Highlighter, has_match};
pub use search::FileObserver;
pub use select::path_names_a_file;

use crate::{
    cache::ScanCache,
    cancel::CancelToken,
    error::{Error, ErrorKind, Result},
    unreadable::{self, Unreadable},
    walk::ScanPolicy,
};
use pattern::{MatcherSpec, compiled_matcher};
use run::{Backlog, Emitter};
use search::{Shape, Stop};

/// What a grep returns per result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GrepMode {
    /// One result per matching line (per match block in `multiline` mode),
    /// with its text and context. The default.
    #[default]
    Content,
    /// One result per file with matches, carrying its match count.
    Count,
    /// One result per file with matches: the path alone.
    FilesWithMatches,
}

/// What to search for and where. Field docs give the defaults of
/// [`GrepOptions::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepOptions {
    /// The regex (or, with `literal`, the fixed string). `{` and `}` that
    /// cannot form a counted repetition are matched literally. An empty
    /// pattern matches every line, as in `rg`.
    pub pattern: String,
    /// A directory to search recursively, or one file (relative to the
    /// current directory). A named file is searched whatever `globs`,
    /// `file_types`, `include_hidden` and `include_node_modules` say.
    pub path: PathBuf,
    /// Only files these globs select, with `rg -g` rules, all of them one
    /// set as rg builds from repeated `-g`: a file is selected when a glob
    /// without `!` matches it (any of them; none given: every file), and
    /// left out when a `!glob` does, the last matching glob deciding.
    /// Without `/` a glob matches the file name at any depth (`*.ts`), with
    /// `/` it is anchored at `path` (`src/**/*.ts`); an excluded directory
    /// excludes all below it. As with `rg -g`, a file a glob selects is
    /// searched even when an ignore file or the hidden rule would leave it
    /// out (`*.log` finds a gitignored `debug.log`), though not inside a
    /// directory they leave out; so a search with such a glob walks
    /// privately, `cache` or not. Default: none.
    pub globs: Vec<String>,
    /// Only files of these types (any of them), by the `ignore` crate's
    /// built-in type names (`rust`, `ts`, `py`, ... as in `rg -t`; `all` is
    /// any typed file). An unknown name is `EINVAL` listing the closest
    /// known names. Default: none (every file).
    pub file_types: Vec<String>,
    /// Never files of these types (`rg -T`), named as in `file_types`.
    /// Default: none.
    pub file_types_not: Vec<String>,
    /// Match case-insensitively; wins over `smart_case`. Default: `false`.
    pub ignore_case: bool,
    /// Case-insensitive unless the pattern has an uppercase letter (`rg -S`).
    /// Default: `false`.
    pub smart_case: bool,
    /// Treat the pattern as a fixed string (`rg -F`). Default: `false`.
    pub literal: bool,
    /// Let a match span lines (`rg -U`); `.` still stops at `\n` unless the
    /// pattern enables `(?s)`. As with `rg -U`, each file is read whole
    /// into memory to be searched. Default: `false`.
    pub multiline: bool,
    /// Only matches surrounded by word boundaries (`rg -w`): a match must
    /// start at the start of a line or after a non-word character, and end
    /// at the end of a line or before one. Default: `false`.
    pub word_regexp: bool,
    /// Report the lines that do not match instead (`rg -v`): each is a
    /// result (with `multiline`, each line outside every match), context
    /// lines are the matching ones, and counts count them. Default: `false`.
    pub invert_match: bool,
    /// One result per match rather than per line (`rg -o`): its `line` is
    /// the matched text, on the line where the match starts, and the counts
    /// count matches (in count mode too, as `rg -c -o`). Lines reported by
    /// `invert_match` hold no match and are reported whole, as `rg -o -v`
    /// prints them. Default: `false`.
    pub only_matching: bool,
    /// Search dot-files and dot-directories (`.git` is never entered).
    /// Default: `false`, as `rg` ([`ScanPolicy::DEFAULT`], the one default
    /// of every search).
    pub include_hidden: bool,
    /// Honour `.gitignore`, `.ignore` and git excludes. Default: `true`.
    pub use_gitignore: bool,
    /// Search inside `node_modules`; `None` applies
    /// [`crate::node_modules::include_node_modules`] with the `globs` as the
    /// hint (no glob: the hint is empty, so `node_modules` is skipped).
    /// Default: `None`.
    pub include_node_modules: Option<bool>,
    /// Lines of context before each match (`rg -B`). Default: 0.
    pub context_before: usize,
    /// Lines of context after each match (`rg -A`). Default: 0.
    pub context_after: usize,
    /// Return at most this many results (after `offset`): matching lines in
    /// content mode, files in count and files-with-matches modes; a limit on
    /// the whole result, not per file. Default: no limit.
    pub max_count: Option<usize>,
    /// Search each file only up to this many matching lines (`rg -m`;
    /// inverted, non-matching lines), with the after-context of the last;
    /// in count mode each file counts at most this many. Default: no limit.
    pub max_count_per_file: Option<u64>,
    /// Skip this many results first, in result order. Default: 0.
    pub offset: usize,
    /// Cut result and context lines longer than this many characters (on a
    /// character boundary) and mark the result `truncated`. Default: none.
    pub max_columns: Option<usize>,
    /// What each result is. Default: [`GrepMode::Content`].
    pub mode: GrepMode,
    /// Take the file list from the shared scan cache. Default: `false` (a
    /// private walk; the cache is neither read nor written).
    pub cache: bool,
    /// With `cache`, use the cached list only when it follows filesystem
    /// events without fallback (see [`crate::watch`]): then it is current
    /// to the call and its content index is trusted by events
    /// ([`ListSource::Watched`]). Otherwise, and when watching is off,
    /// search while walking fresh, as without the cache. Default: `false`.
    pub watched_only: bool,
    /// Stay beneath `path`, which is taken as a real path (no symlink on
    /// the way; `OutsideRoot` otherwise): every file searched, every path
    /// named, is reached from a handle on it without following a link at
    /// the moment it is opened or checked, so a directory inside swapped
    /// for a link to outside while the search runs leads nowhere; the link
    /// is named as unreadable (`ELOOP`) instead. A named file is opened
    /// without links too. See `beneath` for how. Default: `false`.
    pub confine: bool,
    /// Skip files larger than this many bytes, counting them in
    /// [`GrepOutcome::files_skipped_too_large`]. Default: `None`: every file
    /// is searched whole, whatever its size.
    pub max_file_size: Option<u64>,
    /// Keep every returned result in [`GrepOutcome::matches`] as well as
    /// passing it to `on_match`. Set it to `false` when `on_match` consumes
    /// the results, so a search returning millions of them holds none.
    /// Default: `true`.
    pub retain_matches: bool,
    /// Files are searched in parallel but results are emitted in path order,
    /// so the results of files finished ahead of the oldest file still being
    /// searched wait for it; once they hold about this many bytes, no
    /// further file is started until it is done. Default:
    /// [`DEFAULT_MAX_BUFFERED_BYTES`].
    pub max_buffered_bytes: usize,
}

/// Default [`GrepOptions::max_buffered_bytes`]: far more than any ordinary
/// search holds (results of a few thousand files), small enough that one
/// slow file early in path order cannot let a whole tree's results pile up
/// behind it.
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 64 * 1024 * 1024;

impl GrepOptions {
    /// Options for `pattern` under `path`, every other field at its default.
    pub fn new(pattern: impl Into<String>, path: impl Into<PathBuf>) -> GrepOptions {
        GrepOptions {
            pattern: pattern.into(),
            path: path.into(),
            globs: Vec::new(),
            file_types: Vec::new(),
            file_types_not: Vec::new(),
            ignore_case: false,
            smart_case: false,
            literal: false,
            multiline: false,
            word_regexp: false,
            invert_match: false,
            only_matching: false,
            include_hidden: ScanPolicy::DEFAULT.include_hidden,
            use_gitignore: ScanPolicy::DEFAULT.use_gitignore,
            include_node_modules: None,
            context_before: 0,
            context_after: 0,
            max_count: None,
            max_count_per_file: None,
            offset: 0,
            max_columns: None,
            mode: GrepMode::Content,
            cache: false,
            watched_only: false,
            confine: false,
            max_file_size: None,
            retain_matches: true,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
        }
    }

    /// Set `context_before` and `context_after` to `lines` (`rg -C`).
    pub fn context(&mut self, lines: usize) -> &mut GrepOptions {
        self.context_before = lines;
        self.context_after = lines;
        self
    }

    fn matcher_spec(&self) -> MatcherSpec<'_> {
        MatcherSpec {
            pattern: &self.pattern,
            ignore_case: self.ignore_case,
            smart_case: self.smart_case,
            literal: self.literal,
            multiline: self.multiline,
            word: self.word_regexp,
        }
    }

    fn shape(&self) -> Shape<'_> {
        // A file can never contribute more than `offset + max_count + 1`
        // results (the last one proves the limit), so no file is searched,
        // or held in memory, beyond that.
        let per_file_cap = self.max_count.map(|max| {
            let needed = self.offset.saturating_add(max).saturating_add(1);
            u64::try_from(needed).unwrap_or(u64::MAX)
        });
        Shape {
            mode: self.mode,
            multiline: self.multiline,
            invert: self.invert_match,
            only_matching: self.only_matching,
            context_before: self.context_before,
            context_after: self.context_after,
            max_columns: self.max_columns,
            per_file_cap,
            max_per_file: self.max_count_per_file,
            max_file_size: self.max_file_size,
            observer: None,
        }
    }
}

/// One result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrepMatch {
    /// The file, relative to [`GrepOutcome::root`], `/`-separated, as the
    /// raw bytes of its name (see [`GrepMatch::path_lossy`]). For a single
    /// file given as `path`, its file name; for an in-memory search, empty.
    pub path: Vec<u8>,
    /// 1-based number of the (first) matching line; 0 in count and
    /// files-with-matches modes.
    pub line_number: u64,
    /// The matching line without its final `\n` (a `\r` before it is kept,
    /// as `rg` reports it); in multiline mode every line the match spans,
    /// joined by `\n`; with `only_matching`, the matched text alone. Invalid
    /// UTF-8 is replaced with U+FFFD. Empty in count and files-with-matches
    /// modes.
    pub line: String,
    /// Up to `context_before` lines before the match, as (line number, text).
    /// A line is never repeated: one already reported as the previous
    /// match's after-context, or a matching line, is not listed again.
    pub context_before: Vec<(u64, String)>,
    /// Up to `context_after` lines after the match, as (line number, text),
    /// ending early at the next match.
    pub context_after: Vec<(u64, String)>,
    /// `true` when `max_columns` cut this line or one of its context lines.
    pub truncated: bool,
    /// Count mode: the file's matching lines, or with `multiline` or
    /// `only_matching` its matches, as `rg --count` reports (so a walked file whose search stopped
    /// at a NUL byte has no count result); 0 in the other modes.
    pub match_count: u64,
}

impl GrepMatch {
    /// The path as text; invalid UTF-8 is replaced with U+FFFD.
    pub fn path_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.path)
    }

    /// A per-file result (count and files-with-matches modes).
    fn file(path: &[u8], match_count: u64) -> GrepMatch {
        GrepMatch {
            path: path.to_vec(),
            match_count,
            ..GrepMatch::default()
        }
    }
}

/// The answer. Every counter covers the files whose reports were taken in
/// order; once `limit_reached` is known the search stops, so later files
/// are neither searched nor counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrepOutcome {
    /// The canonical directory result paths are relative to (empty for an
    /// in-memory search).
    pub root: PathBuf,
    /// `path` named one file (results carry its name, relative to `root`,
    /// its directory) rather than a directory to search.
    pub path_is_file: bool,
    /// The returned results, in path order then line order.
    pub matches: Vec<GrepMatch>,
    /// Results found: matching lines in content mode (`rg`'s per-line
    /// count; a multi-line match counts once; with `only_matching`, the
    /// matches), the sum of per-file counts in
    /// count mode, files in files-with-matches mode. Exact unless
    /// `limit_reached`; then a lower bound above `offset + max_count`.
    pub total_matches: u64,
    /// Files with at least one match.
    pub files_with_matches: usize,
    /// Files searched (binary ones included). A cached search counts the
    /// files its content signatures ruled out without reading them, since
    /// their answer is the same (see `prefilter`).
    pub files_searched: usize,
    /// Files found by the walk whose search stopped at a NUL byte. In
    /// content mode, matches before the NUL are still returned, as `rg`
    /// prints them; in count mode the file has no count, as in `rg --count`.
    pub binary_files_skipped: usize,
    /// Files above `max_file_size`, not searched.
    pub files_skipped_too_large: usize,
    /// Files listed by the scan that could not be opened or read (removed
    /// since, no permission, no longer a regular file).
    pub files_unreadable: usize,
    /// What the search could not enter or read, each path with why, in path
    /// order: directories the walk could not list (no permission, a path
    /// past `PATH_MAX`) and the files counted in `files_unreadable`, as
    /// `rg` names them. Once `limit_reached` stops the search, only those
    /// met before.
    pub unreadable: Vec<Unreadable>,
    /// `true` exactly when more results existed beyond the returned ones.
    pub limit_reached: bool,
    /// Where the file list came from, and so what proves it current.
    pub source: ListSource,
}

/// Where a search's file list came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ListSource {
    /// A walk made for this search (without the cache, or with it, when it
    /// held no list or could not vouch for the one it held).
    #[default]
    Walked,
    /// A cached list younger than the TTL, not followed by events: changes
    /// since its walk that were not invalidated are not in it.
    Cached,
    /// A cached list that follows filesystem events without fallback: every
    /// change the kernel reported before the call is in it, and its content
    /// index is trusted by events.
    Watched,
}

impl ListSource {
    /// `walked`, `cached` or `watched`: the name every front shows.
    pub fn name(self) -> &'static str {
        match self {
            ListSource::Walked => "walked",
            ListSource::Cached => "cached",
            ListSource::Watched => "watched",
        }
    }
}

/// Search the files under `options.path` (or that one file).
///
/// `on_match` sees each returned result once, in result order, as soon as
/// it is decided: when every file before its own has been searched, not
/// after the whole search. `token` is checked before any work, between
/// files and before every read.
pub fn grep(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
    on_match: &mut dyn FnMut(&GrepMatch),
) -> Result<GrepOutcome> {
    grep_with_progress(options, cache, token, on_match, &mut |_| {})
}

/// [`grep`], also showing how far it has got: once the search knows what
/// `path` is and where its file list comes from, before any file is
/// searched, `on_progress` sees the outcome with only those set
/// ([`GrepOutcome::root`], [`GrepOutcome::path_is_file`],
/// [`GrepOutcome::source`]), so a front can name results as this search
/// resolved `path`; then after each file's report is taken, in path order
/// and on the calling thread, the counters so far (files searched, results
/// found, ...), so a long search can report progress while it runs.
pub fn grep_with_progress(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
    on_match: &mut dyn FnMut(&GrepMatch),
    on_progress: &mut dyn FnMut(&GrepOutcome),
) -> Result<GrepOutcome> {
    let backlog = Backlog::new(options.max_buffered_bytes);
    let hooks = Hooks {
        on_match,
        on_progress,
        observed: None,
    };
    grep_with_backlog(options, cache, token, hooks, &backlog)
}

/// [`grep_with_progress`] with `observer` seeing every searched file's
/// events as well (see [`FileObserver`]): what it writes for each file is
/// handed to `on_observed`, on the calling thread, in path order, with the
/// file's results. `offset` and `max_count` are refused (`EINVAL`): they
/// cut results, and an observer's bytes for a file cannot be cut.
pub fn grep_observed(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
    observer: &dyn FileObserver,
    on_observed: &mut dyn FnMut(&[u8]),
    on_progress: &mut dyn FnMut(&GrepOutcome),
) -> Result<GrepOutcome> {
    if options.offset > 0 || options.max_count.is_some() {
        return Err(Error::invalid(
            "an observed search takes neither `offset` nor `max_count`",
        ));
    }
    let backlog = Backlog::new(options.max_buffered_bytes);
    let hooks = Hooks {
        on_match: &mut |_| {},
        on_progress,
        observed: Some((observer, on_observed)),
    };
    grep_with_backlog(options, cache, token, hooks, &backlog)
}

/// Takes what a [`FileObserver`] wrote for each file, in path order.
type OnObserved<'h> = &'h mut dyn FnMut(&[u8]);

/// What a search calls back: see [`grep_with_progress`] and
/// [`grep_observed`].
struct Hooks<'h> {
    on_match: &'h mut dyn FnMut(&GrepMatch),
    on_progress: &'h mut dyn FnMut(&GrepOutcome),
    observed: Option<(&'h dyn FileObserver, OnObserved<'h>)>,
}

/// [`grep_with_progress`], holding results that wait to be emitted in
/// `backlog`.
fn grep_with_backlog(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
    hooks: Hooks<'_>,
    backlog: &Backlog,
) -> Result<GrepOutcome> {
    token.check()?;
    let spec = options.matcher_spec();
    let matcher = OnceLock::new();
    thread::scope(|scope| {
        // Compiling a pattern with a Unicode class can take longer than a
        // limited search itself, so files are found meanwhile.
        let compiled = scope.spawn(|| {
            let built = compiled_matcher(&spec);
            let _ = matcher.set(built.as_ref().ok().cloned());
            built.map(drop)
        });
        let searched = search_tree(options, cache, &matcher, token, hooks, backlog);
        // A bad pattern is the error to report, whatever else failed.
        compiled
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        searched
    })
}

/// [`grep`] once the pattern is being compiled into `matcher`.
fn search_tree(
    options: &GrepOptions,
    cache: &ScanCache,
    matcher: &OnceLock<Option<Arc<RegexMatcher>>>,
    token: &CancelToken,
    hooks: Hooks<'_>,
    backlog: &Backlog,
) -> Result<GrepOutcome> {
    let candidates = select::candidates(options, cache, token)?;
    let outcome = GrepOutcome {
        root: candidates.root().to_path_buf(),
        path_is_file: candidates.is_explicit(),
        source: candidates.source(),
        ..GrepOutcome::default()
    };
    (hooks.on_progress)(&outcome);
    let (observer, on_observed) = hooks.observed.unzip();
    let mut emitter = Emitter::new(options, outcome, hooks.on_match, hooks.on_progress);
    emitter.on_observed = on_observed;
    let shape = Shape {
        observer,
        ..options.shape()
    };
    let job = run::Job {
        candidates: &candidates,
        cache,
        confine: options.confine,
        matcher,
        shape: &shape,
        token,
        backlog,
        needs: options
            .cache
            .then(|| needs::Needs::of(&options.matcher_spec(), options.invert_match))
            .flatten(),
    };
    let walked = run::run(&job, &mut emitter)?;
    let mut outcome = emitter.outcome;
    outcome.unreadable =
        unreadable::merged([candidates.unreadable(), &walked, &outcome.unreadable].concat());
    Ok(outcome)
}

/// The files a search with `options` would search (`rg --files`), in path
/// order, none of them opened: a file named as `path`, or a directory's
/// regular files after the node_modules rule, the `globs` and the file
/// types. `on_file` sees each path, relative to the returned root, as it is
/// found, with the listing so far (its root, whether `path` named a file,
/// the files listed before this one), so a front can name it as this
/// listing resolved `path`; the matching options are not used.
pub fn list_files(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
    on_file: &mut dyn FnMut(&ListedFiles, &[u8]),
) -> Result<ListedFiles> {
    let candidates = select::listed(options, cache, token)?;
    let mut listed = ListedFiles {
        root: candidates.root().to_path_buf(),
        path_is_file: candidates.is_explicit(),
        ..ListedFiles::default()
    };
    listed.unreadable = candidates.each(cache, token, &mut |path| {
        on_file(&listed, path);
        listed.files += 1;
    })?;
    Ok(listed)
}

/// What [`list_files`] listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListedFiles {
    /// The canonical directory the listed paths are relative to.
    pub root: PathBuf,
    /// `path` named one file (listed by its name, relative to `root`, its
    /// directory) rather than a directory to list.
    pub path_is_file: bool,
    /// How many files were listed.
    pub files: usize,
    /// What the walk could not enter or read, in path order.
    pub unreadable: Vec<Unreadable>,
}

/// Search `content` as one file the caller named (NUL bytes do not stop
/// it). Uses the matching, mode, context, `offset`, both `max_count`s and
/// `max_columns` options; the file-selection options (`path`, `globs`,
/// `file_types`, hidden, gitignore, node_modules, `cache`, `max_file_size`)
/// do not apply. Result paths are empty.
pub fn search(content: &[u8], options: &GrepOptions, token: &CancelToken) -> Result<GrepOutcome> {
    token.check()?;
    let matcher = compiled_matcher(&options.matcher_spec())?;
    let shape = options.shape();
    let halt = AtomicBool::new(false);
    let stop = Stop { token, halt: &halt };
    let report =
        search::search_reader(&shape, true, &matcher, content, &stop, b"").map_err(|err| {
            match token.check() {
                Err(stopped) => stopped,
                Ok(()) => Error::new(ErrorKind::Io, format!("in-memory search: {err}")),
            }
        })?;
    let (mut ignore, mut quiet) = (|_: &GrepMatch| {}, |_: &GrepOutcome| {});
    // With no callback to take them, results are always kept.
    let retained = GrepOptions {
        retain_matches: true,
        ..options.clone()
    };
    let mut emitter = Emitter::new(&retained, GrepOutcome::default(), &mut ignore, &mut quiet);
    emitter.file(b"", report);
    Ok(emitter.outcome)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod watched_tests;
