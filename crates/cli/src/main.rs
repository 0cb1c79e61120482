//! `natives`: the command-line front over the natives library crates.
//!
//! A thin layer: parse flags, call the library, print. Exit codes follow
//! ripgrep: 0 when something matched, 1 when nothing did, 2 on error.

mod cache_cmd;
mod claims_cmd;
mod common;
mod find_cmd;
mod glob_cmd;
mod grep_cmd;

use std::{io::Write, process::ExitCode};

const USAGE: &str = "\
natives: fast, fresh file discovery for coding agents

Usage:
  natives glob PATTERN [PATH] [options]
  natives grep PATTERN [PATH] [options]
  natives find QUERY [PATH] [--hidden] [--no-ignore] [--max N] [--json]
  natives claims list [--uid U] [--json] [--home DIR]
  natives claims release UID DIR [--yes] [--any-user] [--home DIR]
  natives cache show [--json] [--home DIR]
  natives cache prune DIR --limit SIZE [--dry-run] [--yes] [--home DIR]
  natives cache release DIR [--home DIR]

glob options:
  --hidden          include dot-files and dot-directories
  --no-ignore       do not honour .gitignore/.ignore files
  --type f|d|l      only files, directories or symlinks
  --max N           print at most N matches
  --sort mtime      newest first
  --json            one JSON object per line (matches, then a summary)

grep options (ripgrep's spellings):
  -i, --ignore-case      case-insensitive
  -S, --smart-case       case-insensitive unless PATTERN has an uppercase letter
  -F, --fixed-strings    PATTERN is literal text
  -U, --multiline        matches may span lines
  -C, -A, -B N           lines of context around, after, before each match
  -g, --glob GLOB        only files matching GLOB (`!GLOB` excludes)
  -t, --type TYPE        only files of ripgrep's type TYPE (rust, ts, py, ...)
  -m, --max-count N      print at most N results in all (rg: per file)
  -c, --count            matching lines per file
  -l, --files-with-matches  only the names of files with matches
  --hidden, --no-ignore, --json  as for glob

claims: memory-directory claims in $NATIVES_HOME (else ~/.natives). `list` shows
every claimed folder (with --uid, those U holds); `release` removes UID's claim on
DIR (a folder or a `memory-dir:` zone), after asking unless --yes; a claim another
OS user made is refused (EPERM) unless --any-user.

cache: build-cache leases in the same home. `show` lists every registered cache
(status, owner, since, identity; `*` when process cleanup holds its outputs);
`--json` prints one object per cache. `prune` deletes the oldest build output of
DIR (a registered cargo target directory; anything else is refused) until it fits
SIZE (bytes, or K/M/G/T, 1024-based), only while nobody uses it: exit 1 when busy.
`--dry-run` lists what would go; at a terminal it asks first, unless --yes. `release` clears a gone owner's lease on DIR (an unreadable record is moved
aside, not deleted) and refuses a live owner (exit 2).

Exit status: 0 if something matched, 1 if nothing did, 2 on error.
";

/// How a command ended.
pub enum Outcome {
    Matched,
    NoMatch,
}

impl Outcome {
    /// `Matched` when anything was found.
    pub fn from_count(found: u64) -> Outcome {
        if found > 0 {
            Outcome::Matched
        } else {
            Outcome::NoMatch
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(Outcome::Matched) => ExitCode::SUCCESS,
        Ok(Outcome::NoMatch) => ExitCode::from(1),
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "natives: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<Outcome, String> {
    let mut args = lexopt::Parser::from_env();
    match args.next().map_err(|e| e.to_string())? {
        Some(lexopt::Arg::Value(command)) if command == "glob" => glob_cmd::run(&mut args),
        Some(lexopt::Arg::Value(command)) if command == "grep" => grep_cmd::run(&mut args),
        Some(lexopt::Arg::Value(command)) if command == "find" => find_cmd::run(&mut args),
        Some(lexopt::Arg::Value(command)) if command == "claims" => claims_cmd::run(&mut args),
        Some(lexopt::Arg::Value(command)) if command == "cache" => cache_cmd::run(&mut args),
        Some(lexopt::Arg::Long("help")) | Some(lexopt::Arg::Short('h')) => {
            print!("{USAGE}");
            Ok(Outcome::Matched)
        }
        Some(lexopt::Arg::Long("version")) | Some(lexopt::Arg::Short('V')) => {
            println!("natives {}", env!("CARGO_PKG_VERSION"));
            Ok(Outcome::Matched)
        }
        Some(other) => Err(format!("unknown command {}\n\n{USAGE}", describe(&other))),
        None => Err(format!("missing command\n\n{USAGE}")),
    }
}

/// An argument as the user typed it, for error messages.
pub fn describe(arg: &lexopt::Arg<'_>) -> String {
    match arg {
        lexopt::Arg::Short(c) => format!("-{c}"),
        lexopt::Arg::Long(name) => format!("--{name}"),
        lexopt::Arg::Value(value) => format!("`{}`", value.to_string_lossy()),
    }
}
