//! Bindings for `grep`, the in-memory `search` and `hasMatch`
//! (`natives_scan::grep`).
//!
//! Results cross as plain objects: grep answers are bounded by what an agent
//! reads (`maxCount`), unlike glob's full listings, so columns would buy
//! little and cost clarity.

use std::path::PathBuf;

use napi::{
    Env, Status,
    bindgen_prelude::{AsyncTask, Buffer, Either},
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
    cancel::CancelToken,
    errors::on_js_thread,
    options::{count, given},
    stream::{BatchCallback, ItemBatch, stream},
    task::{Work, cancellable_task},
};

/// Options for the native `grep` and `search`; the TypeScript layer
/// documents them and supplies `path`.
#[napi(object)]
#[cfg_attr(test, derive(Default))]
pub struct NativeGrepOptions {
    /// Regular expression (or literal text with `literal`).
    pub pattern: String,
    /// File or directory to search (grep only), absolute or relative to the cwd.
    pub path: Option<String>,
    /// Only files matching this glob (`*.ts`; `!` excludes), as `rg -g`.
    pub glob: Option<String>,
    /// Only files of this type (`rust`, `ts`, ...), from ripgrep's type list.
    #[napi(js_name = "type")]
    pub file_type: Option<String>,
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
    /// Search dot-files (default true).
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

/// A context line.
#[napi(object)]
pub struct ContextLine {
    /// 1-based line number.
    pub line_number: f64,
    /// The line without its final `\n`.
    pub line: String,
}

/// One result.
#[napi(object)]
pub struct NativeGrepMatch {
    /// Relative to the search root, `/`-separated.
    pub path: String,
    /// 1-based line of the match; 0 in `count` and `filesWithMatches` modes.
    pub line_number: f64,
    /// The matching line(s); empty in `count` and `filesWithMatches` modes.
    pub line: String,
    /// Lines before the match, when context was asked for.
    pub context_before: Option<Vec<ContextLine>>,
    /// Lines after the match, when context was asked for.
    pub context_after: Option<Vec<ContextLine>>,
    /// Present (true) when `maxColumns` cut the line or its context.
    pub truncated: Option<bool>,
    /// `count` mode: the file's matching lines.
    pub match_count: Option<f64>,
}

/// What the native `grep` and `search` resolve with.
#[napi(object)]
pub struct NativeGrepResult {
    /// The results; empty when they were streamed through `onBatch`.
    pub matches: Vec<NativeGrepMatch>,
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
    /// `true` when `maxCount` cut results off.
    pub limit_reached: bool,
    /// `path` named one file (results carry its name) rather than a directory.
    pub path_is_file: bool,
    /// How many batches were streamed through `onBatch`.
    pub batches: u32,
}

fn to_js_match(found: &GrepMatch) -> NativeGrepMatch {
    let context = |lines: &[(u64, String)]| {
        (!lines.is_empty()).then(|| {
            lines
                .iter()
                .map(|(number, line)| ContextLine {
                    line_number: *number as f64,
                    line: line.clone(),
                })
                .collect()
        })
    };
    NativeGrepMatch {
        path: found.path_lossy().into_owned(),
        line_number: found.line_number as f64,
        line: found.line.clone(),
        context_before: context(&found.context_before),
        context_after: context(&found.context_after),
        truncated: found.truncated.then_some(true),
        match_count: (found.match_count > 0).then_some(found.match_count as f64),
    }
}

fn to_js_result(
    outcome: &GrepOutcome,
    matches: Vec<NativeGrepMatch>,
    batches: u32,
) -> NativeGrepResult {
    NativeGrepResult {
        matches,
        total_matches: outcome.total_matches as f64,
        files_with_matches: outcome.files_with_matches as f64,
        files_searched: outcome.files_searched as f64,
        binary_files_skipped: outcome.binary_files_skipped as f64,
        files_skipped_too_large: outcome.files_skipped_too_large as f64,
        files_unreadable: outcome.files_unreadable as f64,
        limit_reached: outcome.limit_reached,
        path_is_file: outcome.path_is_file,
        batches,
    }
}

/// Search file contents under `path` (a directory or one file) with
/// ripgrep's rules, in path then line order. `onBatch`, when given, receives
/// the results in batches as they are decided (and the result's `matches`
/// is then empty). Rejects with an `Error` whose `code` is `ENOENT`,
/// `ENOTDIR`, `EACCES`, `EINVAL` (bad regex, type or option), `ABORT_ERR`
/// or `ETIMEDOUT`.
#[napi(js_name = "nativeGrep", ts_return_type = "Promise<NativeGrepResult>")]
pub fn native_grep(
    options: NativeGrepOptions,
    token: Option<&CancelToken>,
    on_batch: Option<
        ThreadsafeFunction<Vec<NativeGrepMatch>, (), Vec<NativeGrepMatch>, Status, false>,
    >,
) -> AsyncTask<Work<NativeGrepResult>> {
    cancellable_task(
        token,
        options.timeout_ms,
        || convert_options(options),
        move |options, token| run_grep(options, &token, on_batch.as_ref()),
    )
}

/// The search itself, off the JS thread: results into the answer, or
/// streamed to `on_batch`.
fn run_grep(
    mut options: GrepOptions,
    token: &LibraryToken,
    on_batch: Option<&BatchCallback<Vec<NativeGrepMatch>>>,
) -> Result<NativeGrepResult, Error> {
    // Streamed results reach JS through the callback; holding them here too would double the memory.
    options.retain_matches &= on_batch.is_none();
    let grep = |on_match: &mut dyn FnMut(&GrepMatch)| {
        natives_scan::grep::grep(&options, cache::global(), token, on_match)
    };
    Ok(match on_batch {
        Some(callback) => {
            let (outcome, batches) =
                stream::<ItemBatch<NativeGrepMatch>, _>(callback, |streamer| {
                    grep(&mut |found| streamer.push(to_js_match(found)))
                });
            to_js_result(&outcome?, Vec::new(), batches)
        }
        None => {
            let outcome = grep(&mut |_| {})?;
            to_js_result(
                &outcome,
                outcome.matches.iter().map(to_js_match).collect(),
                0,
            )
        }
    })
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
        let outcome = natives_scan::grep::search(bytes, &options, &LibraryToken::new())?;
        Ok(to_js_result(
            &outcome,
            outcome.matches.iter().map(to_js_match).collect(),
            0,
        ))
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
    let path = PathBuf::from(options.path.unwrap_or_default());
    let mut converted = GrepOptions::new(options.pattern, path);
    let limits = [
        options.max_count,
        options.max_columns,
        options.max_file_size,
    ];
    limit_results(&mut converted, limits)?;
    given(&mut converted.glob, options.glob.map(Some));
    given(&mut converted.file_type, options.file_type.map(Some));
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
    fn options_left_out_keep_the_library_defaults() {
        let options = NativeGrepOptions {
            pattern: "needle".into(),
            path: Some("src".into()),
            ..NativeGrepOptions::default()
        };
        assert_eq!(
            convert_options(options).unwrap(),
            GrepOptions::new("needle", "src")
        );
    }
}
