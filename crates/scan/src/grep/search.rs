//! Searching one file (or one buffer) with `grep-searcher`.
//!
//! Files are never memory-mapped. A small file is read whole in one go (see
//! `read`); a larger one is read through a fixed-size buffer, and every
//! read first polls the cancellation token, so an abort or timeout stops a
//! search inside a multi-gigabyte file within one buffer's worth of work.
//! Every file is searched whole; only `max_file_size`, when the caller sets
//! it, skips (and counts) large files.
//!
//! Binary files follow `rg`, by the rule in [`crate::text`] (the one `read`
//! follows too). A file found by walking a directory stops at its first NUL
//! byte: the file is counted in `binary_files_skipped`, and
//! matches already reported from the blocks before the NUL are kept, as `rg`
//! prints them (a NUL in the first 64 KiB block therefore hides the whole
//! file, and the counter says so). In count mode such a file has no count,
//! as in `rg --count`; in files-with-matches mode a file is done at its
//! first match, so one found before the NUL lists it, as in `rg -l` (an
//! inverted search, like `rg -l -v`, runs on to the NUL and then drops the
//! file). A file
//! the caller named, and an in-memory buffer, are searched whole with NUL bytes kept in the line text, as `rg`
//! reports a file named on its command line.

use std::{
    fs::{File, Metadata},
    io::{self, Read},
    ops::Range,
    sync::atomic::{AtomicBool, Ordering},
};

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{
    Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkFinish, SinkMatch,
};

use super::{
    options::{GrepMode, GrepOptions},
    outcome::GrepMatch,
    read::Opener,
};
use crate::{beneath::Reach, cancel::CancelToken, error::Result, text, unreadable::Unreadable};

/// A second reader of every file a grep searches, beside the library's own
/// results: it sees the searcher's events for the file through a sink of
/// its own and writes what it makes of them, which the search hands out in
/// path order (see [`super::grep_observed`]). ripgrep's printers are sinks
/// of this kind: its JSON Lines printer writes a file's `begin`, `match`,
/// `context` and `end` messages from these events.
pub trait FileObserver: Sync {
    /// Observe the search of the file at `path` (relative to the search
    /// root, as results name it) with `matcher`: call `search` once with
    /// the sink that is to see the file's events, and return the bytes to
    /// hand out for the file. Called on the searching thread.
    fn observe(
        &self,
        path: &[u8],
        matcher: &RegexMatcher,
        search: &mut dyn FnMut(&mut dyn Sink<Error = io::Error>) -> io::Result<()>,
    ) -> io::Result<Vec<u8>>;
}

/// What a search needs besides the matcher; shared by every worker.
#[derive(Clone, Copy)]
pub(super) struct Shape<'a> {
    pub mode: GrepMode,
    pub multiline: bool,
    /// Report the lines that do not match (`rg -v`).
    pub invert: bool,
    /// One result per match (`rg -o`).
    pub only_matching: bool,
    pub context_before: usize,
    pub context_after: usize,
    pub max_columns: Option<usize>,
    /// Most matches any one file can contribute to the result (see
    /// [`super::run`]); `None` searches every file to its end.
    pub per_file_cap: Option<u64>,
    /// The caller's own cap on each file's matching lines (`rg -m`).
    pub max_per_file: Option<u64>,
    pub max_file_size: Option<u64>,
    /// Sees every searched file's events too.
    pub observer: Option<&'a dyn FileObserver>,
}

impl Shape<'_> {
    /// The shape `options` ask for, seen by no observer.
    pub(super) fn of(options: &GrepOptions) -> Shape<'static> {
        // A file can never contribute more than `offset + max_count + 1`
        // results (the last one proves the limit), so no file is searched,
        // or held in memory, beyond that.
        let per_file_cap = options.max_count.map(|max| {
            let needed = options.offset.saturating_add(max).saturating_add(1);
            u64::try_from(needed).unwrap_or(u64::MAX)
        });
        Shape {
            mode: options.mode,
            multiline: options.multiline,
            invert: options.invert_match,
            only_matching: options.only_matching,
            context_before: options.context_before,
            context_after: options.context_after,
            max_columns: options.max_columns,
            per_file_cap,
            max_per_file: options.max_count_per_file,
            max_file_size: options.max_file_size,
            observer: None,
        }
    }

    /// A searcher for this shape; `explicit` for a file the caller named.
    pub(super) fn searcher(&self, explicit: bool) -> Searcher {
        let content = self.mode == GrepMode::Content;
        let needed = match self.mode {
            GrepMode::Content => self.per_file_cap,
            // An inverted search is not cut short (see `binary_hides_file`).
            GrepMode::FilesWithMatches if self.invert => None,
            GrepMode::FilesWithMatches => Some(1),
            GrepMode::Count => None,
        };
        let cap = match (needed, self.max_per_file) {
            (Some(needed), Some(max)) => Some(needed.min(max)),
            (needed, max) => needed.or(max),
        };
        text::configure(&mut SearcherBuilder::new(), explicit)
            .line_number(true)
            .multi_line(self.multiline)
            .invert_match(self.invert)
            .before_context(if content { self.context_before } else { 0 })
            .after_context(if content { self.context_after } else { 0 })
            .max_matches(cap)
            .build()
    }

    /// Whether a reported record counts its matches rather than once: a
    /// multi-line record or an only-matching one, but never an inverted
    /// line, which holds no match.
    fn counts_matches(&self) -> bool {
        !self.invert && (self.multiline || self.only_matching)
    }

    /// Whether a walked file whose search stopped at a NUL byte has no
    /// per-file result: in count mode (as `rg --count`), and in inverted
    /// files-with-matches mode, which `rg -l -v` runs to the file's end (or
    /// its NUL) rather than stopping at the first line, and so drops such a
    /// file as it drops its count.
    pub(super) fn binary_hides_file(&self) -> bool {
        match self.mode {
            GrepMode::Count => true,
            GrepMode::FilesWithMatches => self.invert,
            GrepMode::Content => false,
        }
    }

    /// Whether each match of a record is a result of its own.
    fn splits_matches(&self) -> bool {
        self.only_matching && !self.invert
    }
}

/// What searching one file produced.
#[derive(Clone, Debug, Default)]
pub(super) struct FileReport {
    /// Content mode: the matches, paths not yet set.
    pub matches: Vec<GrepMatch>,
    /// Content mode: the results (matching lines, a multi-line match
    /// counting once, or with only-matching the matches); count mode: the
    /// matching lines, or in multiline or only-matching mode the matches.
    pub count: u64,
    pub searched: bool,
    pub binary: bool,
    pub too_large: bool,
    /// The file could not be opened or read: its path and why.
    pub unreadable: Option<Unreadable>,
    /// What the [`FileObserver`] wrote for the file.
    pub observed: Vec<u8>,
}

impl FileReport {
    /// The results it offers: its matches in content mode, one (the file)
    /// in the others.
    pub fn results(&self) -> u64 {
        if self.count == 0 {
            return 0;
        }
        (self.matches.len() as u64).max(1)
    }

    /// About how many bytes the report holds in memory (its results, their
    /// text and context), for bounding what waits to be emitted.
    pub fn held_bytes(&self) -> usize {
        let text = |lines: &[(u64, String)]| -> usize {
            lines
                .iter()
                .map(|(_, line)| line.len() + size_of::<(u64, String)>())
                .sum()
        };
        let results: usize = self
            .matches
            .iter()
            .map(|found| {
                size_of::<GrepMatch>()
                    + found.line.len()
                    + text(&found.context_before)
                    + text(&found.context_after)
            })
            .sum();
        results + self.observed.len()
    }
}

/// Why a search stopped early: the caller's token, or the run no longer
/// needing this file.
pub(super) struct Stop<'a> {
    pub token: &'a CancelToken,
    pub halt: &'a AtomicBool,
}

impl Stop<'_> {
    fn check_io(&self) -> io::Result<()> {
        if self.halt.load(Ordering::Relaxed) || self.token.is_stopped() {
            return Err(io::Error::other("search stopped"));
        }
        Ok(())
    }
}

/// A reader that polls [`Stop`] before every read.
struct Interruptible<'a, R> {
    inner: R,
    stop: &'a Stop<'a>,
}

impl<R: Read> Read for Interruptible<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stop.check_io()?;
        self.inner.read(buf)
    }
}

/// Search the file at `relative` (see [`Opener`]). Files that cannot be
/// opened or read (gone since the scan, no permission, no longer a regular
/// file) are reported as unreadable, with why; for a file the caller named
/// they are an error instead. A stop is reported as the token's error (or, after a
/// halt, as an empty report nobody will read).
pub(super) fn search_file(
    (searcher, matcher, shape): (&mut Searcher, &RegexMatcher, &Shape),
    opener: &mut Opener<'_>,
    (relative, explicit): (&[u8], bool),
    stop: &Stop<'_>,
    before_stream: &mut dyn FnMut(),
) -> Result<FileReport> {
    let searched = match open_file(opener, shape, relative, explicit, stop)? {
        Opened::Content(content, _) => search_slice(searcher, matcher, shape, content, relative),
        Opened::Stream(file) => {
            before_stream();
            search_reader(shape, explicit, matcher, file, stop, relative)
        }
        Opened::Done(report) => return Ok(report),
    };
    settle(searched, opener, relative, explicit, stop)
}

/// A candidate once opened: its whole content (a small file) with what
/// `fstat` said of it, the file to stream, or already its report
/// (unreadable, too large).
pub(super) enum Opened<'a> {
    Content(&'a [u8], Metadata),
    Stream(File),
    Done(FileReport),
}

/// Open `relative` and read it whole if it is small (see [`Opener`]).
pub(super) fn open_file<'o>(
    opener: &'o mut Opener<'_>,
    shape: &Shape,
    relative: &[u8],
    explicit: bool,
    stop: &Stop<'_>,
) -> Result<Opened<'o>> {
    stop.token.check()?;
    let (mut file, metadata) = match opener.open(relative) {
        Ok(opened) => opened,
        Err(err) => return unreadable(explicit, opener, relative, err).map(Opened::Done),
    };
    let size = metadata.len();
    if shape.max_file_size.is_some_and(|max| size > max) {
        return Ok(Opened::Done(FileReport {
            too_large: true,
            ..FileReport::default()
        }));
    }
    match opener.read_small(&mut file, size) {
        Ok(true) => Ok(Opened::Content(opener.content(), metadata)),
        Ok(false) => Ok(Opened::Stream(file)),
        Err(err) => unreadable(explicit, opener, relative, err).map(Opened::Done),
    }
}

/// The report of a search of `relative`, or why it has none (see
/// [`search_file`]).
pub(super) fn settle(
    searched: io::Result<FileReport>,
    opener: &Opener<'_>,
    relative: &[u8],
    explicit: bool,
    stop: &Stop<'_>,
) -> Result<FileReport> {
    match searched {
        Ok(report) => Ok(report),
        Err(err) => {
            stop.token.check()?;
            if stop.halt.load(Ordering::Relaxed) {
                return Ok(FileReport::default());
            }
            unreadable(explicit, opener, relative, err)
        }
    }
}

/// The report for the file at `relative` that could not be opened or
/// read: named with why for a walked file, an error for one the caller
/// named. Below a confined root, only what is there is named: a file gone
/// is no report at all (a walk led out through a link may have listed it),
/// and a link in the way is named in its place.
fn unreadable(
    explicit: bool,
    opener: &Opener<'_>,
    relative: &[u8],
    err: io::Error,
) -> Result<FileReport> {
    if explicit {
        return Err(crate::error::Error::io(&opener.path_of(relative), err));
    }
    let unreadable = match opener.reach(relative) {
        None | Some(Reach::Here) => Unreadable::new(relative, &err),
        Some(Reach::Gone) => return Ok(FileReport::default()),
        Some(Reach::Blocked(blocked)) => blocked,
    };
    Ok(FileReport {
        unreadable: Some(unreadable),
        ..FileReport::default()
    })
}

/// Search any reader, polling `stop` before every read; the report is
/// marked searched. `explicit` for a file the caller named; `path` names
/// it to the shape's observer.
///
/// Each stream gets a searcher of its own: a searcher's buffer grows to
/// hold the longest line it has met and keeps that size, and its first
/// fill is what binary detection judges whole, so a reused one would hide
/// a file whose NUL lies past the first 64 KiB, or not, depending on which
/// files the same worker searched before.
pub(super) fn search_reader(
    shape: &Shape<'_>,
    explicit: bool,
    matcher: &RegexMatcher,
    reader: impl Read,
    stop: &Stop<'_>,
    path: &[u8],
) -> io::Result<FileReport> {
    let mut reader = Some(Interruptible {
        inner: reader,
        stop,
    });
    let mut searcher = shape.searcher(explicit);
    observed(shape, matcher, path, &mut |sink| match reader.take() {
        Some(reader) => searcher.search_reader(matcher, reader, sink),
        None => Err(io::Error::other("a file is searched once")),
    })
}

/// Search content already in memory; the report is marked searched.
pub(super) fn search_slice(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    shape: &Shape<'_>,
    content: &[u8],
    path: &[u8],
) -> io::Result<FileReport> {
    observed(shape, matcher, path, &mut |sink| {
        searcher.search_slice(matcher, content, sink)
    })
}

/// Run `search` with the sink that collects the report, the shape's
/// observer (if any) seeing every event too.
fn observed(
    shape: &Shape<'_>,
    matcher: &RegexMatcher,
    path: &[u8],
    search: &mut dyn FnMut(&mut Collect<'_>) -> io::Result<()>,
) -> io::Result<FileReport> {
    let Some(observer) = shape.observer else {
        let mut sink = Collect::new(shape, matcher, None);
        search(&mut sink)?;
        return Ok(sink.report);
    };
    let mut report = None;
    let observed = observer.observe(path, matcher, &mut |also| {
        let mut sink = Collect::new(shape, matcher, Some(also));
        search(&mut sink)?;
        report = Some(sink.report);
        Ok(())
    })?;
    let mut report = report.ok_or_else(|| io::Error::other("the observer did not search"))?;
    report.observed = observed;
    Ok(report)
}

/// The sink: turns searcher events into [`GrepMatch`]es.
///
/// Context lines are never repeated: a line before a match is attached to
/// that match, a line after one to it, and a line between two close matches
/// goes to whichever of them the searcher reports it for (the earlier match
/// while it is within `context_after`), exactly once, as `rg` prints it.
///
/// An observer's sink (`also`) sees every event first; the search goes on
/// while both want more.
struct Collect<'a> {
    shape: &'a Shape<'a>,
    matcher: &'a RegexMatcher,
    report: FileReport,
    before: Vec<(u64, Clipped)>,
    also: Option<&'a mut dyn Sink<Error = io::Error>>,
}

impl<'a> Collect<'a> {
    fn new(
        shape: &'a Shape<'a>,
        matcher: &'a RegexMatcher,
        also: Option<&'a mut dyn Sink<Error = io::Error>>,
    ) -> Collect<'a> {
        Collect {
            shape,
            matcher,
            report: FileReport {
                searched: true,
                ..FileReport::default()
            },
            before: Vec::new(),
            also,
        }
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, searcher: &Searcher, found: &SinkMatch<'_>) -> io::Result<bool> {
        let also = match &mut self.also {
            Some(also) => also.matched(searcher, found)?,
            None => true,
        };
        Ok(self.collect_match(found)? && also)
    }

    fn context(&mut self, searcher: &Searcher, context: &SinkContext<'_>) -> io::Result<bool> {
        let also = match &mut self.also {
            Some(also) => also.context(searcher, context)?,
            None => true,
        };
        self.collect_context(context);
        Ok(also)
    }

    fn context_break(&mut self, searcher: &Searcher) -> io::Result<bool> {
        match &mut self.also {
            Some(also) => also.context_break(searcher),
            None => Ok(true),
        }
    }

    fn binary_data(&mut self, searcher: &Searcher, offset: u64) -> io::Result<bool> {
        match &mut self.also {
            Some(also) => also.binary_data(searcher, offset),
            None => Ok(true),
        }
    }

    fn begin(&mut self, searcher: &Searcher) -> io::Result<bool> {
        match &mut self.also {
            Some(also) => also.begin(searcher),
            None => Ok(true),
        }
    }

    fn finish(&mut self, searcher: &Searcher, finish: &SinkFinish) -> io::Result<()> {
        self.report.binary = finish.binary_byte_offset().is_some();
        match &mut self.also {
            Some(also) => also.finish(searcher, finish),
            None => Ok(()),
        }
    }
}

impl Collect<'_> {
    /// Take a reported match; `false` once the file needs no more.
    fn collect_match(&mut self, found: &SinkMatch<'_>) -> io::Result<bool> {
        match self.shape.mode {
            GrepMode::Content if self.shape.splits_matches() => {
                let first_line = found.line_number().unwrap_or(0);
                let buffer = found.buffer();
                let start = found.bytes_range_in_buffer().start;
                for range in matches_in(self.matcher, found, self.shape.multiline)? {
                    let lines_before = memchr::memchr_iter(b'\n', &buffer[start..range.start]);
                    self.push(first_line + lines_before.count() as u64, &buffer[range]);
                }
                Ok(true)
            }
            GrepMode::Content => {
                self.push(found.line_number().unwrap_or(0), found.bytes());
                Ok(true)
            }
            GrepMode::Count if self.shape.counts_matches() => {
                let matches = matches_in(self.matcher, found, self.shape.multiline)?.len();
                // The searcher reported a match, so there is at least one.
                self.report.count += matches.max(1) as u64;
                Ok(true)
            }
            GrepMode::Count => {
                self.report.count += 1;
                Ok(true)
            }
            GrepMode::FilesWithMatches => {
                self.report.count += 1;
                Ok(self.shape.invert)
            }
        }
    }

    /// Take a reported context line.
    fn collect_context(&mut self, context: &SinkContext<'_>) {
        let (text, truncated) = line_text(context.bytes(), self.shape.max_columns);
        let number = context.line_number().unwrap_or(0);
        match context.kind() {
            SinkContextKind::Before => self.before.push((number, Clipped { text, truncated })),
            SinkContextKind::After => {
                if let Some(last) = self.report.matches.last_mut() {
                    last.truncated |= truncated;
                    last.context_after.push((number, text));
                }
            }
            SinkContextKind::Other => {}
        }
    }

    /// Add a content result at `line_number` with `bytes` as its text, the
    /// context lines gathered before it attached.
    fn push(&mut self, line_number: u64, bytes: &[u8]) {
        let (line, truncated) = line_text(bytes, self.shape.max_columns);
        let before = std::mem::take(&mut self.before);
        self.report.count += 1;
        self.report.matches.push(GrepMatch {
            path: Vec::new(),
            line_number,
            line,
            truncated: truncated || before.iter().any(|(_, l)| l.truncated),
            context_before: before.into_iter().map(|(n, l)| (n, l.text)).collect(),
            context_after: Vec::new(),
            match_count: 0,
        });
    }
}

/// The matches inside one reported record, as ranges of its buffer, found
/// as `rg -o` and `rg --count-matches` find them: a match belongs to the
/// record when it starts inside it, empty matches included; a single line
/// is searched without its line terminator, so nothing looking past the
/// line's end sees it, while a multi-line record is searched as it stands.
fn matches_in(
    matcher: &RegexMatcher,
    found: &SinkMatch<'_>,
    multiline: bool,
) -> io::Result<Vec<Range<usize>>> {
    let record = found.bytes_range_in_buffer();
    let buffer = found.buffer();
    let mut end = record.end;
    if !multiline && buffer[..end].ends_with(b"\n") {
        end -= 1;
    }
    let mut ranges = Vec::new();
    matcher
        .find_iter_at(&buffer[..end], record.start, |found| {
            let inside = found.start() < record.end;
            if inside {
                ranges.push(found.start()..found.end());
            }
            inside
        })
        .map_err(io::Error::other)?;
    Ok(ranges)
}

/// A context line's text before it is attached to its match.
#[derive(Debug)]
struct Clipped {
    text: String,
    truncated: bool,
}

/// `bytes` as text, invalid UTF-8 replaced by U+FFFD. Valid text (nearly
/// every line) is checked by `str::from_utf8`, which skips ASCII a word at
/// a time; the replacing decoder goes byte by byte and cost a sixth of a
/// search returning 180 MB of minified lines.
fn lossy_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The text of a line (or of the lines a multi-line match spans): the final
/// `\n` is dropped, a `\r` before it is kept (as `rg` reports it), invalid
/// UTF-8 becomes U+FFFD, and beyond `max_columns` characters the text is
/// cut on a character boundary (`true` when cut).
pub(super) fn line_text(bytes: &[u8], max_columns: Option<usize>) -> (String, bool) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let text = lossy_text(bytes);
    match max_columns.and_then(|max| text.char_indices().nth(max)) {
        Some((cut, _)) => (text[..cut].to_string(), true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::line_text;

    #[test]
    fn line_text_keeps_valid_text_and_replaces_invalid_bytes() {
        let cases: &[(&[u8], Option<usize>, &str, bool)] = &[
            (b"plain\n", None, "plain", false),
            (b"crlf\r\n", None, "crlf\r", false),
            (
                "caf\u{e9} \u{1f600}\n".as_bytes(),
                None,
                "caf\u{e9} \u{1f600}",
                false,
            ),
            (b"caf\xe9 latin-1\n", None, "caf\u{fffd} latin-1", false),
            (b"\xff\xfe", None, "\u{fffd}\u{fffd}", false),
            (b"ab\xe9cd\n", Some(3), "ab\u{fffd}", true),
            (
                "\u{e9}\u{e9}\u{e9}".as_bytes(),
                Some(2),
                "\u{e9}\u{e9}",
                true,
            ),
            (b"short", Some(5), "short", false),
        ];
        for &(bytes, max_columns, text, truncated) in cases {
            assert_eq!(
                line_text(bytes, max_columns),
                (text.to_string(), truncated),
                "{bytes:?} cut at {max_columns:?}"
            );
        }
    }
}
