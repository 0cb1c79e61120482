//! `natives find QUERY [PATH]`: the library's fuzzy find, best match first;
//! `--json` prints the library's views of the matches and the summary.

use std::io::Write;

use natives_scan::{
    CancelToken, cache,
    fuzzy::{FuzzyMatch, FuzzyOptions, fuzzy_find},
    view::{FuzzyMatchView, FuzzySummaryView},
};

use crate::{
    Outcome,
    args::FindArgs,
    common::{JsonLine, Output, Positionals, report_unreadable, write_json},
};

type FindLine = JsonLine<FuzzyMatchView, FuzzySummaryView>;

pub fn run(args: FindArgs) -> Result<Outcome, String> {
    let json = args.json;
    let (options, positionals) = options(args);
    let outcome = fuzzy_find(&options, cache::global(), &CancelToken::new(), &mut |_| {})
        .map_err(|err| err.to_string())?;
    let mut out = Output::stdout();
    for found in &outcome.matches {
        out.write(|w| print_match(w, &positionals, json, found));
    }
    if json {
        let summary = FindLine::Summary(FuzzySummaryView::from(&outcome));
        out.write(|w| write_json(w, &summary));
    }
    out.finish()?;
    let incomplete = report_unreadable(&positionals, &outcome.unreadable);
    Ok(Outcome::from_count(outcome.matches.len() as u64).unless_incomplete(incomplete))
}

fn options(args: FindArgs) -> (FuzzyOptions, Positionals) {
    let positionals = Positionals {
        pattern: args.query,
        prefix: args.path,
    };
    let mut options = FuzzyOptions::new(positionals.pattern.clone(), positionals.path());
    args.walk
        .override_policy(&mut options.include_hidden, &mut options.use_gitignore);
    if let Some(max) = args.max {
        options.max_results = max;
    }
    (options, positionals)
}

fn print_match(
    out: &mut dyn Write,
    positionals: &Positionals,
    json: bool,
    found: &FuzzyMatch,
) -> std::io::Result<()> {
    if !json {
        // The name's own bytes, as rg and fd print them.
        out.write_all(&positionals.display(&found.path))?;
        return out.write_all(b"\n");
    }
    let prefix = String::from_utf8_lossy(&positionals.display(b"")).into_owned();
    // Indices count characters of the relative path; shift them past PATH.
    let shift = prefix.chars().count() as u32;
    let view = FuzzyMatchView::from(found);
    let view = FuzzyMatchView {
        indices: view.indices.iter().map(|i| i + shift).collect(),
        path: prefix + &view.path,
        ..view
    };
    write_json(out, &FindLine::Match(view))
}
