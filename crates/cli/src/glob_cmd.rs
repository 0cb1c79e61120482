//! `natives glob PATTERN [PATH]`: the library's glob, printed like fd.
//!
//! Paths print relative to the current directory as the user wrote PATH
//! (`natives glob '*.rs' crates` prints `crates/...`), raw bytes and all, so
//! the output can be piped back into other tools.

use std::io::Write;

use lexopt::{Arg, Parser};
use natives_scan::{CancelToken, Entry, FileType, GlobOptions, cache, glob};
use serde_json::json;

use crate::{
    Outcome,
    common::{Output, Positionals, number, value},
    describe,
};

pub fn run(parser: &mut Parser) -> Result<Outcome, String> {
    let (options, positionals, json) = parse(parser)?;
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
        let summary = json!({
            "type": "summary",
            "totalMatches": outcome.total_matches,
            "limitReached": outcome.limit_reached(),
        });
        out.write(|w| writeln!(w, "{summary}"));
    }
    out.finish()?;
    Ok(Outcome::from_count(outcome.total_matches as u64))
}

fn parse(parser: &mut Parser) -> Result<(GlobOptions, Positionals, bool), String> {
    let mut values = Vec::new();
    let mut options = GlobOptions::new("", ".");
    let mut json = false;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Arg::Long("hidden") => options.include_hidden = true,
            Arg::Long("no-ignore") => options.use_gitignore = false,
            Arg::Long("json") => json = true,
            Arg::Long("type") | Arg::Short('t') => {
                options.file_type = Some(file_type(&value(parser)?)?)
            }
            Arg::Long("max") | Arg::Short('m') => {
                options.max_results = Some(number(parser, "--max")?)
            }
            Arg::Long("sort") => match value(parser)?.as_str() {
                "mtime" => options.sort_by_mtime = true,
                "path" => options.sort_by_mtime = false,
                other => return Err(format!("--sort takes `mtime` or `path`, got `{other}`")),
            },
            Arg::Value(value) => values.push(value),
            other => return Err(format!("glob: unknown option {}", describe(&other))),
        }
    }
    let positionals = Positionals::parse("glob", "PATTERN", values)?;
    options.pattern = positionals.pattern.clone();
    options.path = positionals.path();
    Ok((options, positionals, json))
}

fn file_type(text: &str) -> Result<FileType, String> {
    match text {
        "f" | "file" => Ok(FileType::File),
        "d" | "dir" | "directory" => Ok(FileType::Dir),
        "l" | "symlink" => Ok(FileType::Symlink),
        other => Err(format!("--type takes f, d or l, got `{other}`")),
    }
}

/// The name `--json` prints for a type.
pub fn type_name(file_type: FileType) -> &'static str {
    match file_type {
        FileType::File => "file",
        FileType::Dir => "dir",
        FileType::Symlink => "symlink",
        FileType::Other => "other",
    }
}

fn print_match(
    out: &mut dyn Write,
    positionals: &Positionals,
    json: bool,
    entry: &Entry<'_>,
) -> std::io::Result<()> {
    let path = positionals.display(entry.path);
    if json {
        let line = json!({
            "type": "match",
            "path": String::from_utf8_lossy(&path),
            "fileType": type_name(entry.file_type),
            "mtime": entry.mtime_ms,
        });
        writeln!(out, "{line}")
    } else {
        out.write_all(&path)?;
        out.write_all(b"\n")
    }
}
