//! What a grep answers: its results, its counters and where its file list
//! came from; and what a listing of the files it would search found. The
//! search fills these in (see `run`); the fronts read them.

use std::{borrow::Cow, path::PathBuf};

use crate::unreadable::Unreadable;

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
    pub(super) fn file(path: &[u8], match_count: u64) -> GrepMatch {
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

/// What [`list_files`](super::list_files) listed.
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
