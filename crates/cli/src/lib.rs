//! `natives`: the command-line front over the natives library crates.
//!
//! A thin layer: clap parses (see `args`), the library decides, this crate
//! prints. Exit codes follow ripgrep: 0 when something matched, 1 when
//! nothing did, 2 on error (parse errors included, printed as every other
//! error is, see `errors`) and when a search could not enter or read part
//! of the tree (each such path named on stderr, the results printed still);
//! a handover the library refused exits 3; `pool run` exits with its
//! command's status.

pub mod args;
mod cache_cmd;
mod claims_cmd;
mod common;
mod errors;
mod eviction_cmd;
mod evidence_cmd;
mod find_cmd;
mod glob_cmd;
mod grep_cmd;
mod grep_json;
mod grep_print;
mod grep_request;
mod handover_cmd;
mod pool_cmd;
mod progress;
mod runs_cmd;

use std::{ffi::OsString, io::Write, process::ExitCode};

use clap::{CommandFactory, Parser};

use args::{Cli, Command};

/// How a command ended.
pub enum Outcome {
    /// It found or did what was asked (exit 0).
    Matched,
    /// Nothing matched, or nothing was done (exit 1).
    NoMatch,
    /// What was asked was refused, and the output says why (exit 3).
    Refused,
    /// A search answered, but part of the tree could not be entered or
    /// read; stderr names each such path (exit 2, as `rg`).
    Incomplete,
    /// A command run on the user's behalf ended with this status.
    Exited(u8),
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

    /// `Incomplete` when a search `incomplete`ly covered its tree, else
    /// this outcome.
    pub fn unless_incomplete(self, incomplete: bool) -> Outcome {
        if incomplete {
            Outcome::Incomplete
        } else {
            self
        }
    }
}

/// Run the command line `args` (the program name first) to its exit code.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => return errors::report(&err, &args),
    };
    match run(cli.command) {
        Ok(Outcome::Matched) => ExitCode::SUCCESS,
        Ok(Outcome::NoMatch) => ExitCode::from(1),
        Ok(Outcome::Refused) => ExitCode::from(3),
        Ok(Outcome::Incomplete) => ExitCode::from(2),
        Ok(Outcome::Exited(code)) => ExitCode::from(code),
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "natives: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<Outcome, String> {
    match command {
        Command::Glob(args) => glob_cmd::run(args),
        Command::Grep(args) => grep_cmd::run(args),
        Command::Find(args) => find_cmd::run(args),
        Command::Claims(command) => claims_cmd::run(command),
        Command::Cache(command) => cache_cmd::run(command),
        Command::Pool(command) => pool_cmd::run(command),
        Command::Runs(command) => runs_cmd::run(command),
        Command::Handover(args) => handover_cmd::run(args),
        Command::SourceEvidence(args) => evidence_cmd::run(args),
        Command::Housekeeping(args) => eviction_cmd::housekeeping(args),
        Command::Fold(args) => eviction_cmd::fold(args),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "natives",
                &mut std::io::stdout(),
            );
            Ok(Outcome::Matched)
        }
    }
}
