//! `natives grep PATTERN [PATH]`: the library's grep with ripgrep's flag
//! spellings and ripgrep's `path:line:text` output (`-n --no-heading -H`).
//!
//! Where the CLI departs from the library's defaults it follows ripgrep, so
//! the same command line means the same thing: dot-files are skipped unless
//! `--hidden`. `-m` limits results in all, not per file (stated in `--help`).

use std::{io::Write, path::Path};

use lexopt::{Arg, Parser};
use natives_scan::{
    CancelToken, cache,
    grep::{GrepMatch, GrepMode, GrepOptions, GrepOutcome, grep},
};
use serde_json::json;

use crate::{
    Outcome,
    common::{Output, Positionals, number, value},
    describe,
};

struct Args {
    options: GrepOptions,
    positionals: Positionals,
    /// PATH names a file: print it as typed instead of joining.
    single_file: bool,
    json: bool,
}

pub fn run(parser: &mut Parser) -> Result<Outcome, String> {
    let args = parse(parser)?;
    let mut out = Output::stdout();
    let mut printer = Printer {
        args: &args,
        last: None,
    };
    let outcome = grep(
        &args.options,
        cache::global(),
        &CancelToken::new(),
        &mut |found| {
            out.write(|w| printer.print(w, found));
        },
    )
    .map_err(|err| err.to_string())?;
    if args.json {
        out.write(|w| writeln!(w, "{}", summary(&outcome)));
    }
    out.finish()?;
    Ok(Outcome::from_count(outcome.total_matches))
}

fn parse(parser: &mut Parser) -> Result<Args, String> {
    let mut values = Vec::new();
    let mut options = GrepOptions::new("", ".");
    // Results are printed as they are decided; none need keeping.
    options.retain_matches = false;
    options.include_hidden = false;
    let mut json = false;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Arg::Short('i') | Arg::Long("ignore-case") => options.ignore_case = true,
            Arg::Short('S') | Arg::Long("smart-case") => options.smart_case = true,
            Arg::Short('F') | Arg::Long("fixed-strings") => options.literal = true,
            Arg::Short('U') | Arg::Long("multiline") => options.multiline = true,
            Arg::Short('C') | Arg::Long("context") => {
                options.context(number(parser, "-C")?);
            }
            Arg::Short('A') | Arg::Long("after-context") => {
                options.context_after = number(parser, "-A")?
            }
            Arg::Short('B') | Arg::Long("before-context") => {
                options.context_before = number(parser, "-B")?
            }
            Arg::Short('g') | Arg::Long("glob") => options.glob = Some(value(parser)?),
            Arg::Short('t') | Arg::Long("type") => options.file_type = Some(value(parser)?),
            Arg::Short('m') | Arg::Long("max-count") => {
                options.max_count = Some(number(parser, "-m")?)
            }
            Arg::Short('c') | Arg::Long("count") => options.mode = GrepMode::Count,
            Arg::Short('l') | Arg::Long("files-with-matches") => {
                options.mode = GrepMode::FilesWithMatches
            }
            Arg::Long("hidden") => options.include_hidden = true,
            Arg::Long("no-ignore") => options.use_gitignore = false,
            Arg::Long("json") => json = true,
            Arg::Value(value) => values.push(value),
            other => return Err(format!("grep: unknown option {}", describe(&other))),
        }
    }
    let positionals = Positionals::parse("grep", "PATTERN", values)?;
    options.pattern = positionals.pattern.clone();
    options.path = positionals.path();
    let single_file = positionals
        .prefix
        .as_ref()
        .is_some_and(|p| !Path::new(p).is_dir());
    Ok(Args {
        options,
        positionals,
        single_file,
        json,
    })
}

/// Prints results as ripgrep does, with `--` between context groups.
struct Printer<'a> {
    args: &'a Args,
    /// The file and line last printed, to place group separators.
    last: Option<(Vec<u8>, u64)>,
}

impl Printer<'_> {
    fn print(&mut self, out: &mut dyn Write, found: &GrepMatch) -> std::io::Result<()> {
        let path = self.path(found);
        if self.args.json {
            return writeln!(out, "{}", match_json(&path, found));
        }
        match self.args.options.mode {
            GrepMode::Content => self.content(out, &path, found),
            GrepMode::Count => {
                out.write_all(&path)?;
                writeln!(out, ":{}", found.match_count)
            }
            GrepMode::FilesWithMatches => {
                out.write_all(&path)?;
                out.write_all(b"\n")
            }
        }
    }

    fn content(
        &mut self,
        out: &mut dyn Write,
        path: &[u8],
        found: &GrepMatch,
    ) -> std::io::Result<()> {
        let options = &self.args.options;
        let first = found
            .context_before
            .first()
            .map_or(found.line_number, |(n, _)| *n);
        let has_context = options.context_before + options.context_after > 0;
        let joins = self
            .last
            .as_ref()
            .is_some_and(|(p, n)| p == path && first <= n + 1);
        if has_context && self.last.is_some() && !joins {
            out.write_all(b"--\n")?;
        }
        let mut last = found.line_number;
        for (number, text) in &found.context_before {
            line(out, path, *number, '-', text)?;
        }
        for (offset, text) in found.line.split('\n').enumerate() {
            last = found.line_number + offset as u64;
            line(out, path, last, ':', text)?;
        }
        for (number, text) in &found.context_after {
            line(out, path, *number, '-', text)?;
            last = *number;
        }
        self.last = Some((path.to_vec(), last));
        Ok(())
    }

    fn path(&self, found: &GrepMatch) -> Vec<u8> {
        match (&self.args.positionals.prefix, self.args.single_file) {
            (Some(file), true) => file.as_encoded_bytes().to_vec(),
            _ => self.args.positionals.display(&found.path),
        }
    }
}

fn line(
    out: &mut dyn Write,
    path: &[u8],
    number: u64,
    separator: char,
    text: &str,
) -> std::io::Result<()> {
    out.write_all(path)?;
    writeln!(out, "{separator}{number}{separator}{text}")
}

fn match_json(path: &[u8], found: &GrepMatch) -> serde_json::Value {
    json!({
        "type": "match",
        "path": String::from_utf8_lossy(path),
        "lineNumber": found.line_number,
        "line": found.line,
        "contextBefore": found.context_before,
        "contextAfter": found.context_after,
        "truncated": found.truncated,
        "matchCount": found.match_count,
    })
}

fn summary(outcome: &GrepOutcome) -> serde_json::Value {
    json!({
        "type": "summary",
        "totalMatches": outcome.total_matches,
        "filesWithMatches": outcome.files_with_matches,
        "filesSearched": outcome.files_searched,
        "binaryFilesSkipped": outcome.binary_files_skipped,
        "filesSkippedTooLarge": outcome.files_skipped_too_large,
        "limitReached": outcome.limit_reached,
    })
}
