//! `natives find QUERY [PATH]`: the library's fuzzy find, best match first.

use std::io::Write;

use lexopt::{Arg, Parser};
use natives_scan::{
    CancelToken, cache,
    fuzzy::{FuzzyMatch, FuzzyOptions, fuzzy_find},
};
use serde_json::json;

use crate::{
    Outcome,
    common::{Output, Positionals, number},
    describe,
    glob_cmd::type_name,
};

/// Matches printed unless `--max` says otherwise: a screenful.
const DEFAULT_MAX: usize = 20;

pub fn run(parser: &mut Parser) -> Result<Outcome, String> {
    let (options, positionals, json) = parse(parser)?;
    let outcome = fuzzy_find(&options, cache::global(), &CancelToken::new(), &mut |_| {})
        .map_err(|err| err.to_string())?;
    let mut out = Output::stdout();
    for found in &outcome.matches {
        out.write(|w| print_match(w, &positionals, json, found));
    }
    if json {
        let summary = json!({"type": "summary", "totalMatches": outcome.total_matches});
        out.write(|w| writeln!(w, "{summary}"));
    }
    out.finish()?;
    Ok(Outcome::from_count(outcome.total_matches as u64))
}

fn parse(parser: &mut Parser) -> Result<(FuzzyOptions, Positionals, bool), String> {
    let mut values = Vec::new();
    let mut options = FuzzyOptions::new("", ".");
    options.max_results = DEFAULT_MAX;
    let mut json = false;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Arg::Long("hidden") => options.include_hidden = true,
            Arg::Long("no-ignore") => options.use_gitignore = false,
            Arg::Long("json") => json = true,
            Arg::Long("max") | Arg::Short('m') => options.max_results = number(parser, "--max")?,
            Arg::Value(value) => values.push(value),
            other => return Err(format!("find: unknown option {}", describe(&other))),
        }
    }
    let positionals = Positionals::parse("find", "QUERY", values)?;
    options.query = positionals.pattern.clone();
    options.path = positionals.path();
    Ok((options, positionals, json))
}

fn print_match(
    out: &mut dyn Write,
    positionals: &Positionals,
    json: bool,
    found: &FuzzyMatch,
) -> std::io::Result<()> {
    let path = positionals.display(found.path.as_bytes());
    if json {
        let shown = String::from_utf8_lossy(&path);
        // Indices count characters of the relative path; shift them past PATH.
        let shift = (shown.chars().count() - found.path.chars().count()) as u32;
        let line = json!({
            "type": "match",
            "path": shown,
            "fileType": type_name(found.file_type),
            "score": found.score,
            "indices": found.indices.iter().map(|i| i + shift).collect::<Vec<_>>(),
        });
        return writeln!(out, "{line}");
    }
    out.write_all(&path)?;
    out.write_all(b"\n")
}
