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
mod options;
mod outcome;
pub(crate) mod pattern;
mod prefilter;
mod queue;
mod read;
mod recent;
mod run;
mod search;
mod select;

use std::{
    sync::{Arc, OnceLock, atomic::AtomicBool},
    thread,
    time::Duration,
};

use grep_regex::RegexMatcher;

pub use crate::content_index::ContentStats;
pub use options::{DEFAULT_MAX_BUFFERED_BYTES, GrepMode, GrepOptions};
pub use outcome::{GrepMatch, GrepOutcome, ListSource, ListedFiles};
pub use pattern::{HasMatchOptions, Highlighter, has_match};
pub use search::FileObserver;
pub use select::path_names_a_file;

use crate::{
    cache::ScanCache,
    cancel::CancelToken,
    error::{Error, ErrorKind, Result},
    unreadable,
};
use pattern::{MatcherSpec, compiled_matcher, kept_matcher};
use run::{Backlog, Emitter, OnObserved};
use search::{Shape, Stop};

/// Search the files under `options.path` (or that one file).
///
/// `on_match` takes each returned result once, in result order, as soon as
/// it is decided: when every file before its own has been searched, not
/// after the whole search. `token` is checked before any work, between
/// files and before every read.
pub fn grep(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
    on_match: &mut dyn FnMut(GrepMatch),
) -> Result<GrepOutcome> {
    grep_with_progress(options, cache, token, on_match, &mut |_| {})
}

/// The most results a search answered at once may ask for (see
/// [`grep_at_once`]): a first page, not a listing of everything.
pub const AT_ONCE_RESULTS: usize = 1_000;

/// How long a search answered at once may take before it gives up (see
/// [`grep_at_once`]). A first page from a watched cache whose index has
/// seen the pattern takes 60 to 200 us; the budget leaves room for a busy
/// machine while bounding what a search that does not fit wastes.
#[cfg(not(test))]
pub const AT_ONCE_BUDGET: Duration = Duration::from_millis(1);
/// In this crate's own tests: they test what is answered at once, not how
/// fast (that is the benchmarks'), and a debug build on a busy machine
/// takes several times the real budget.
#[cfg(test)]
pub const AT_ONCE_BUDGET: Duration = Duration::from_millis(200);

/// [`grep`], on the calling thread, when it can answer within
/// [`AT_ONCE_BUDGET`] (or `token`'s deadline, if sooner); `None` when it
/// cannot, and then the caller searches as usual.
///
/// A front that answers on another thread pays two hand-overs per call
/// (there and back), each a wake-up of a sleeping thread: with a watched
/// cache that is most of a first page's cost, and more when other threads
/// keep the cores busy. Only a search likely to fit tries: from the cache,
/// watched (events prove the list current; no file is checked), at most
/// [`AT_ONCE_RESULTS`] results, its pattern already compiled (a first
/// compile can take longer than the search). It gives up rather than wait
/// for anything: another caller's refresh, a cookie the watcher has not
/// routed (that says nothing against the watch), a walk, or files that take
/// longer to search than the budget; any error is left for the usual search
/// to report. What a search that gave up did is not lost: the index keeps
/// what it learned. The results are in the outcome's `matches`, whatever
/// `retain_matches` says.
pub fn grep_at_once(
    options: &GrepOptions,
    cache: &ScanCache,
    token: &CancelToken,
) -> Option<GrepOutcome> {
    let limited = options.max_count.is_some_and(|max| max <= AT_ONCE_RESULTS);
    let likely = options.cache && limited && cache.watching().is_some();
    if !likely || kept_matcher(&MatcherSpec::of(options)).is_none() {
        return None;
    }
    let token = token
        .clone()
        .with_timeout(Some(token.within(AT_ONCE_BUDGET)));
    let mut found = Vec::new();
    let taken = GrepOptions {
        retain_matches: false,
        ..options.clone()
    };
    let mut outcome = grep(&taken, cache, &token, &mut |one| found.push(one)).ok()?;
    outcome.matches = found;
    Some(outcome)
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
    on_match: &mut dyn FnMut(GrepMatch),
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

/// What a search calls back: see [`grep_with_progress`] and
/// [`grep_observed`].
struct Hooks<'h> {
    on_match: &'h mut dyn FnMut(GrepMatch),
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
    let spec = MatcherSpec::of(options);
    let matcher = OnceLock::new();
    // A pattern an earlier search compiled is at hand: no thread to wait for.
    if let Some(kept) = kept_matcher(&spec) {
        let _ = matcher.set(Some(kept));
        return search_tree(options, cache, &matcher, token, hooks, backlog);
    }
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
        ..Shape::of(options)
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
            .then(|| needs::Needs::of(&MatcherSpec::of(options), options.invert_match))
            .flatten(),
        query: learned_query(options),
    };
    let walked = run::run(&job, &mut emitter)?;
    let mut outcome = emitter.outcome;
    outcome.unreadable =
        unreadable::merged([candidates.unreadable(), &walked, &outcome.unreadable].concat());
    Ok(outcome)
}

/// What the content index remembers what this search finds by (files read
/// whole with nothing found, and the reports of the others): the pattern
/// with every switch that changes a file's report. None for an inverted
/// search (its results are the lines that do not match) or one that takes
/// no match from any file (`-m 0`). The limit is not part of it: a report
/// no limit cut short is the report of every search with the same query.
fn learned_query(options: &GrepOptions) -> Option<String> {
    let reports_matches =
        options.cache && !options.invert_match && options.max_count_per_file != Some(0);
    reports_matches.then(|| {
        let o = options;
        let shape = (o.mode, o.only_matching, o.context_before, o.context_after);
        let cuts = (o.max_columns, o.max_count_per_file);
        format!("{shape:?}{cuts:?}{}", MatcherSpec::of(options).query())
    })
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

/// Search `content` as one file the caller named (NUL bytes do not stop
/// it). Uses the matching, mode, context, `offset`, both `max_count`s and
/// `max_columns` options; the file-selection options (`path`, `globs`,
/// `file_types`, hidden, gitignore, node_modules, `cache`, `max_file_size`)
/// do not apply. Result paths are empty.
pub fn search(content: &[u8], options: &GrepOptions, token: &CancelToken) -> Result<GrepOutcome> {
    token.check()?;
    let matcher = compiled_matcher(&MatcherSpec::of(options))?;
    let shape = Shape::of(options);
    let halt = AtomicBool::new(false);
    let stop = Stop { token, halt: &halt };
    let report =
        search::search_reader(&shape, true, &matcher, content, &stop, b"").map_err(|err| {
            match token.check() {
                Err(stopped) => stopped,
                Ok(()) => Error::new(ErrorKind::Io, format!("in-memory search: {err}")),
            }
        })?;
    // With no callback to take them, results are always kept: taken
    // rather than retained, so none is copied.
    let mut taken = Vec::new();
    let (mut take, mut quiet) = (|found| taken.push(found), |_: &GrepOutcome| {});
    let unretained = GrepOptions {
        retain_matches: false,
        ..options.clone()
    };
    let mut emitter = Emitter::new(&unretained, GrepOutcome::default(), &mut take, &mut quiet);
    emitter.file(b"", report);
    let mut outcome = emitter.outcome;
    outcome.matches = taken;
    Ok(outcome)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod watched_tests;
