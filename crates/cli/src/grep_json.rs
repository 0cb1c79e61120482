//! `natives grep --json`: ripgrep's JSON Lines, so tools that read
//! `rg --json` read this too.
//!
//! The messages are written by ripgrep's own JSON printer (`grep-printer`):
//! the library searches every file with `grep-searcher`, as ripgrep does,
//! and lets a [`FileObserver`] see each file's searcher events, so the
//! printer's sink for the file sees exactly what ripgrep's would and writes
//! the `begin`, `match`, `context` and `end` messages, with their paths,
//! lines (`{"text":..}`, or `{"bytes":..}` in base64 when not UTF-8),
//! offsets, submatches and per-file stats. The library hands each file's
//! messages back in path order. The closing `summary` sums the files'
//! stats and is written as ripgrep writes it.

use std::{
    ffi::OsString,
    io,
    os::unix::ffi::OsStringExt,
    path::PathBuf,
    sync::Mutex,
    time::{Duration, Instant},
};

use grep_printer::{JSON, Stats};
use grep_regex::RegexMatcher;
use grep_searcher::Sink;
use natives_scan::{
    CancelToken, GrepOutcome, Result, cache,
    grep::{FileObserver, grep_observed},
};

use crate::grep_request::Request;

/// ripgrep's JSON printer for each file a search reads, each file's stats
/// summed for the summary.
pub struct JsonLines<'r> {
    request: &'r Request,
    stats: Mutex<Stats>,
}

impl FileObserver for JsonLines<'_> {
    fn observe(
        &self,
        path: &[u8],
        matcher: &RegexMatcher,
        search: &mut dyn FnMut(&mut dyn Sink<Error = io::Error>) -> io::Result<()>,
    ) -> io::Result<Vec<u8>> {
        let shown = PathBuf::from(OsString::from_vec(self.request.shown_path(path)));
        let mut printer = JSON::new(Vec::new());
        let mut sink = printer.sink_with_path(matcher, &shown);
        search(&mut sink)?;
        *self.stats.lock().unwrap_or_else(|p| p.into_inner()) += sink.stats();
        Ok(printer.into_inner())
    }
}

/// Search as `request` says, writing every file's messages to `out` in
/// path order, then the summary.
pub fn search(request: &Request, out: &mut dyn FnMut(&[u8])) -> Result<GrepOutcome> {
    let started = Instant::now();
    let lines = JsonLines {
        request,
        stats: Mutex::new(Stats::new()),
    };
    let outcome = grep_observed(
        &request.options,
        cache::global(),
        &CancelToken::new(),
        &lines,
        out,
        &mut |so_far| request.resolved(so_far.path_is_file),
    )?;
    let stats = lines.stats.into_inner().unwrap_or_else(|p| p.into_inner());
    out(summary(&stats, started.elapsed()).as_bytes());
    Ok(outcome)
}

/// The `summary` line, as ripgrep writes it: through a JSON value, so its
/// keys are in alphabetical order (the printer's messages keep their
/// fields' order).
fn summary(stats: &Stats, elapsed: Duration) -> String {
    let message = serde_json::json!({
        "type": "summary",
        "data": {
            "stats": stats,
            "elapsed_total": {
                "secs": elapsed.as_secs(),
                "nanos": elapsed.subsec_nanos(),
                "human": format!("{:0.6}s", elapsed.as_secs_f64()),
            },
        },
    });
    format!("{message}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_rg_s() {
        let line = summary(&Stats::new(), Duration::new(1, 2_000));
        let expected = concat!(
            r#"{"data":{"elapsed_total":{"human":"1.000002s","nanos":2000,"secs":1},"#,
            r#""stats":{"bytes_printed":0,"bytes_searched":0,"#,
            r#""elapsed":{"human":"0.000000s","nanos":0,"secs":0},"#,
            r#""matched_lines":0,"matches":0,"searches":0,"searches_with_match":0}},"#,
            r#""type":"summary"}"#,
            "\n"
        );
        assert_eq!(line, expected);
    }
}
