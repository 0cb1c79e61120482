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
mod outcome;
mod pool_cmd;
mod progress;
mod runs_cmd;

use std::{ffi::OsString, io::Write, process::ExitCode};

use clap::{CommandFactory, Parser};

use args::{Cli, Command};
pub use outcome::Outcome;

/// Run the command line `args` (the program name first) to its exit code.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => return errors::report(&err, &args),
    };
    match run(cli.command) {
        Ok(outcome) => outcome.exit_code(),
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
