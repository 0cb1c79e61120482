//! What a grep is asked: the pattern, where to search, how to match and
//! what to return, with the defaults every front starts from
//! ([`GrepOptions::new`]). Nothing here searches: the modules that do read
//! these options, so they sit below every one of them.

use std::path::PathBuf;

use crate::walk::ScanPolicy;

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
    /// ([`ListSource::Watched`](super::ListSource::Watched)). Otherwise, and when watching is off,
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
    /// [`GrepOutcome::files_skipped_too_large`](super::GrepOutcome::files_skipped_too_large). Default: `None`: every file
    /// is searched whole, whatever its size.
    pub max_file_size: Option<u64>,
    /// Keep a copy of every returned result in [`GrepOutcome::matches`](super::GrepOutcome::matches) as
    /// well as handing it to `on_match`. Set it to `false` when `on_match`
    /// consumes the results, so a search returning millions of them holds
    /// and copies none. Default: `true`.
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
}
