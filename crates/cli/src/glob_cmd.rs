//! `natives glob PATTERN [PATH]`: the library's glob, printed like fd.
//!
//! Paths print relative to the current directory as the user wrote PATH
//! (`natives glob '*.rs' crates` prints `crates/...`), raw bytes and all, so
//! the output can be piped back into other tools. A closed pipe ends the
//! command quietly.

use std::{
    ffi::OsString,
    io::{self, BufWriter, Write},
    path::PathBuf,
};

use lexopt::{Arg, Parser, ValueExt};
use natives_scan::{CancelToken, Entry, FileType, GlobOptions, cache, glob};
use serde_json::json;

use crate::{Outcome, describe};

struct Args {
    options: GlobOptions,
    /// PATH as typed, prefixed to every printed path.
    prefix: Option<OsString>,
    json: bool,
}

pub fn run(parser: &mut Parser) -> Result<Outcome, String> {
    let args = parse(parser)?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut write_error = None;
    let outcome = glob(
        &args.options,
        cache::global(),
        &CancelToken::new(),
        &mut |entry| {
            if write_error.is_none()
                && let Err(err) = print_match(&mut out, &args, &entry)
            {
                write_error = Some(err);
            }
        },
    )
    .map_err(|err| err.to_string())?;
    let summary = json!({
        "type": "summary",
        "totalMatches": outcome.total_matches,
        "limitReached": outcome.limit_reached(),
    });
    let finished = match write_error {
        Some(err) => Err(err),
        None if args.json => writeln!(out, "{summary}").and_then(|()| out.flush()),
        None => out.flush(),
    };
    match finished {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            return Err(format!("writing output: {err}"));
        }
        _ => {}
    }
    Ok(if outcome.total_matches > 0 {
        Outcome::Matched
    } else {
        Outcome::NoMatch
    })
}

fn parse(parser: &mut Parser) -> Result<Args, String> {
    let mut positional = Vec::new();
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
                let text = value(parser)?;
                let max = text
                    .parse()
                    .map_err(|_| format!("--max takes a non-negative integer, got `{text}`"))?;
                options.max_results = Some(max);
            }
            Arg::Long("sort") => match value(parser)?.as_str() {
                "mtime" => options.sort_by_mtime = true,
                "path" => options.sort_by_mtime = false,
                other => return Err(format!("--sort takes `mtime` or `path`, got `{other}`")),
            },
            Arg::Value(value) => positional.push(value),
            other => return Err(format!("glob: unknown option {}", describe(&other))),
        }
    }
    let mut positional = positional.into_iter();
    let pattern = positional.next().ok_or("glob: missing PATTERN")?;
    options.pattern = pattern
        .string()
        .map_err(|e| format!("glob: PATTERN: {e}"))?;
    let prefix = positional.next();
    if let Some(extra) = positional.next() {
        return Err(format!(
            "glob: unexpected argument `{}`",
            extra.to_string_lossy()
        ));
    }
    options.path = prefix
        .as_ref()
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    Ok(Args {
        options,
        prefix,
        json,
    })
}

fn value(parser: &mut Parser) -> Result<String, String> {
    parser
        .value()
        .and_then(|v| v.string())
        .map_err(|e| e.to_string())
}

fn file_type(text: &str) -> Result<FileType, String> {
    match text {
        "f" | "file" => Ok(FileType::File),
        "d" | "dir" | "directory" => Ok(FileType::Dir),
        "l" | "symlink" => Ok(FileType::Symlink),
        other => Err(format!("--type takes f, d or l, got `{other}`")),
    }
}

fn type_name(file_type: FileType) -> &'static str {
    match file_type {
        FileType::File => "file",
        FileType::Dir => "dir",
        FileType::Symlink => "symlink",
        FileType::Other => "other",
    }
}

fn print_match(out: &mut impl Write, args: &Args, entry: &Entry<'_>) -> io::Result<()> {
    let path = display_path(args.prefix.as_ref(), entry.path);
    if args.json {
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

/// `prefix/relative`, or `relative` when no PATH was given.
fn display_path(prefix: Option<&OsString>, relative: &[u8]) -> Vec<u8> {
    let Some(prefix) = prefix else {
        return relative.to_vec();
    };
    let mut path = prefix.as_encoded_bytes().to_vec();
    if !path.ends_with(b"/") {
        path.push(b'/');
    }
    path.extend_from_slice(relative);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_path_table() {
        let table: &[(Option<&str>, &str, &str)] = &[
            (None, "a/b.rs", "a/b.rs"),
            (Some("src"), "a.rs", "src/a.rs"),
            (Some("src/"), "a.rs", "src/a.rs"),
            (Some("/abs"), "x", "/abs/x"),
        ];
        for &(prefix, relative, expected) in table {
            let prefix = prefix.map(OsString::from);
            assert_eq!(
                display_path(prefix.as_ref(), relative.as_bytes()),
                expected.as_bytes()
            );
        }
    }
}
