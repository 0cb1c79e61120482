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

use std::time::Instant;

use natives_scan::{
    CancelToken, cache,
    grep::{GrepOutcome, grep_with_progress, list_files},
};

use crate::{
    Outcome,
    args::GrepArgs,
    common::{Output, report_unreadable},
    grep_json,
    grep_print::Printer,
    grep_request::Request,
    progress::Progress,
};

pub fn run(args: GrepArgs) -> Result<Outcome, String> {
    let request = Request::from_args(args)?;
    if request.files {
        return list(&request);
    }
    search(&request)
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
                out.write(|w| printer.print(w, &found));
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
    if request.stats {
        let seconds = started.elapsed().as_secs_f64();
        out.write(|w| writeln!(w, "\n{}{seconds:.3} seconds", stats(&outcome)));
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
fn stats(summary: &GrepOutcome) -> String {
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
