//! The `natives` binary: the command line of the `natives_cli` library.

use std::process::ExitCode;

fn main() -> ExitCode {
    natives_cli::main(std::env::args_os().collect())
}
