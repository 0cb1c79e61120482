//! `natives`: the command-line front over the natives library crates.
//!
//! A thin layer: parse flags, call the library, print. Exit codes follow
//! ripgrep: 0 when something matched, 1 when nothing did, 2 on error.

mod glob_cmd;

use std::{io::Write, process::ExitCode};

const USAGE: &str = "\
natives: fast, fresh file discovery for coding agents

Usage:
  natives glob PATTERN [PATH] [options]

glob options:
  --hidden          include dot-files and dot-directories
  --no-ignore       do not honour .gitignore/.ignore files
  --type f|d|l      only files, directories or symlinks
  --max N           print at most N matches
  --sort mtime      newest first
  --json            one JSON object per line (matches, then a summary)

Exit status: 0 if something matched, 1 if nothing did, 2 on error.
";

/// How a command ended.
pub enum Outcome {
    Matched,
    NoMatch,
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
