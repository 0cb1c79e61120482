//! `natives grep PATTERN [PATH]`: the library's grep with ripgrep's flag
//! spellings and ripgrep's `path:line:text` output (`-n --no-heading -H`);
//! `--files` lists what would be searched, as `rg --files`; `--json` prints
//! ripgrep's JSON Lines (see `grep_json`).
//!
//! Where the CLI departs from the library's defaults it follows ripgrep, so
//! the same command line means the same thing: dot-files are skipped unless
//! `--hidden`. `-m` caps each file's matching lines, as ripgrep's does;
//! `--max-results` caps the results in all. Whether PATH names a file is
//! the search's answer, which it gives before its first result.

use std::{
    ffi::OsString,
    io::IsTerminal,
    sync::atomic::{AtomicBool, Ordering},
    time::Instant,
};

use clap::ColorChoice;
use natives_scan::{
    CancelToken, cache,
    grep::{GrepMode, GrepOptions, GrepOutcome, grep_with_progress, list_files},
    view::GrepSummaryView,
};
use termcolor::WriteColor;

use crate::{
    Outcome,
    args::GrepArgs,
    common::{Output, Positionals, report_unreadable},
    grep_json,
    grep_print::Printer,
    progress::Progress,
};

/// A parsed `natives grep`: the library's options and how to print.
pub struct Request {
    pub options: GrepOptions,
    pub positionals: Positionals,
    /// PATH names a file, as the search resolved it (before any result):
    /// print it as typed instead of joining.
    single_file: AtomicBool,
    pub json: bool,
    pub line_numbers: bool,
    pub colour: bool,
    stats: bool,
    files: bool,
}

impl Request {
    /// The path printed for `relative`, a path under the search root.
    pub fn shown_path(&self, relative: &[u8]) -> Vec<u8> {
        match (
            &self.positionals.prefix,
            self.single_file.load(Ordering::Relaxed),
        ) {
            (Some(file), true) => file.as_encoded_bytes().to_vec(),
            _ => self.positionals.display(relative),
        }
    }

    /// Take the library's answer to whether PATH names a file: the search
    /// (or listing) tells it before its first result.
    pub fn resolved(&self, path_is_file: bool) {
        self.single_file.store(path_is_file, Ordering::Relaxed);
    }
}

pub fn run(args: GrepArgs) -> Result<Outcome, String> {
    let request = request(args)?;
    if request.files {
        return list(&request);
    }
    search(&request)
}

fn request(args: GrepArgs) -> Result<Request, String> {
    let (pattern, prefix) = match (args.files, args.pattern, args.path) {
        (true, path, None) => (String::new(), path.map(OsString::from)),
        (true, _, Some(_)) => {
            return Err("grep: --files takes one PATH and no PATTERN".to_owned());
        }
        (false, pattern, path) => (pattern.unwrap_or_default(), path),
    };
    let positionals = Positionals { pattern, prefix };
    let mut options = GrepOptions::new(positionals.pattern.clone(), positionals.path());
    // Results are printed as they are decided; none need keeping.
    options.retain_matches = false;
    args.walk
        .override_policy(&mut options.include_hidden, &mut options.use_gitignore);
    options.ignore_case = args.ignore_case;
    options.smart_case = args.smart_case;
    options.literal = args.fixed_strings;
    options.multiline = args.multiline;
    options.word_regexp = args.word_regexp;
    options.invert_match = args.invert_match;
    options.only_matching = args.only_matching;
    if let Some(lines) = args.context {
        options.context(lines);
    }
    options.context_before = args.before_context.unwrap_or(options.context_before);
    options.context_after = args.after_context.unwrap_or(options.context_after);
    options.globs = args.glob;
    options.file_types = args.file_type;
    options.file_types_not = args.type_not;
    options.max_count_per_file = args.max_count.map(|max| max as u64);
    options.max_count = args.max_results;
    options.mode = match (args.count, args.files_with_matches) {
        (true, _) => GrepMode::Count,
        (_, true) => GrepMode::FilesWithMatches,
        _ => GrepMode::Content,
    };
    Ok(Request {
        options,
        positionals,
        single_file: AtomicBool::new(false),
        json: args.json,
        line_numbers: !args.no_line_number,
        colour: colour(args.color),
        stats: args.stats,
        files: args.files,
    })
}

/// Whether to colour: always, never, or (as ripgrep decides) when standard
/// output is a terminal and `termcolor` finds colours wanted there (`TERM`
/// names a terminal that is not `dumb`, `NO_COLOR` is not set).
fn colour(choice: ColorChoice) -> bool {
    let choice = match choice {
        ColorChoice::Always => termcolor::ColorChoice::Always,
        ColorChoice::Never => termcolor::ColorChoice::Never,
        ColorChoice::Auto if std::io::stdout().is_terminal() => termcolor::ColorChoice::Auto,
        ColorChoice::Auto => termcolor::ColorChoice::Never,
    };
    termcolor::BufferWriter::stdout(choice)
        .buffer()
        .supports_color()
}

/// `--files`: the files the search would open, one per line.
fn list(request: &Request) -> Result<Outcome, String> {
    let mut out = Output::stdout();
    let listed = list_files(
        &request.options,
        cache::global(),
        &CancelToken::new(),
        &mut |listed, path| {
            request.resolved(listed.path_is_file);
            let shown = request.shown_path(path);
            out.write(|w| {
                w.write_all(&shown)?;
                w.write_all(b"\n")
            });
        },
    )
    .map_err(|err| err.to_string())?;
    out.finish()?;
    let incomplete = report_unreadable(&request.positionals, &listed.unreadable);
    Ok(Outcome::from_count(listed.files as u64).unless_incomplete(incomplete))
}

fn search(request: &Request) -> Result<Outcome, String> {
    // As `rg -m 0`: nothing can match, so nothing is searched or printed.
    if request.options.max_count_per_file == Some(0) {
        return Ok(Outcome::from_count(0));
    }
    if request.json {
        return json(request);
    }
    let started = Instant::now();
    let progress = Progress::spinner(request.stats, "searching");
    let mut out = Output::stdout();
    let mut printer = Printer::new(request).map_err(|err| err.to_string())?;
    let mut printed = 0u64;
    let searched = grep_with_progress(
        &request.options,
        cache::global(),
        &CancelToken::new(),
        &mut |found| {
            printed += 1;
            progress.print(|| {
                out.write(|w| printer.print(w, found));
                if progress.shares_screen() {
                    out.flush();
                }
            })
        },
        &mut |so_far| {
            request.resolved(so_far.path_is_file);
            progress.say(|| counted(so_far))
        },
    );
    progress.finish();
    let outcome = searched.map_err(|err| err.to_string())?;
    let summary = GrepSummaryView::from(&outcome);
    if request.stats {
        let seconds = started.elapsed().as_secs_f64();
        out.write(|w| writeln!(w, "\n{}{seconds:.3} seconds", stats(&summary)));
    }
    out.finish()?;
    let incomplete = report_unreadable(&request.positionals, &outcome.unreadable);
    // What was printed decides, as with `rg -m 0`: a result cut by `-m` or
    // `--max-results` is not found.
    Ok(Outcome::from_count(printed).unless_incomplete(incomplete))
}

/// `--json`: ripgrep's JSON Lines (see `grep_json`).
fn json(request: &Request) -> Result<Outcome, String> {
    let mut out = Output::stdout();
    let searched = grep_json::search(request, &mut |bytes| out.write(|w| w.write_all(bytes)));
    let outcome = searched.map_err(|err| err.to_string())?;
    out.finish()?;
    let incomplete = report_unreadable(&request.positionals, &outcome.unreadable);
    Ok(Outcome::from_count(outcome.total_matches).unless_incomplete(incomplete))
}

/// The progress line: how far the search has got.
fn counted(so_far: &GrepOutcome) -> String {
    format!(
        "searched {} files, {} results",
        so_far.files_searched, so_far.total_matches
    )
}

/// `--stats`: one counter a line, as ripgrep prints its own.
fn stats(summary: &GrepSummaryView) -> String {
    let counters = [
        (summary.total_matches as usize, "results"),
        (summary.files_with_matches, "files contained matches"),
        (summary.files_searched, "files searched"),
        (summary.binary_files_skipped, "binary files skipped"),
        (
            summary.files_skipped_too_large,
            "files skipped as too large",
        ),
        (summary.unreadable.len(), "paths unreadable"),
    ];
    counters
        .iter()
        .map(|(count, what)| format!("{count} {what}\n"))
        .collect()
}
