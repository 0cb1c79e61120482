//! `natives glob PATTERN [PATH] [-g PATTERN]... [-E PATTERN]...`: the
//! library's glob, printed like fd.
//!
//! Paths print relative to the current directory as the user wrote PATH
//! (`natives glob '*.rs' crates` prints `crates/...`), raw bytes and all, so
//! the output can be piped back into other tools. `--json` prints the
//! library's views of the matches and the summary.

use std::io::Write;

use natives_scan::{
    CancelToken, Entry, FileType, GlobOptions, cache, glob,
    view::{GlobMatchView, GlobSummaryView},
};

use crate::{
    Outcome,
    args::{GlobArgs, SortArg, TypeArg},
    common::{JsonLine, Output, Positionals, report_unreadable, write_json},
};

type GlobLine = JsonLine<GlobMatchView, GlobSummaryView>;

pub fn run(args: GlobArgs) -> Result<Outcome, String> {
    let json = args.json;
    let (options, positionals) = options(args);
    let mut out = Output::stdout();
    let outcome = glob(
        &options,
        cache::global(),
        &CancelToken::new(),
        &mut |entry| {
            out.write(|w| print_match(w, &positionals, json, &entry));
        },
    )
    .map_err(|err| err.to_string())?;
    if json {
        let summary = GlobLine::Summary(GlobSummaryView::from(&outcome));
        out.write(|w| write_json(w, &summary));
    }
    out.finish()?;
    let incomplete = report_unreadable(&positionals, &outcome.unreadable);
    // What was printed decides, as with `rg -m 0`: a match cut by `--max` is not found.
    Ok(Outcome::from_count(outcome.matches().len() as u64).unless_incomplete(incomplete))
}

fn options(args: GlobArgs) -> (GlobOptions, Positionals) {
    let positionals = Positionals {
        pattern: args.pattern,
        prefix: args.path,
    };
    let mut options = GlobOptions::new(positionals.pattern.clone(), positionals.path());
    options.patterns.extend(args.also);
    options.ignore = args.exclude;
    args.walk
        .override_policy(&mut options.include_hidden, &mut options.use_gitignore);
    options.file_type = args.file_type.map(|t| match t {
        TypeArg::File => FileType::File,
        TypeArg::Dir => FileType::Dir,
        TypeArg::Symlink => FileType::Symlink,
    });
    options.max_results = args.max;
    options.sort_by_mtime = args.sort == Some(SortArg::Mtime);
    (options, positionals)
}

fn print_match(
    out: &mut dyn Write,
    positionals: &Positionals,
    json: bool,
    entry: &Entry<'_>,
) -> std::io::Result<()> {
    let path = positionals.display(entry.path);
    if json {
        let view = GlobMatchView {
            path: String::from_utf8_lossy(&path).into_owned(),
            ..GlobMatchView::from(entry)
        };
        return write_json(out, &GlobLine::Match(view));
    }
    out.write_all(&path)?;
    out.write_all(b"\n")
}
