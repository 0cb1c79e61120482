//! The command line helps itself: every command's `--help` exits 0 and
//! lists exactly the flags its parser accepts (both read from the one clap
//! definition), `--version` works on every command, misspellings get a
//! suggestion, and completion scripts cover every command.

mod output;

use std::{collections::BTreeSet, process::Command as Process};

use clap::{Command, CommandFactory};
use natives_cli::args::Cli;

/// `natives ARGS`: exit code, stdout, stderr.
fn natives(args: &[&str]) -> (i32, String, String) {
    let out = Process::new(env!("CARGO_BIN_EXE_natives"))
        .args(args)
        .output()
        .unwrap();
    output::outcome(out)
}

/// Every command of the definition with its path of names, the root first
/// (an empty path).
fn commands() -> Vec<(Vec<String>, Command)> {
    let mut root = Cli::command();
    root.build();
    let mut found = Vec::new();
    let mut pending = vec![(Vec::new(), root)];
    while let Some((path, command)) = pending.pop() {
        for sub in command.get_subcommands() {
            let mut sub_path = path.clone();
            sub_path.push(sub.get_name().to_owned());
            pending.push((sub_path, sub.clone()));
        }
        found.push((path, command));
    }
    found
}

/// The flags the parser of `command` accepts, as typed: `-i`, `--ignore-case`.
fn accepted(command: &Command) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        flags.extend(arg.get_short().map(|c| format!("-{c}")));
        flags.extend(arg.get_long().map(|l| format!("--{l}")));
        flags.extend(
            arg.get_all_short_aliases()
                .into_iter()
                .flatten()
                .map(|c| format!("-{c}")),
        );
        flags.extend(
            arg.get_all_aliases()
                .into_iter()
                .flatten()
                .map(|l| format!("--{l}")),
        );
    }
    flags
}

/// The flags a help text lists: on each line that starts with a flag, the
/// flags before its description (`-C, --context <NUM>  Lines ...`).
fn listed(help: &str) -> BTreeSet<String> {
    let is_flag = |token: &str| {
        let name = token.trim_start_matches('-');
        let dashes = token.len() - name.len();
        (dashes == 1 && name.len() == 1 || dashes == 2 && name.len() > 1)
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    let mut flags = BTreeSet::new();
    for line in help.lines().filter(|l| l.trim_start().starts_with('-')) {
        for token in line.split_whitespace() {
            let token = token.trim_end_matches(',');
            if is_flag(token) {
                flags.insert(token.to_owned());
            } else if !token.starts_with('<') && !token.starts_with('[') {
                break;
            }
        }
    }
    flags
}

#[test]
fn every_help_lists_every_flag_the_parser_accepts() {
    let commands = commands();
    assert!(commands.len() >= 15, "{}", commands.len());
    for (path, command) in &commands {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (code, help, err) = natives(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let expected = accepted(command);
        assert!(expected.contains("--help"), "{args:?}");
        assert_eq!(listed(&help), expected, "{args:?}:\n{help}");
    }
}

#[test]
fn grep_help_has_ripgreps_habits() {
    let (_, help, _) = natives(&["grep", "--help"]);
    let flags = listed(&help);
    for flag in [
        "-n",
        "-N",
        "-H",
        "--no-heading",
        "--color",
        "-w",
        "-v",
        "-o",
        "-l",
        "-c",
        "--files",
        "-i",
        "-S",
        "-F",
        "-U",
        "-C",
        "-A",
        "-B",
        "-g",
        "-t",
        "-m",
        "--stats",
    ] {
        assert!(flags.contains(flag), "{flag} missing from\n{help}");
    }
}

#[test]
fn every_command_has_a_version() {
    for (path, _) in commands() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--version");
        let (code, out, err) = natives(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            out.starts_with("natives") && out.trim_end().ends_with(env!("CARGO_PKG_VERSION")),
            "{args:?}: {out}"
        );
    }
}

#[test]
fn misspellings_get_a_suggestion() {
    let table: &[(&[&str], &str)] = &[
        (
            &["glob", "*.rs", "--hiden"],
            "glob: unknown option --hiden (did you mean `--hidden`?)",
        ),
        (
            &["grep", "x", "--word-regex"],
            "(did you mean `--word-regexp`?)",
        ),
        (
            &["grpe", "x"],
            "unknown command `grpe` (did you mean `grep`?)",
        ),
        (
            &["cache", "shwo"],
            "cache: unknown subcommand `shwo` (did you mean `show`?)",
        ),
        (
            &["runs", "shwo", "r1"],
            "runs: unknown subcommand `shwo` (did you mean `show`?)",
        ),
        (
            &["handover", "t1/A", "--to", "r2", "--dryrun"],
            "handover: unknown option --dryrun (did you mean `--dry-run`?)",
        ),
        (
            &["grep", "x", "--color", "alway"],
            "--color takes auto, always or never, got `alway` (did you mean `always`?)",
        ),
    ];
    for &(args, expected) in table {
        let (code, out, err) = natives(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert!(
            err.starts_with("natives: ") && err.contains(expected),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn completions_cover_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, script, err) = natives(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        for word in [
            "glob",
            "grep",
            "find",
            "claims",
            "cache",
            "prune",
            "runs",
            "handover",
            "dry-run",
            "source-evidence",
            "capture",
            "housekeeping",
            "fold",
            "show-seats",
            "restore-seat",
            "word-regexp",
            "only-matching",
        ] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    assert_eq!(natives(&["completions", "tcsh"]).0, 2);
}
