//! Bindings for `grep`, the in-memory `search` and `hasMatch`
//! (`natives_scan::grep`).
//!
//! Results cross the boundary as columns ([`GrepColumns`]): a search with
//! hundreds of thousands of matching lines spent more time creating one JS
//! object per result, with a string per field, than finding them. Paths
//! and lines travel as a few long strings ([`crate::chunks`]), numbers as
//! typed arrays, and the TypeScript layer builds the `GrepMatch[]` the API
//! promises.

use std::path::PathBuf;

use napi::{
    Env, Status,
    bindgen_prelude::{
        AsyncTask, Buffer, Either, Float64Array, Uint8Array, Uint32Array, Utf16String,
    },
    threadsafe_function::ThreadsafeFunction,
};
use napi_derive::napi;
use natives_scan::{
    CancelToken as LibraryToken, Error, cache,
    grep::{
        GrepMatch, GrepMode as LibraryMode, GrepOptions, GrepOutcome,
        HasMatchOptions as LibraryMatchOptions,
    },
};

use crate::{
    alloc,
    cancel::CancelToken,
    chunks::{Chunks, JsChunk},
    errors::{self, on_js_thread},
    options::{count, given, listed},
    pace::{Outlet, StreamPacer},
    scan::{UnreadablePath, unreadable_paths},
    stream::{Batch, BatchCallback, Receiver, stream},
    task::{Work, cancellable_task},
};

/// Options for the native `grep` and `search`; the TypeScript layer
/// documents them and supplies `path`.
#[napi(object)]
#[cfg_attr(test, derive(Default))]
pub struct NativeGrepOptions {
    /// Regular expression (or literal text with `literal`).
    pub pattern: String,
    /// File or directory to search (grep only), absolute or relative to the
    /// cwd (a byte of a name that is not UTF-8 as the lone surrogate
    /// U+DC00 + byte).
    pub path: Option<Utf16String>,
    /// Only files these globs select (`*.ts`; `!` excludes), as `rg -g`
    /// repeated: any glob without `!` selects, a later `!` glob excludes.
    pub glob: Option<Either<String, Vec<String>>>,
    /// Only files of these types (`rust`, `ts`, ...; any of them), from
    /// ripgrep's type list, as `rg -t` repeated.
    #[napi(js_name = "type")]
    pub file_type: Option<Either<String, Vec<String>>>,
    /// Never files of these types, as `rg -T` repeated.
    pub type_not: Option<Either<String, Vec<String>>>,
    /// Case-insensitive (default false).
    pub ignore_case: Option<bool>,
    /// Case-insensitive unless the pattern has an uppercase letter (default false).
    pub smart_case: Option<bool>,
    /// The pattern is literal text (default false).
    pub literal: Option<bool>,
    /// Matches may span lines (default false).
    pub multiline: Option<bool>,
    /// Only matches surrounded by word boundaries, as `rg -w` (default false).
    pub word_regexp: Option<bool>,
    /// Report the lines that do not match, as `rg -v` (default false).
    pub invert_match: Option<bool>,
    /// One result per match, its text alone, as `rg -o` (default false).
    pub only_matching: Option<bool>,
    /// Search dot-files (default false, as every search).
    pub hidden: Option<bool>,
    /// Honour .gitignore/.ignore (default true).
    pub gitignore: Option<bool>,
    /// Search node_modules (default: only if `glob` names it).
    pub include_node_modules: Option<bool>,
    /// Lines of context before and after each match (default 0).
    pub context: Option<f64>,
    /// Lines of context before each match (overrides `context`).
    pub context_before: Option<f64>,
    /// Lines of context after each match (overrides `context`).
    pub context_after: Option<f64>,
    /// Return at most this many results (default: all).
    pub max_count: Option<f64>,
    /// Skip this many results first (default 0).
    pub offset: Option<f64>,
    /// Cut lines at this many characters and mark them truncated.
    pub max_columns: Option<f64>,
    /// What each result is (default `content`).
    pub mode: Option<GrepMode>,
    /// Use the shared scan cache (default false).
    pub cache: Option<bool>,
    /// With `cache`, use it only while it follows filesystem events without
    /// fallback, else walk fresh (default false).
    pub watched_only: Option<bool>,
    /// Stay beneath `path`, a real path: nothing is read or named through
    /// a link (default false).
    pub confine: Option<bool>,
    /// Skip (and count) files larger than this many bytes (default: none).
    pub max_file_size: Option<f64>,
    /// Keep the results in the answer as well as streaming them (default
    /// true; the TypeScript layer keeps what it streams).
    pub retain_matches: Option<bool>,
    /// Fail with `ETIMEDOUT` after this many milliseconds.
    pub timeout_ms: Option<f64>,
}

/// What each grep result is.
#[napi(string_enum = "camelCase")]
pub enum GrepMode {
    /// A result per matching line, with its text and context.
    Content,
    /// A result per file with matches, with its count of matching lines.
    Count,
    /// A result per file with matches: its path alone.
    FilesWithMatches,
}

impl From<GrepMode> for LibraryMode {
    fn from(mode: GrepMode) -> LibraryMode {
        match mode {
            GrepMode::Content => LibraryMode::Content,
            GrepMode::Count => LibraryMode::Count,
            GrepMode::FilesWithMatches => LibraryMode::FilesWithMatches,
        }
    }
}

/// Results as columns. Every result has a path (by index), a line number,
/// a line, some lines of context before and after it, a truncation mark
/// and a count; its text pieces (the lines before, its line, the lines
/// after) follow one another in `text`.
#[napi(object, object_from_js = false)]
pub struct GrepColumns {
    /// The paths results are in, in order, each once per run of results
    /// in it, joined by `\0` within each chunk (a byte of a name that is not
    /// UTF-8 as the lone surrogate U+DC00 + byte); relative to the search
    /// root, `/`-separated.
    #[napi(ts_type = "string[]")]
    pub paths: Vec<JsChunk>,
    /// Per result: the index of its path in `paths` (across chunks).
    pub path_indices: Uint32Array,
    /// Per result: its 1-based line number; 0 in `count` and
    /// `filesWithMatches` modes.
    pub line_numbers: Float64Array,
    /// Every line of text, concatenated in chunks: per result, its context
    /// lines before, its line, its context lines after.
    #[napi(ts_type = "string[]")]
    pub text: Vec<JsChunk>,
    /// Pieces (lines) in each chunk of `text`.
    pub text_pieces: Uint32Array,
    /// Length of each piece of `text`, in UTF-16 code units; a piece alone
    /// in its chunk is the whole chunk (its length here may be 0).
    pub text_lengths: Uint32Array,
    /// Per result: its lines of context before.
    pub context_before: Uint32Array,
    /// Per result: its lines of context after.
    pub context_after: Uint32Array,
    /// The line number of every context line, in `text` order.
    pub context_line_numbers: Float64Array,
    /// Per result: 1 when `maxColumns` cut its line or context.
    pub truncated: Uint8Array,
    /// Per result: `count` mode's count of matching lines; 0 otherwise.
    pub match_counts: Float64Array,
}

/// [`GrepColumns`] under construction (plain vectors: sendable across
/// threads).
#[derive(Default)]
struct ColumnBuilder {
    paths: Chunks,
    /// The path pushed last, and how many were pushed.
    last_path: Option<Vec<u8>>,
    paths_pushed: u32,
    path_indices: Vec<u32>,
    line_numbers: Vec<f64>,
    text: Chunks,
    text_lengths: Vec<u32>,
    context_before: Vec<u32>,
    context_after: Vec<u32>,
    context_line_numbers: Vec<f64>,
    truncated: Vec<u8>,
    match_counts: Vec<f64>,
}

impl ColumnBuilder {
    fn push_path(&mut self, path: &[u8]) {
        if self.last_path.as_deref() != Some(path) {
            self.paths.push(path, Some(0));
            self.last_path = Some(path.to_vec());
            self.paths_pushed += 1;
        }
        self.path_indices.push(self.paths_pushed - 1);
    }

    fn push_text(&mut self, line: String) {
        let ascii = line.is_ascii();
        // A line alone in its chunk is as long as the chunk: JS needs no
        // count of it, which for the long non-ASCII lines of minified files
        // took a twentieth of a dense search.
        let units = match ascii {
            true => line.len(),
            false if Chunks::stands_alone(line.len()) => 0,
            false => utf16_len(&line),
        };
        self.text_lengths.push(units as u32);
        self.text.push_text(line, ascii);
    }

    fn push_context(&mut self, lines: Vec<(u64, String)>) -> u32 {
        let count = lines.len() as u32;
        for (number, line) in lines {
            self.context_line_numbers.push(number as f64);
            self.push_text(line);
        }
        count
    }
}

impl Batch for ColumnBuilder {
    type Item<'a> = GrepMatch;
    type Js = GrepColumns;

    fn push(&mut self, found: GrepMatch) {
        self.push_path(&found.path);
        self.line_numbers.push(found.line_number as f64);
        let before = self.push_context(found.context_before);
        self.context_before.push(before);
        self.push_text(found.line);
        let after = self.push_context(found.context_after);
        self.context_after.push(after);
        self.truncated.push(u8::from(found.truncated));
        self.match_counts.push(found.match_count as f64);
    }

    fn len(&self) -> usize {
        self.line_numbers.len()
    }

    fn finish(self) -> GrepColumns {
        let (text, text_pieces) = self.text.finish();
        GrepColumns {
            paths: self.paths.finish().0,
            path_indices: Uint32Array::new(self.path_indices),
            line_numbers: Float64Array::new(self.line_numbers),
            text,
            text_pieces: Uint32Array::new(text_pieces),
            text_lengths: Uint32Array::new(self.text_lengths),
            context_before: Uint32Array::new(self.context_before),
            context_after: Uint32Array::new(self.context_after),
            context_line_numbers: Float64Array::new(self.context_line_numbers),
            truncated: Uint8Array::new(self.truncated),
            match_counts: Float64Array::new(self.match_counts),
        }
    }
}

/// The length of `text` in UTF-16 code units: one per character, two for
/// a character of four UTF-8 bytes. ASCII (most lines, which callers that
/// know it measure by their byte length) is its byte length; otherwise
/// bytes are counted (every byte but a continuation byte starts a
/// character, a lead byte of 0xF0 or above a four-byte one) in runs short
/// enough for byte-wide counters, which the compiler vectorises; walking
/// `chars` took a twelfth of a dense search of minified files.
fn utf16_len(text: &str) -> usize {
    /// Each byte adds at most 2, so a run's count fits in a `u8`.
    const RUN: usize = 127;
    if text.is_ascii() {
        return text.len();
    }
    let units = |run: &[u8]| -> u8 {
        run.iter()
            .map(|&byte| u8::from(byte & 0xC0 != 0x80) + u8::from(byte >= 0xF0))
            .sum()
    };
    text.as_bytes()
        .chunks(RUN)
        .map(|run| usize::from(units(run)))
        .sum()
}

fn columns(matches: impl IntoIterator<Item = GrepMatch>) -> GrepColumns {
    let mut builder = ColumnBuilder::default();
    matches.into_iter().for_each(|found| builder.push(found));
    builder.finish()
}

/// What the native `grep` and `search` resolve with.
#[napi(object, object_from_js = false)]
pub struct NativeGrepResult {
    /// The results; empty when they were streamed through `onBatch`.
    pub matches: GrepColumns,
    /// Results before `offset`/`maxCount`: matching lines (content), summed
    /// counts (count) or files (filesWithMatches).
    pub total_matches: f64,
    /// Files with at least one match.
    pub files_with_matches: f64,
    /// Files searched.
    pub files_searched: f64,
    /// Files skipped as binary (a NUL byte), as ripgrep skips them.
    pub binary_files_skipped: f64,
    /// Files skipped for being larger than `maxFileSize`.
    pub files_skipped_too_large: f64,
    /// Files that vanished or could not be read between scan and search.
    pub files_unreadable: f64,
    /// What the search could not enter or read (directories it could not
    /// list, the files counted in `filesUnreadable`), in path order.
    pub unreadable: Vec<UnreadablePath>,
    /// `true` when `maxCount` cut results off.
    pub limit_reached: bool,
    /// `path` named one file (results carry its name) rather than a directory.
    pub path_is_file: bool,
    /// Where the file list came from: `walked`, `cached` or `watched`.
    pub source: String,
    /// How many batches were streamed through `onBatch`.
    pub batches: u32,
    /// How many groups of `matches.text` chunks were handed to `onText`
    /// before this answer: they come before `matches.text`, in order.
    pub text_batches: u32,
}

fn to_js_result(outcome: &GrepOutcome, matches: GrepColumns, batches: u32) -> NativeGrepResult {
    NativeGrepResult {
        matches,
        total_matches: outcome.total_matches as f64,
        files_with_matches: outcome.files_with_matches as f64,
        files_searched: outcome.files_searched as f64,
        binary_files_skipped: outcome.binary_files_skipped as f64,
        files_skipped_too_large: outcome.files_skipped_too_large as f64,
        files_unreadable: outcome.files_unreadable as f64,
        unreadable: unreadable_paths(&outcome.unreadable),
        limit_reached: outcome.limit_reached,
        path_is_file: outcome.path_is_file,
        source: outcome.source.name().to_string(),
        batches,
        text_batches: 0,
    }
}

/// Search file contents under `path` (a directory or one file) with
/// ripgrep's rules, in path then line order. `onBatch`, when given, receives
/// the results in batches as they are decided (and the result's `matches`
/// is then empty); with `pacer`, a batch waits for room in the consumer's
/// window (see `StreamPacer`). Without `onBatch`, `onText`, when given,
/// receives the answer's text chunks as they fill, so JS makes their strings
/// while the search goes on (see `NativeGrepResult.textBatches`). Rejects
/// with an `Error` whose `code` is `ENOENT`, `ENOTDIR`, `EACCES`, `EINVAL`
/// (bad regex, type or option), `ABORT_ERR` or `ETIMEDOUT`.
#[napi(js_name = "nativeGrep", ts_return_type = "Promise<NativeGrepResult>")]
pub fn native_grep(
    options: NativeGrepOptions,
    token: Option<&CancelToken>,
    on_batch: Option<ThreadsafeFunction<GrepColumns, (), GrepColumns, Status, false>>,
    pacer: Option<&StreamPacer>,
    #[napi(ts_arg_type = "((texts: string[]) => void) | undefined | null")] on_text: Option<
        BatchCallback<Vec<JsChunk>>,
    >,
) -> AsyncTask<Work<NativeGrepResult>> {
    let outlet = Outlet::new(on_batch, pacer);
    cancellable_task(
        token,
        options.timeout_ms,
        || convert_options(options),
        move |options, token| run_grep(options, &token, outlet.as_ref(), on_text.as_ref()),
    )
}

/// Text past which the answer's complete chunks are handed to JS while the
/// search goes on: a dense search of the bench's `npm` tree makes 161 M
/// characters of lines, and making their strings took the JS thread 80 to
/// 150 ms after the search; handed over as they fill, that work overlaps the
/// search. Past a megabyte, a hand-over costs JS a wake-up per 16 chunks.
const TEXT_HANDED_AT: usize = 1 << 20;

/// `nativeGrep`'s answer when the search can be answered at once, on this
/// thread (see `natives_scan::grep::grep_at_once`: a first page from a
/// watched cache, within about a millisecond); `null` when it cannot, or
/// the options are bad, and `nativeGrep` must search (and report why).
#[napi(js_name = "nativeGrepAtOnce")]
pub fn native_grep_at_once(options: NativeGrepOptions) -> Option<NativeGrepResult> {
    // Nothing can cancel a call that holds the JS thread: only its deadline.
    let token = CancelToken::for_call(None, options.timeout_ms).ok()?;
    let options = convert_options(options).ok()?;
    let answered = errors::guarded(|| {
        let outcome = natives_scan::grep::grep_at_once(&options, cache::global(), &token);
        Ok(outcome.map(|mut outcome| {
            let matches = std::mem::take(&mut outcome.matches);
            let columns = match options.retain_matches {
                true => columns(matches),
                false => ColumnBuilder::default().finish(),
            };
            to_js_result(&outcome, columns, 0)
        }))
    });
    answered.ok().flatten()
}

/// The search itself, off the JS thread: results into the answer, or
/// streamed to `on_batch`. The library holds no result either way: each one
/// goes into columns as it is decided and is then dropped (holding every line
/// until the end and then copying it made a dense search fault in twice the
/// memory).
fn run_grep(
    mut options: GrepOptions,
    token: &LibraryToken,
    outlet: Option<&Outlet<GrepColumns>>,
    text_out: Option<&BatchCallback<Vec<JsChunk>>>,
) -> Result<NativeGrepResult, Error> {
    let keep = std::mem::replace(&mut options.retain_matches, false);
    let mut holder = PageHolder::default();
    let mut grep = |on_match: &mut dyn FnMut(GrepMatch)| {
        natives_scan::grep::grep(&options, cache::global(), token, &mut |found| {
            holder.note(&found);
            on_match(found)
        })
    };
    Ok(match outlet {
        Some(outlet) => {
            let receiver = outlet.paced(token);
            let (outcome, batches) = stream::<ColumnBuilder, _>(&receiver, |streamer| {
                grep(&mut |found| streamer.push(found))
            });
            let outcome = outcome?;
            receiver.interrupted()?;
            to_js_result(&outcome, ColumnBuilder::default().finish(), batches)
        }
        None => {
            let mut builder = ColumnBuilder::default();
            let mut handed = TextHanded::default();
            let outcome = grep(&mut |found| {
                if keep {
                    builder.push(found);
                    handed.offer(&mut builder.text, text_out);
                }
            })?;
            let text_batches = handed.count()?;
            NativeGrepResult {
                text_batches,
                ..to_js_result(&outcome, builder.finish(), 0)
            }
        }
    })
}

/// The groups of an answer's text chunks handed to JS so far.
#[derive(Default)]
struct TextHanded {
    count: u32,
    /// A hand-over failed: its chunks are lost, and so is the answer.
    lost: bool,
}

impl TextHanded {
    /// Hand `text`'s complete chunks to `out` once they pass
    /// [`TEXT_HANDED_AT`] bytes.
    fn offer(&mut self, text: &mut Chunks, out: Option<&BatchCallback<Vec<JsChunk>>>) {
        let Some(out) = out else { return };
        if self.lost || text.complete_bytes() < TEXT_HANDED_AT {
            return;
        }
        match out.deliver(text.take_complete()) {
            true => self.count += 1,
            false => self.lost = true,
        }
    }

    /// How many groups were handed over, or why the answer cannot be given.
    fn count(self) -> Result<u32, Error> {
        match self.lost {
            false => Ok(self.count),
            true => Err(Error::new(
                natives_scan::ErrorKind::Io,
                "the search's text could not be handed to JS",
            )),
        }
    }
}

/// Result text past which a search holds freed pages until it ends (see
/// [`alloc::hold_pages`]): one returning less frees too little for purges to
/// cost much, and should not pay for the collection at the end of a hold.
const HOLD_PAGES_AFTER: usize = 8 << 20;

/// Holds freed pages once a search's results pass [`HOLD_PAGES_AFTER`]
/// bytes of text, until it is dropped.
#[derive(Default)]
struct PageHolder {
    text: usize,
    held: Option<alloc::PagesHeld>,
}

impl PageHolder {
    fn note(&mut self, found: &GrepMatch) {
        let context = found.context_before.iter().chain(&found.context_after);
        self.text += found.line.len() + context.map(|(_, line)| line.len()).sum::<usize>();
        if self.held.is_none() && self.text > HOLD_PAGES_AFTER {
            self.held = Some(alloc::hold_pages());
        }
    }
}

/// Search `content` in memory, as one file (path options do not apply).
/// Throws an `Error` with code `EINVAL` for a bad regex or option.
#[napi(js_name = "nativeSearch")]
pub fn native_search(
    env: Env,
    content: Either<String, Buffer>,
    options: NativeGrepOptions,
) -> napi::Result<NativeGrepResult> {
    let bytes: &[u8] = match &content {
        Either::A(text) => text.as_bytes(),
        Either::B(buffer) => buffer,
    };
    on_js_thread(&env, || {
        let options = convert_options(options)?;
        let mut outcome = natives_scan::grep::search(bytes, &options, &LibraryToken::new())?;
        let matches = columns(std::mem::take(&mut outcome.matches));
        Ok(to_js_result(&outcome, matches, 0))
    })
}

/// Options of `hasMatch`.
#[napi(object)]
pub struct HasMatchOptions {
    /// Case-insensitive (default false).
    pub ignore_case: Option<bool>,
    /// Matches may span lines (default false).
    pub multiline: Option<bool>,
}

/// Whether `content` contains a match of the regex `pattern`. Throws an
/// `Error` with code `EINVAL` for a bad regex.
#[napi(js_name = "nativeHasMatch")]
pub fn native_has_match(
    env: Env,
    content: Either<String, Buffer>,
    pattern: String,
    options: Option<HasMatchOptions>,
) -> napi::Result<bool> {
    let bytes: &[u8] = match &content {
        Either::A(text) => text.as_bytes(),
        Either::B(buffer) => buffer,
    };
    on_js_thread(&env, || {
        let mut converted = LibraryMatchOptions::default();
        if let Some(options) = options {
            given(&mut converted.ignore_case, options.ignore_case);
            given(&mut converted.multiline, options.multiline);
        }
        natives_scan::grep::has_match(bytes, &pattern, converted)
    })
}

fn convert_options(options: NativeGrepOptions) -> Result<GrepOptions, Error> {
    let path = match &options.path {
        Some(path) => crate::names::path_from_js(path, "path")?,
        None => PathBuf::new(),
    };
    let mut converted = GrepOptions::new(options.pattern, path);
    let limits = [
        options.max_count,
        options.max_columns,
        options.max_file_size,
    ];
    limit_results(&mut converted, limits)?;
    given(&mut converted.globs, options.glob.map(listed));
    given(&mut converted.file_types, options.file_type.map(listed));
    given(&mut converted.file_types_not, options.type_not.map(listed));
    given(&mut converted.ignore_case, options.ignore_case);
    given(&mut converted.smart_case, options.smart_case);
    given(&mut converted.literal, options.literal);
    given(&mut converted.multiline, options.multiline);
    given(&mut converted.include_hidden, options.hidden);
    given(&mut converted.use_gitignore, options.gitignore);
    given(
        &mut converted.include_node_modules,
        options.include_node_modules.map(Some),
    );
    if let Some(lines) = count("context", options.context)? {
        converted.context(lines);
    }
    given(
        &mut converted.context_before,
        count("contextBefore", options.context_before)?,
    );
    given(
        &mut converted.context_after,
        count("contextAfter", options.context_after)?,
    );
    given(&mut converted.offset, count("offset", options.offset)?);
    given(&mut converted.mode, options.mode.map(LibraryMode::from));
    given(&mut converted.word_regexp, options.word_regexp);
    given(&mut converted.invert_match, options.invert_match);
    given(&mut converted.only_matching, options.only_matching);
    given(&mut converted.cache, options.cache);
    given(&mut converted.watched_only, options.watched_only);
    given(&mut converted.confine, options.confine);
    given(&mut converted.retain_matches, options.retain_matches);
    Ok(converted)
}

/// The limits on what a search returns and reads: `maxCount`, `maxColumns`
/// and `maxFileSize`, in that order.
fn limit_results(converted: &mut GrepOptions, limits: [Option<f64>; 3]) -> Result<(), Error> {
    let [max_count, max_columns, max_file_size] = limits;
    let max_count = count("maxCount", max_count)?;
    given(&mut converted.max_count, max_count.map(Some));
    let max_columns = count("maxColumns", max_columns)?;
    given(&mut converted.max_columns, max_columns.map(Some));
    let max_file_size = count("maxFileSize", max_file_size)?;
    given(
        &mut converted.max_file_size,
        max_file_size.map(|bytes| Some(bytes as u64)),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_len_counts_surrogate_pairs_twice() {
        let long = "\u{1f600}".repeat(300) + &"\u{e9}x".repeat(200);
        let cases = [
            "",
            "ascii",
            "caf\u{e9}",
            "\u{20ac}\u{1f600}x",
            "\u{10ffff}\u{fffd}",
            &long,
        ];
        for text in cases {
            assert_eq!(utf16_len(text), text.encode_utf16().count(), "{text:?}");
        }
    }

    #[test]
    fn options_left_out_keep_the_library_defaults() {
        let options = NativeGrepOptions {
            pattern: "needle".into(),
            path: Some(String::from("src").into()),
            ..NativeGrepOptions::default()
        };
        assert_eq!(
            convert_options(options).unwrap(),
            GrepOptions::new("needle", "src")
        );
    }
}
